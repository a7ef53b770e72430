"""The report: a static site of every table, claim and run (``make report``, ``rnnbench report``).

``build`` writes the site; ``claims_adapter`` is the one module that reads the claims library;
``pages`` and ``html`` make the HTML; ``markdown`` renders the Markdown files of ``results/``;
``runs_source`` reads your runs. docs/report.md describes the site.
"""
