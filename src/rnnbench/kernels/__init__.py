"""The recurrences ``nn.LSTM``/``nn.GRU`` cannot run, one package per op, one template:

    <op>/__init__.py    the public function <op>(..., impl=None): shape checks, dispatch
    <op>/reference.py   the plain per-step loop: the specification
    <op>/cpu.py, cpu.c  compiled C (where the op has its own)
    <op>/triton.py      Triton kernels (where the op has its own)
    dispatch.py         the implementation names, the fallback policy, shape checks, what ran
    cbuild.py           compiling and caching the C pieces; prelude.h, the C they share

Nothing is imported here, so ``from rnnbench.kernels import gated_scan`` is the op's package.
"""
