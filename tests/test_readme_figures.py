"""The numbers the README states for Example 1 of Wang, Yang, You (2022) are the mathematics, not a past run.

The README's comments give psi*, Gamma* and the binding components. They are checked here against an independent
computation from the paper's optimality conditions for Gaussian arms (Proposition 3.3 and Theorem 3.5): the
binding pairs (1,3), (2,4), (2,5) have equal costs, each component balances its sums of squared allocations
(psi_1^2 = psi_3^2, psi_2^2 = psi_4^2 + psi_5^2), and psi sums to one; solved with scipy's root finder, not by
allocopt. Measured figures (gaps, times) are not in the README: they are written into docs/ by their scripts.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import fsolve

README = Path(__file__).resolve().parent.parent / "README.md"
THETA = np.array([0.51, 0.5, 0.0, -0.01, -0.092])
VARIANCE = 0.25


def _cost(psi: np.ndarray, i: int, j: int) -> float:
    # Gaussian C_ij = (theta_i - theta_j)^2 / (2 sigma^2 (1/psi_i + 1/psi_j)), 0-based arms
    return (THETA[i] - THETA[j]) ** 2 / (2 * VARIANCE * (1 / psi[i] + 1 / psi[j]))


def _conditions(psi: np.ndarray) -> list[float]:
    return [_cost(psi, 0, 2) - _cost(psi, 1, 3), _cost(psi, 1, 3) - _cost(psi, 1, 4), psi[0] - psi[2],
            psi[1] ** 2 - psi[3] ** 2 - psi[4] ** 2, psi.sum() - 1.0]


@pytest.fixture(scope="module")
def example_1() -> tuple[np.ndarray, float]:
    psi = fsolve(_conditions, np.full(5, 0.2), xtol=1e-14)
    assert np.abs(_conditions(psi)).max() < 1e-13
    # the other pairs do not bind: every C_ij with i in {1, 2}, j in {3, 4, 5} is at least Gamma*
    gamma = _cost(psi, 0, 2)
    assert min(_cost(psi, i, j) for i in (0, 1) for j in (2, 3, 4)) >= gamma * (1 - 1e-12)
    return psi, gamma


def _readme_line(marker: str) -> str:
    lines = [line for line in README.read_text().splitlines() if line.startswith(marker)]
    assert len(lines) == 1, f"the README has {len(lines)} lines starting with {marker!r}"
    return lines[0]


def test_readme_psi_and_gamma_star_are_example_1(example_1):
    psi, gamma = example_1
    stated = re.search(r"# \[([^\]]+)\]", _readme_line("result.psi ")).group(1)
    np.testing.assert_allclose([float(value) for value in stated.split(",")], psi, atol=5e-6)
    digits = re.search(r"Gamma\* = (0\.\d+)\.\.\.", _readme_line("result.value ")).group(1)
    assert float(digits) == pytest.approx(gamma, abs=10.0 ** -(len(digits) - 2))


def test_readme_components_are_the_papers():
    # Example 1 of the paper: components {1, 3} and {2, 4, 5} (1-based)
    assert "[((1,), (3,)), ((2,), (4, 5))]" in _readme_line("report.component_indices(one_based=True)")


def test_readme_states_no_measured_gap():
    assert not re.search(r"\d\s*e-\d", _readme_line("result.gap "))
