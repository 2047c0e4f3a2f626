"""Shared pytest configuration.

Reference numbers used in tests cite their source next to them (paper, equation, table, or an independent
computation inside the test).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def rng() -> np.random.Generator:
    """A reproducible generator for tests that draw random instances."""
    return np.random.default_rng(20261121)

