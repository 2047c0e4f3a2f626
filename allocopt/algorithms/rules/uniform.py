"""Uniform sampling: pull a least-pulled arm, chosen uniformly at random among ties (round robin in random order).

Baseline of Wang, Yang, You (2022, Appendix C.3), stopped by the shared Chernoff rule, and of Shahrampour and
Tarokh (2017, Figure 2) at a fixed budget.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.loop import EACH, pick_among
from ..engine.protocol import PullEach, RuleContext, RunView, StepKernel, register_policy
from ..._rng import random_candidate

__all__ = ["Uniform"]


@dataclass(frozen=True)
class Uniform:
    """Uniform allocation: at every step a least-pulled arm, ties broken uniformly at random.

    Sequentially, pull :math:`j` (after the initial pull of every arm) takes the
    :math:`\\lfloor u_j c_j\\rfloor`-th of the :math:`c_j` least-pulled arms (in arm order) with the run's
    :math:`j`-th policy uniform :math:`u_j`. In a fixed-budget run (the budget in the context: the rule is not
    anytime, so the runner passes each budget) one step stands for :math:`K` such pulls and pulls them as one
    block: a whole round, every arm once, or, when fewer than :math:`K` pulls remain, the arms the sequential
    pulls would choose with the same uniforms (the step consumes :math:`K` uniforms, the numbers the :math:`K`
    single steps would read). Rewards come from one stream per arm and each arm gets one reward per block, so the
    counts, the sums and the recommendation at the budget are those of the sequential rule, bit for bit, at
    :math:`K` times fewer steps. In fixed confidence every pull is a step (the stopping rule is checked after
    each).

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
    anytime = False  # each budget in the context: the last block of a run takes the budget's remaining pulls

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 1 if context.budget is None else context.n_arms

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {}

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int | PullEach:
        if context.budget is not None:
            return PullEach(self.block(context, view.counts[None, :], np.asarray(view.t)[None], uniforms[None, :])[0])
        least_pulled = view.counts == view.counts.min()
        return int(random_candidate(least_pulled, uniforms[0]))

    def compiled_step(self, context: RuleContext) -> StepKernel:
        """The step for the engine's compiled loop: :func:`uniform_step` (one pull, or a budget's round)."""
        budget = -1 if context.budget is None else int(context.budget)
        return StepKernel(uniform_step, params=(budget, np.arange(context.n_arms)))

    def block(self, context: RuleContext, counts: np.ndarray, t: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """The pulls of :math:`\\min(K, T - t)` sequential steps from ``counts`` (R, K) with the uniforms (R, K):
        a count per arm and run.

        Examples
        --------
        >>> from allocopt.families import get_family
        >>> context = RuleContext(3, 1, get_family("bernoulli"), np.ones(3), budget=10)
        >>> counts = np.array([[2, 2, 2], [3, 3, 3]])
        >>> Uniform().block(context, counts, np.array([6, 9]), np.array([[0.5, 0.5, 0.5], [0.9, 0.1, 0.1]]))
        array([[1, 1, 1],
               [0, 0, 1]])
        """
        n_arms = context.n_arms
        steps = np.minimum(context.budget_value("Uniform") - np.asarray(t, dtype=np.int64), n_arms)
        each = np.zeros(counts.shape, dtype=np.int64)
        # a whole round from equal counts pulls every arm once, whatever the order
        whole = (steps == n_arms) & np.all(counts == counts[:, :1], axis=1)
        each[whole] = 1
        rest = np.flatnonzero(~whole)
        level = counts[rest].copy()
        for step in range(int(steps[rest].max()) if rest.size else 0):
            local = np.flatnonzero(steps[rest] > step)
            least_pulled = level[local] == level[local].min(axis=1, keepdims=True)
            arms = random_candidate(least_pulled, uniforms[rest[local], step])
            level[local, arms] += 1
            each[rest[local], arms] += 1
        return each


def uniform_step(row, view, state, params, uniforms, each):
    """:meth:`Uniform.select` compiled: a least-pulled arm; with a budget, the min(K, T - t) sequential pulls of
    :meth:`Uniform.block` as one block (a whole round from equal counts)."""
    budget, arms = params
    if budget < 0:
        return pick_among(arms, view.counts, False, uniforms[0]), 1
    level = view.counts.copy()
    each[:] = 0
    for step in range(min(budget - view.t, view.counts.shape[0])):
        arm = pick_among(arms, level, False, uniforms[step])
        level[arm] += 1
        each[arm] += 1
    return EACH, 0


register_policy("uniform", Uniform)
