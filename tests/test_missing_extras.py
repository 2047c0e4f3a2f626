"""A missing optional dependency is a MissingDependencyError that names the extra (issue 32, part 3)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from allocopt.exceptions import MissingDependencyError


@pytest.fixture
def without_matplotlib(monkeypatch):
    """matplotlib not importable (a plain ``pip install``): a None entry in sys.modules makes import fail."""
    for name in [name for name in sys.modules if name == "matplotlib" or name.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)


def test_every_layers_plots_name_the_plot_extra(without_matplotlib):
    from allocopt.algorithms.plotting import plot_allocations
    from allocopt.cbmai import CBMAIProblem
    from allocopt.cbmai.plotting import plot_iv_scores
    from allocopt.topk.plotting import plot_convergence

    psi = np.full(3, 1 / 3)
    calls = [lambda: plot_convergence({}), lambda: plot_allocations({"uniform": psi}, psi),
             lambda: plot_iv_scores(CBMAIProblem([1.0, 2.0], np.ones((1, 2)), [1.0]))]
    for call in calls:
        with pytest.raises(MissingDependencyError, match=r'pip install "allocopt\[plot\]"'):
            call()
