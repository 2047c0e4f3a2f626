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


@pytest.fixture
def count_hand_backs(monkeypatch):
    """Count the times a compiled run loop hands its rows back to Python.

    ``count_hand_backs(module, table_name, key="table")`` wraps the driver's refill
    (:func:`allocopt.algorithms._compiled_loop.refill_rows`: rows that need rewards, rows that need policy uniforms)
    and ``module.<table_name>`` (the function that extends the loop's threshold or rate table), and returns the
    dict of counts ``{"reward": ..., "uniforms": ..., key: ...}``, filled while the test runs the loop.
    """

    from allocopt.algorithms import _compiled_loop

    def install(module, table_name: str, key: str = "table") -> dict[str, int]:
        counts = {"reward": 0, "uniforms": 0, key: 0}
        refill, table = _compiled_loop.refill_rows, getattr(module, table_name)

        def counted_refill(rows, need_reward, need_uniforms, *args):
            counts["reward"] += int(need_reward.sum())
            counts["uniforms"] += int(need_uniforms.sum())
            refill(rows, need_reward, need_uniforms, *args)

        def counted_table(*args):
            counts[key] += 1
            return table(*args)

        monkeypatch.setattr(_compiled_loop, "refill_rows", counted_refill)
        monkeypatch.setattr(module, table_name, counted_table)
        return counts

    return install
