"""The examples in the engine's docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "allocopt.algorithms.statistics",
    "allocopt.algorithms.stopping",
    "allocopt.algorithms.uniform",
    "allocopt.algorithms.kkt_ts",
    "allocopt.algorithms.track_and_stop",
    "allocopt.algorithms.identify",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
