"""Versions of what a run's result depends on, beyond the encoder, head and reader classes.

Each of those classes has a ``version`` attribute; this module versions the shared
training pipeline. Bump a version in the same commit as any change that alters
results (never for a refactor that keeps numerics identical): it is part of every
run's identity (``rnnbench.results.identity``), so the runs it affects move to new
folders and tables refuse to mix them with runs of the old version.
"""

# The training loop, batching, vocabulary, embedding alignment and evaluation. Not bumped for the
# patience rule (results/patience.py: patience counts from the first epoch that beats the majority-class
# baseline): it changes only runs that never beat it before early stopping ended them. Those are found
# from their dev curves (status "needs re-run") and run again by make_table; every other run is what
# the rule produces, so finished runs keep their identity.
TRAINING = 1
