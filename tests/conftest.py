"""Shared pytest configuration.

Reference numbers used in tests cite their source next to them (paper, equation, table, or an independent
computation inside the test).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_addoption(parser):
    parser.addoption("--perturb-transcendentals", action="store_true", default=False,
                     help="move numpy's log, exp and relatives by one ulp on half of their inputs, as numpy's "
                          "AVX-512 code differs from the C library's (tests/transcendental_perturbation.py)")


def pytest_configure(config):
    if config.getoption("--perturb-transcendentals"):
        from transcendental_perturbation import install

        install()


@pytest.fixture
def rng() -> np.random.Generator:
    """A reproducible generator for tests that draw random instances."""
    return np.random.default_rng(20261121)
