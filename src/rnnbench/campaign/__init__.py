"""The campaign engine: a paper table's runs under the comparison protocol, and the table made from them.

- ``definitions``: which experiment configs make a table, in which order (one definition per table);
- ``jobs``: each run composed once into its config, and what is known of it (record, status);
- ``rates``: each encoder's learning rate, chosen on its selection runs;
- ``pricing``: CPU hours of what is left (``--plan``) and the ``--until`` deadline;
- ``runner``: running what is missing, behind the sanity gate;
- ``reruns``: a run folder whose identity matches committed rows with other numbers (another
  processor kind): kept apart from, or with ``--replace-committed`` replacing, the committed rows;
- ``assemble``: the evidence rows, the footnotes and the written table;
- ``make``: ``make_table``, all of the above as one call (``rnnbench table``, scripts/make_table.py).
- ``ladder``: the regime ladder, each complete-data table's reference row on rungs toward the
  paper's setting (``rnnbench ladder``), with ``ladder_rungs`` (what each rung adds) and
  ``ladder_page`` (results/regime_ladder.md from its CSV).
- ``sweep``: a declared mechanism sweep (``rnnbench sweep``), with ``sweep_rule`` and ``sweep_page``;
  ``one_run``: a run of the ladder or a sweep trained, its outcome said in one line.

Submodules are imported where used (``from rnnbench.campaign.make import make_table``): the
package itself imports nothing, so the configs' reader (``definitions``) stays cheap to load.
"""
