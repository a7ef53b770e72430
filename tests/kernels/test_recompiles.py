"""Integer arguments that change from call to call are not specialised by Triton, so a kernel is
compiled once per configuration, not again inside a timed step (FHE's sampled gates change its row
counts every call). Checked on the real JIT (not the interpreter), in a subprocess: no GPU needed."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("triton")

PROBE = """
import json
from rnnbench.kernels.multi_lstm import triton as cell
from rnnbench.kernels.fhe_upper import triton as carry
from rnnbench.kernels.multi_lstm import persistent
kernels = {"cell forward": cell._forward_kernel, "cell backward": cell._backward_kernel,
           "carry forward": carry._carry_forward_kernel, "carry backward": carry._carry_backward_kernel,
           "persistent forward": persistent._forward_kernel, "persistent backward": persistent._backward_kernel}
out = {}
for name, k in kernels.items():
    fn = k.fn
    out[name] = sorted(fn.arg_names[i] if isinstance(i, int) else i for i in fn.do_not_specialize)
print(json.dumps(out))
"""


def test_row_counts_and_open_gate_counts_are_not_specialised():
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    unspecialised = json.loads(done.stdout.strip().splitlines()[-1])
    assert unspecialised == {"cell forward": ["n"], "cell backward": ["m_rec", "n"],
                             "carry forward": ["S"], "carry backward": ["S"],
                             "persistent forward": ["B", "T"], "persistent backward": ["B", "T"]}
