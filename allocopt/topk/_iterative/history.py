"""Bookkeeping shared by the iterative solvers (FWGA and KKT-Tracking): per-iteration certified gaps."""

from __future__ import annotations

import numpy as np

from ..pairs import PairTerms
from ..certificate import certified_gap
from ..result import IterationHistory

__all__ = ["GapRecorder"]


class GapRecorder:
    r"""Records :math:`\Gamma(\psi_t)` and :math:`U(\mu_t, \psi_t)` for each iterate.

    ``record`` receives the all-pairs terms at :math:`\psi_t` (which the solvers compute anyway to pick the
    next pair) and the multipliers :math:`\mu_t` (any nonnegative matrix; normalised here), so the certified
    gap costs a few vector operations per iteration.
    """

    def __init__(self, capacity: int, relative_error: float, terms: int):
        # the instance's evaluation error and the number of terms of the largest per-arm sum (certified_gap)
        self.relative_error, self.terms = relative_error, terms
        self.values = np.empty(capacity)
        self.bounds = np.empty(capacity)
        self.count = 0

    def record(self, terms: PairTerms, mu: np.ndarray, mu_total: float) -> tuple[float, float]:
        value = float(terms.cost.min())
        # per-arm sums left to right (cumsum), the order of the compiled twin of KKT-Tracking
        top_sums = np.cumsum(mu * terms.grad_top, axis=1)[:, -1]
        bottom_sums = np.cumsum(mu * terms.grad_bottom, axis=0)[-1]
        bound = float(max(top_sums.max(), bottom_sums.max())) / mu_total
        self.values[self.count] = value
        self.bounds[self.count] = bound
        self.count += 1
        return value, bound

    def certified_gap(self, value: float, bound: float) -> float:
        return certified_gap(bound, value, self.relative_error, self.terms)

    def history(self) -> IterationHistory:
        values = self.values[: self.count]
        bounds = self.bounds[: self.count]
        return IterationHistory(iteration=np.arange(1, self.count + 1), value=values, upper_bound=bounds,
                                gap=certified_gap(bounds, values, self.relative_error, self.terms))
