"""ClassifierHead: the RCRN default (pooling, dense layer) pinned, and the LSTM baseline paper's
options (final-state readout, no dense layer)."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from rnnbench.compose import compose_config
from rnnbench.data.batching import collate
from rnnbench.encoders.lstm import LSTMEncoder
from rnnbench.errors import ConfigError
from rnnbench.heads.classifier import ClassifierHead, final_states

EMB, VOCAB, CLASSES = 6, 30, 3
RAGGED = [{"id": "a", "tokens": [3, 4, 5, 6], "label": 1}, {"id": "b", "tokens": [7, 8], "label": 2},
          {"id": "c", "tokens": [9, 10, 11], "label": 0}]


def _run(bidirectional: bool = True, layers: int = 1, **head_options):
    torch.manual_seed(0)
    embedding = nn.Embedding(VOCAB, EMB, padding_idx=0)
    encoder = LSTMEncoder(EMB, hidden_size=5, num_layers=layers, bidirectional=bidirectional)
    head = ClassifierHead(EMB, encoder.output_size, CLASSES, **head_options)
    batch = collate(RAGGED, ["tokens"])
    return head(batch, embedding, encoder), head, embedding, encoder


# Logits of the head as it was before the readout/hidden options (commit e5d9d39), same seed and batch.
PINNED = {
    "default": ([[0.04322190582752228, 0.027814824134111404, 0.027981862425804138],
                 [0.02539534494280815, 0.004031606018543243, 0.060171905905008316],
                 [0.016772698611021042, -0.03907143697142601, 0.023824496194720268]], 1.085048794746399),
    "embed_avg_pool": ([[-0.07478184998035431, 0.0023143067955970764, 0.10225023329257965],
                        [-0.09473331272602081, -0.06283336877822876, 0.14860135316848755],
                        [-0.06944999098777771, -0.02088329568505287, 0.08850899338722229]], 1.0771657228469849),
}


@pytest.mark.parametrize("case", sorted(PINNED))
def test_defaults_keep_the_earlier_numbers(case):
    out, head, _, _ = _run(**({"embed_avg_pool": True} if case == "embed_avg_pool" else {}))
    logits, loss = PINNED[case]
    torch.testing.assert_close(out.logits, torch.tensor(logits), rtol=0, atol=1e-6)
    assert out.loss.item() == pytest.approx(loss, abs=1e-6)
    assert head.readout == "pool" and isinstance(head.dense[0], nn.Linear) and head.dense[0].out_features == 200


def test_final_readout_is_each_sequences_last_real_state_forward_only():
    torch.manual_seed(0)
    encoder = LSTMEncoder(EMB, hidden_size=5, num_layers=2, bidirectional=False).eval()
    x = torch.randn(3, 6, EMB)
    lengths = [6, 2, 4]
    mask = torch.arange(6).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    got = final_states(encoder(x, mask).states, mask, bidirectional=False)
    for i, n in enumerate(lengths):  # each sequence alone, unpadded
        alone = encoder(x[i : i + 1, :n], torch.ones(1, n, dtype=torch.bool)).states
        torch.testing.assert_close(got[i], alone[0, n - 1])


def test_final_readout_of_a_bilstm_is_nn_lstm_final_hidden_state():
    """Forward state at the last real position beside the backward state at the first: what
    nn.LSTM returns as h_n for a packed ragged batch."""
    torch.manual_seed(0)
    encoder = LSTMEncoder(EMB, hidden_size=5, num_layers=1, bidirectional=True).eval()
    x = torch.randn(3, 6, EMB)
    lengths = torch.tensor([6, 2, 4])
    mask = torch.arange(6).unsqueeze(0) < lengths.unsqueeze(1)
    got = final_states(encoder(x, mask).states, mask, bidirectional=True)
    rnn = encoder.layers[0].rnn
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    _, (h_n, _) = rnn(packed)
    torch.testing.assert_close(got, torch.cat([h_n[0], h_n[1]], dim=-1))


def test_final_readout_through_the_head_ignores_padding():
    out, head, embedding, encoder = _run(readout="final", hidden=0)
    for i, record in enumerate(RAGGED):  # each example alone gives the same logits as in the ragged batch
        alone = head(collate([record], ["tokens"]), embedding, encoder)
        torch.testing.assert_close(alone.logits[0], out.logits[i])
    assert head.out.in_features == encoder.output_size  # one final state per direction, no pooling list


def test_hidden_zero_has_no_dense_layer():
    _, head, _, encoder = _run(hidden=0, pooling=["max", "mean"])
    assert head.dense is None
    assert [m for m in head.modules() if isinstance(m, nn.Linear)] == [head.out]
    assert head.out.in_features == 2 * encoder.output_size
    _, head, _, encoder = _run(hidden=0, readout="final", embed_avg_pool=True)
    assert head.out.in_features == encoder.output_size + 300  # the embed average MLP's output is concatenated


def test_bad_options_are_one_line_config_errors():
    with pytest.raises(ConfigError, match="task.head.readout='last'"):
        ClassifierHead(EMB, 10, CLASSES, readout="last")
    with pytest.raises(ConfigError, match="task.head.hidden=-1"):
        ClassifierHead(EMB, 10, CLASSES, hidden=-1)


def test_options_compose_from_the_command_line():
    cfg = compose_config(["task=sst5", "encoder=2l_lstm", "task.head.readout=final", "task.head.hidden=0"])
    assert cfg.task.head.readout == "final" and cfg.task.head.hidden == 0 and cfg.encoder.num_layers == 2


def test_embed_average_pooling_reads_the_word_vectors_the_encoder_read():
    """The baseline paper (section 4): "the same dropout mask to the word vectors when passing
    them to the RNN as when averaging them". In training mode with input dropout, the pooled
    mean is the mean of the dropped-out vectors the first recurrent layer read, not of the
    clean ones (which left the LSTM path unused: the MLP learned from clean inputs alone)."""
    from rnnbench.heads.base import masked_mean

    torch.manual_seed(0)
    embedding = nn.Embedding(VOCAB, EMB, padding_idx=0)
    for directions_meet in ("every_layer", "top"):
        encoder = LSTMEncoder(EMB, hidden_size=5, num_layers=2, bidirectional=True, dropout=0.5,
                              shared_weights=directions_meet == "top", directions_meet=directions_meet)
        head = ClassifierHead(EMB, encoder.output_size, CLASSES, embed_avg_pool=True)
        batch = collate(RAGGED, ["tokens"])
        seen = {"rnn": [], "mlp": []}
        encoder.layers[0].register_forward_pre_hook(lambda m, args, kwargs: seen["rnn"].append(args[0]), with_kwargs=True)
        head.embed_avg[0].register_forward_pre_hook(lambda m, args: seen["mlp"].append(args[0]))
        head.train(), encoder.train()
        head(batch, embedding, encoder)
        mask = batch["tokens_mask"]
        clean = masked_mean(embedding(batch["tokens"]), mask)
        torch.testing.assert_close(seen["mlp"][0], masked_mean(seen["rnn"][0], mask), rtol=0, atol=1e-6)
        assert not torch.allclose(seen["mlp"][0], clean), "dropout must act on the averaged vectors in training"
        if directions_meet == "top":
            # The backward pass (shared weights: the same first layer, called again) reads the
            # same dropped-out vectors, reversed within each sequence.
            from rnnbench.encoders.base import lengths_of, reverse_padded
            assert len(seen["rnn"]) == 2
            torch.testing.assert_close(seen["rnn"][1], reverse_padded(seen["rnn"][0], lengths_of(mask)), rtol=0, atol=0)


def test_the_fixed_options_move_to_a_new_component_version_and_the_rest_keep_theirs():
    assert ClassifierHead.version_for({"embed_avg_pool": True}) == 2
    assert ClassifierHead.version_for({"hidden": 0}) == 1
    assert LSTMEncoder.version_for({"residual": "v2"}) == 3
    assert LSTMEncoder.version_for({"directions_meet": "top", "dropout": 0.5, "bidirectional": True}) == 3
    assert LSTMEncoder.version_for({"directions_meet": "top", "dropout": 0.0, "bidirectional": True}) == 2
    assert LSTMEncoder.version_for({"residual": "v1", "dropout": 0.5}) == 2
