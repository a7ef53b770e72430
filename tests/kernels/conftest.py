"""Fixtures shared by the kernel tests."""
from __future__ import annotations

import pytest
import torch


@pytest.fixture
def nan_allocations(monkeypatch):
    """Every floating tensor allocated with torch.empty(_like) starts as NaN, so an
    output element an implementation fails to write shows up as NaN."""
    empty, empty_like = torch.empty, torch.empty_like

    def poisoned(allocate):
        def allocate_nan(*args, **kwargs):
            t = allocate(*args, **kwargs)
            return t.fill_(float("nan")) if t.is_floating_point() else t

        return allocate_nan

    monkeypatch.setattr(torch, "empty", poisoned(empty))
    monkeypatch.setattr(torch, "empty_like", poisoned(empty_like))
