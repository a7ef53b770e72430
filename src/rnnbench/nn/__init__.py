"""Layers shared by heads and encoders (as AllenNLP's ``nn/util.py`` and ``modules/``):
masked softmax and pooling (``util``), highway layers (``highway``), a packed BiLSTM (``rnn``)."""
