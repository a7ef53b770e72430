"""The DCU paper's "No Encoder" row: the inputs themselves, padding zeroed (the contract tests cover the rest)."""
import torch

from rnnbench.compose import compose_config
from rnnbench.encoders.build import build_encoder


def test_the_states_are_the_inputs_and_the_width_is_the_inputs():
    cfg = compose_config(["encoder=none", "experiment=dcu_table1_small"])  # an experiment sizing every row: 100
    enc = build_encoder(cfg.encoder, 7)
    assert enc.output_size == 7 and enc.num_parameters() == 0 and enc.causal
    x = torch.randn(2, 4, 7)
    mask = torch.tensor([[True, True, True, False], [True, False, False, False]])
    x[~mask] = 1e6  # padding may hold anything finite
    states = enc(x, mask).states
    assert torch.equal(states[mask], x[mask]) and torch.all(states[~mask] == 0)
