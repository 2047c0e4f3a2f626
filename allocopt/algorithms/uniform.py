"""Uniform sampling: pull a least-pulled arm, chosen uniformly at random among ties (round robin in random order).

Baseline of Wang, Yang, You (2022, Appendix C.3), stopped by the shared Chernoff rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .protocol import RuleContext, RunView, register_policy
from .._rng import random_candidate

__all__ = ["Uniform"]


@dataclass(frozen=True)
class Uniform:
    """Uniform allocation: at every step a least-pulled arm, ties broken uniformly at random.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.5, 0.0], k=1, variance=0.25)
    >>> result = identify(problem, Uniform(), delta=0.1, n_runs=20, rng=1)
    >>> bool(result.correct.mean() >= 0.9)
    True
    """

    name = "uniform"
    uses_glr = False
    uses_empirical_top = False

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 1

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {}

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        least_pulled = view.counts == view.counts.min()
        return int(random_candidate(least_pulled, uniforms[0]))

    def select_batch(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> np.ndarray:
        least_pulled = view.counts == view.counts.min(axis=1, keepdims=True)
        return random_candidate(least_pulled, uniforms[:, 0])


register_policy("uniform", Uniform)
