r"""KKT Thompson Sampling (Wang, Yang, You 2022, Algorithm 2).

At step :math:`t`, with counts :math:`N` and :math:`\psi_t = N/t`:

1. sample :math:`\tilde\theta_t \sim \pi_t` (the posterior, :mod:`allocopt.algorithms.statistics`);
2. :math:`\tilde I_t` = the top-k of :math:`\tilde\theta_t`, :math:`\tilde J_t` the other arms;
3. :math:`(i_t, j_t) = \arg\min_{i \in \tilde I_t, j \in \tilde J_t} \tilde C_{t,ij}(\psi_t)`, the pair
   costs at :math:`\tilde\theta_t` (ties broken uniformly at random);
4. pull :math:`i_t` with probability :math:`\tilde h_{t,i;j} = \psi_i \partial_{\psi_i}\tilde C_{ij} /
   \tilde C_{ij}` and :math:`j_t` otherwise.

``kind="budget"`` uses :math:`B_{ij}` in place of :math:`C_{ij}` (the paper's fixed-budget variant). The
costs are 1-homogeneous and :math:`h` is scale-free, so they are evaluated at the counts :math:`N` (effective
weights :math:`N_a/\phi_a`) rather than at :math:`N/t`: the pair and the probability are the same. Each step
consumes K + 2 uniforms: K for the posterior sample, one for the tie-break among minimal pairs, one for the
coin.

``select`` is the step of one run, line by line; ``select_batch`` the same step for many runs, through a
compiled kernel for Gaussian arms (:func:`allocopt.algorithms._compiled.gaussian_kkt_ts_arms`), through a
compiled kernel after the posterior sample for the families with a compiled pair kernel
(:func:`allocopt.algorithms._compiled_family_kkt_ts.family_kkt_ts_arms`) and through their numpy twin
``select_batch_numpy`` otherwise. All choose the same arms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from .._validation import as_choice
from ..topk.pairs import KINDS
from ._compiled import compiled_enabled, gaussian_kkt_ts_arms
from ._compiled_family_kkt_ts import family_kkt_ts_arms
from ._pair_kernels import pair_cost_grid, pull_probability, sort_arms
from .protocol import RuleContext, RunView, register_policy
from .._rng import random_candidate
from .statistics import posterior_sample

__all__ = ["KKTTS"]


@dataclass(frozen=True)
class KKTTS:
    """KKT Thompson Sampling.

    Parameters
    ----------
    kind : {"confidence", "budget"}
        Pair costs :math:`C_{ij}` (fixed confidence) or :math:`B_{ij}` (fixed budget).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.9, 0.3, 0.2], k=2, variance=0.25)
    >>> result = identify(problem, KKTTS(), delta=0.01, n_runs=20, rng=3)
    >>> bool(result.correct.all())
    True
    """

    kind: str = "confidence"
    name = "kkt-ts"
    uses_glr = False

    def __post_init__(self):
        as_choice(self.kind, "KKTTS", "kind", KINDS)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return context.n_arms + 2

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {}

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        n_arms, k = context.n_arms, context.k
        # 1. theta~ from the posterior
        theta = posterior_sample(context.family, context.dispersion, view.counts, view.sums, uniforms[:n_arms])
        # 2. I~ and J~
        arms = sort_arms(theta, view.counts / context.dispersion, k)
        top, bottom = arms.top, arms.bottom
        # 3. the pair of minimal cost at theta~ and psi_t (evaluated at the counts: costs are homogeneous)
        cost, grad_top = pair_cost_grid(context.family, self.kind, arms)
        flat = cost.ravel()
        pair = int(random_candidate(flat == flat.min(), uniforms[n_arms]))
        row, col = divmod(pair, n_arms - k)
        # 4. pull i with probability h_{i;j}, else j
        h = pull_probability(context.family, cost[row, col], None if grad_top is None else grad_top[row, col],
                             arms.weight_top[row, 0], arms.weight_bottom[0, col])
        return int(top[row]) if uniforms[n_arms + 1] < h else int(bottom[col])

    def select_batch(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> np.ndarray:
        n_arms, k = context.n_arms, context.k
        # harmonic costs (Gaussian arms, whose posterior is Gaussian): the compiled kernel
        if context.family.harmonic_costs(self.kind) and compiled_enabled():
            return gaussian_kkt_ts_arms(context.dispersion, view.counts, view.sums, k,
                                        special.ndtri(uniforms[:, :n_arms]), uniforms[:, n_arms],
                                        uniforms[:, n_arms + 1])
        # families with a compiled pair kernel (Bernoulli, Poisson, exponential): the compiled step after the
        # posterior sample
        arms = family_kkt_ts_arms(context.family, self.kind, context.dispersion, view.counts, view.sums, k, uniforms)
        if arms is not None:
            return arms
        return self.select_batch_numpy(context, view, state, uniforms)

    def select_batch_numpy(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> np.ndarray:
        """:meth:`select_batch` in numpy for every family (the twin of the compiled kernels
        :func:`allocopt.algorithms._compiled.gaussian_kkt_ts_arms` and
        :func:`allocopt.algorithms._compiled_family_kkt_ts.family_kkt_ts_arms`)."""
        n_arms, k = context.n_arms, context.k
        n_bottom = n_arms - k
        theta = posterior_sample(context.family, context.dispersion, view.counts, view.sums, uniforms[:, :n_arms])
        arms = sort_arms(theta, view.counts / context.dispersion, k)
        cost, grad_top = pair_cost_grid(context.family, self.kind, arms)
        flat = cost.reshape(-1, k * n_bottom)
        pair = random_candidate(flat == flat.min(axis=1, keepdims=True), uniforms[:, n_arms])
        row, col = pair // n_bottom, pair % n_bottom
        runs = np.arange(flat.shape[0])
        h = pull_probability(context.family, flat[runs, pair],
                             None if grad_top is None else grad_top.reshape(-1, k * n_bottom)[runs, pair],
                             arms.weight_top[runs, row, 0], arms.weight_bottom[runs, 0, col])
        return np.where(uniforms[:, n_arms + 1] < h, arms.top[runs, row], arms.bottom[runs, col])


register_policy("kkt-ts", KKTTS)
