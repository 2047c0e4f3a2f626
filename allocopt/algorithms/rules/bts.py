r"""BTS: KKT Thompson sampling restricted to the double star of Theorem 3.4 (Wang, Yang, You 2022, Appendix D).

Theorem 3.4 describes the optimal allocation when every pair containing the worst top arm :math:`i_k` or the
best bottom arm :math:`j_1` binds and the double star they form balances (condition (16)). BTS tracks these
sufficient conditions as if they always held (assuming condition (14)). At step :math:`t`, with counts :math:`N`
and :math:`\psi_t = N/t`:

1. sample :math:`\tilde\theta_t \sim \pi_t`; :math:`\tilde I_t` its top-k, :math:`\tilde J_t` the other arms,
   :math:`\tilde\imath_k` the worst arm of :math:`\tilde I_t` and :math:`\tilde\jmath_1` the best of
   :math:`\tilde J_t`;
2. :math:`(i_t, j_t) = \arg\min \tilde C_{ij}(\psi_t)` over the :math:`K - 1` pairs :math:`(\tilde\imath_k, j)`,
   :math:`j \in \tilde J_t`, and :math:`(i, \tilde\jmath_1)`, :math:`i \in \tilde I_t` (ties at random), instead of
   KKT-TS's :math:`k(K-k)` pairs;
3. pull the arm of the pair that moves the double star towards the balance (16): with the double star's left
   null vector :math:`z` (``allocopt.topk.structure``; :math:`z_{\tilde\imath_k} = 1`,
   :math:`z_j = -\partial_{\tilde\imath_k}\tilde C_{\tilde\imath_k j} / \partial_j\tilde C_{\tilde\imath_k j}` for
   :math:`j \in \tilde J_t`, :math:`z_i = -z_{\tilde\jmath_1}\,\partial_{\tilde\jmath_1}\tilde C_{i\tilde\jmath_1} /
   \partial_i\tilde C_{i\tilde\jmath_1}` for the other top arms), pull :math:`i_t` if
   :math:`\sum_{a \in \tilde I_t} z_a < \sum_{a \in \tilde J_t} |z_a|` (the top side is short), else :math:`j_t`.
   For Gaussian arms :math:`|z_a| \propto \psi_a^2/\sigma_a^2`: (16) is the balance of the sums of squared
   allocations (Remark 4), and the rule is OCBAss's balance step on the posterior sample's sets.

If a derivative vanishes (a sample tied across the boundary, where the ratios are undefined) the rule uses the
sum-of-squares comparison of the counts, :math:`\sum_{\tilde I_t} N_a^2/\sigma_a^2 < \sum_{\tilde J_t}
N_a^2/\sigma_a^2` (:math:`\sigma_a^2 = 1` outside the Gaussian family). ``kind="budget"`` uses :math:`B_{ij}`
in place of :math:`C_{ij}` (as KKT-TS does). Each step consumes K + 1 uniforms: the posterior sample and the
tie-break among minimal pairs.

``select`` is the rule's step for one run, written like the paper's pseudo-code: the specification, and what runs with
the compiled kernels off, for ``batched=False``, or for a family the compiled step does not cover. ``compiled_step``
gives the same step compiled (:func:`bts_step`) for the engine's compiled loop; the tests compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from typing import Any, NamedTuple

from ...families import kernels as _compiled_families
from ..._numba import kernel
from ..._rng import random_candidate
from ..._special import special_functions
from ..._validation import as_choice
from ...topk.pairs import KINDS, pair_terms
from ..engine.loop import split_top_k
from ..engine._pair_kernels import gather
from ..engine.protocol import RuleContext, RunView, StepKernel, register_policy
from ..engine.statistics import posterior_kind, posterior_quantile, posterior_sample, sequential_sum, top_k_order

__all__ = ["BTS", "double_star"]


def double_star(theta: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""The K - 1 pairs of the double star of ``theta`` (last axis; one run (K,) or a batch (R, K)).

    Returns the pairs' top arms and bottom arms (shape (..., K-1)): first :math:`(i_k, j)` for the bottom arms
    :math:`j` in increasing arm order, then :math:`(i, j_1)` for the other top arms in increasing arm order,
    and the top-k and the other arms.
    """
    n_arms = theta.shape[-1]
    top, bottom = top_k_order(theta, k)
    theta_top, theta_bottom = gather(theta, top), gather(theta, bottom)
    worst_top = np.take_along_axis(top, np.argmin(theta_top, axis=-1)[..., None], axis=-1)
    best_bottom = np.take_along_axis(bottom, np.argmax(theta_bottom, axis=-1)[..., None], axis=-1)
    other_top = top[top != worst_top].reshape(top.shape[:-1] + (k - 1,))
    shape = top.shape[:-1]
    pair_top = np.concatenate([np.broadcast_to(worst_top, shape + (n_arms - k,)), other_top], axis=-1)
    pair_bottom = np.concatenate([bottom, np.broadcast_to(best_bottom, shape + (k - 1,))], axis=-1)
    return pair_top, pair_bottom, top, bottom


@dataclass(frozen=True)
class BTS:
    """KKT Thompson sampling on Theorem 3.4's double star with the balance (16) (module docstring).

    Parameters
    ----------
    kind : {"confidence", "budget"}
        Pair costs :math:`C_{ij}` or :math:`B_{ij}`.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.9, 0.3, 0.2], k=2, variance=0.25)
    >>> bool(identify(problem, BTS(), delta=0.01, n_runs=10, rng=3).correct.all())
    True
    """

    kind: str = "confidence"
    name = "bts"
    uses_glr = False

    def __post_init__(self):
        as_choice(self.kind, "BTS", "kind", KINDS)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return context.n_arms + 1

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {}

    def _pair_and_side(self, context: RuleContext, counts: np.ndarray, sums: np.ndarray, uniforms: np.ndarray):
        n_arms, k = context.n_arms, context.k
        family, dispersion = context.family, context.dispersion
        # 1. theta~ and its double star
        theta = posterior_sample(family, dispersion, counts, sums, uniforms[..., :n_arms])
        pair_top, pair_bottom, top, bottom = double_star(theta, k)
        # 2. the pair of minimal cost among the K - 1 pairs of the double star
        weights = counts / dispersion
        theta_top, theta_bottom = gather(theta, pair_top), gather(theta, pair_bottom)
        eta_top = eta_bottom = None
        if self.kind == "budget":
            eta_top, eta_bottom = family.unit_natural(theta_top), family.unit_natural(theta_bottom)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = pair_terms(family, self.kind, theta_top, theta_bottom, eta_top, eta_bottom,
                               gather(weights, pair_top), gather(weights, pair_bottom))
        cost = np.where(np.isnan(terms.cost), 0.0, terms.cost)
        pair = random_candidate(cost == cost.min(axis=-1, keepdims=True), uniforms[..., n_arms])
        chosen_top = np.take_along_axis(pair_top, np.asarray(pair)[..., None], axis=-1)[..., 0]
        chosen_bottom = np.take_along_axis(pair_bottom, np.asarray(pair)[..., None], axis=-1)[..., 0]
        # 3. the balance (16) of the double star: derivatives in psi (grad in weights over dispersion)
        grad_top = terms.grad_top / gather(dispersion * np.ones_like(weights), pair_top)
        grad_bottom = terms.grad_bottom / gather(dispersion * np.ones_like(weights), pair_bottom)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = grad_top / grad_bottom  # (i_k, j): -z_j / z_{i_k};  (i, j_1): z_{j_1} / z_i
        n_bottom = n_arms - k
        star_bottom = ratio[..., :n_bottom]  # |z_j| for j in J~ (z_{i_k} = 1)
        best_bottom_position = np.argmax(gather(theta, bottom), axis=-1)
        z_best_bottom = np.take_along_axis(star_bottom, best_bottom_position[..., None], axis=-1)
        star_top = z_best_bottom / ratio[..., n_bottom:]  # z_i = |z_{j_1}| d_{j_1} C / d_i C
        top_side = 1.0 + sequential_sum(star_top)  # sums left to right, as the compiled step adds
        bottom_side = sequential_sum(star_bottom)
        squares = counts.astype(float) ** 2 / dispersion
        fallback_top = sequential_sum(gather(squares, top)) < sequential_sum(gather(squares, bottom))
        finite = np.isfinite(top_side) & np.isfinite(bottom_side) & (bottom_side > 0)
        pull_top = np.where(finite, top_side < bottom_side, fallback_top)
        return chosen_top, chosen_bottom, pull_top

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`bts_step` for the engine's compiled loop (None for a family without a posterior sampler or a
        compiled pair kernel: the step then runs in Python)."""
        posterior = posterior_kind(context.family)
        pair = _compiled_families.kernel_code(context.family.compiled_pair(self.kind))
        if posterior is None or pair is None:
            return None
        n_arms = context.n_arms
        return StepKernel(bts_step, params=BTSParams(
            context.k, posterior[0], posterior[1], posterior[2], int(pair),
            np.ascontiguousarray(np.broadcast_to(context.dispersion, (n_arms,)), dtype=float), special_functions(),
            np.empty((5, n_arms)), np.empty(3 * n_arms, dtype=np.int64), np.empty(n_arms, dtype=np.bool_)))

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        i, j, pull_top = self._pair_and_side(context, view.counts, view.sums, uniforms)
        return int(i) if pull_top else int(j)

class BTSParams(NamedTuple):
    """What :func:`bts_step` reads: k, the posterior's number and clip bounds, the pair kernel's number, the
    dispersion, scipy.special's functions and work arrays."""

    k: int
    posterior: int
    low: float
    high: float
    pair: int
    dispersion: np.ndarray
    special: Any
    work: np.ndarray  # (5, K): theta~, its weights, the star's costs, their ratios, the insertion top-k's values
    arms: np.ndarray  # (3K,): top, bottom, the insertion top-k's arms
    member: np.ndarray  # (K,)


def bts_step(row, view, state, params, uniforms, each):
    """:meth:`BTS.select` compiled: the K - 1 pairs of theta~'s double star, a cheapest one, and the side the
    balance (16) says is short."""
    counts, k = view.counts, params.k
    n_arms = counts.shape[0]
    n_bottom = n_arms - k
    theta, weight, cost, ratio = params.work[0], params.work[1], params.work[2], params.work[3]
    top, bottom = params.arms[:k], params.arms[k:n_arms]
    for arm in range(n_arms):
        theta[arm] = posterior_quantile(params.posterior, counts[arm], view.sums[arm], params.dispersion[arm],
                                        uniforms[arm], params.special, params.low, params.high)
        weight[arm] = counts[arm] / params.dispersion[arm]
    split_top_k(theta, k, top, bottom, params.work[4], params.arms[n_arms:n_arms + k], params.member)
    worst_top, best_position = top[0], 0
    for i in range(1, k):  # numpy's argmin / argmax: the first extreme
        if theta[top[i]] < theta[worst_top]:
            worst_top = top[i]
    for j in range(1, n_bottom):
        if theta[bottom[j]] > theta[bottom[best_position]]:
            best_position = j
    best_bottom = bottom[best_position]
    # the double star's pairs: (i_k, j) for the bottom arms, then (i, j_1) for the other top arms
    smallest, position = np.inf, 0
    for pair in range(n_arms - 1):
        if pair < n_bottom:
            arm_top, arm_bottom = worst_top, bottom[pair]
        else:
            arm_top, arm_bottom = star_top_arm(top, worst_top, pair - n_bottom), best_bottom
        value, grad_top, grad_bottom = _compiled_families.weighted_pair(
            params.pair, theta[arm_top], theta[arm_bottom], weight[arm_top], weight[arm_bottom])
        cost[pair] = 0.0 if value != value else value
        ratio[pair] = (grad_top / params.dispersion[arm_top]) / (grad_bottom / params.dispersion[arm_bottom])
        smallest = min(smallest, cost[pair])
    tied = 0
    for pair in range(n_arms - 1):
        tied += cost[pair] == smallest
    pick = min(int(uniforms[n_arms] * tied), max(tied - 1, 0))
    for pair in range(n_arms - 1):
        if cost[pair] == smallest:
            if pick == 0:
                position = pair
                break
            pick -= 1
    if position < n_bottom:
        chosen_top, chosen_bottom = worst_top, bottom[position]
    else:
        chosen_top, chosen_bottom = star_top_arm(top, worst_top, position - n_bottom), best_bottom
    # the balance (16): sum over the top side of z against the bottom side (z_{i_k} = 1)
    bottom_side = 0.0
    for pair in range(n_bottom):
        bottom_side += ratio[pair]
    top_side = 0.0
    for pair in range(n_bottom, n_arms - 1):
        top_side += ratio[best_position] / ratio[pair]
    top_side = 1.0 + top_side
    if np.isfinite(top_side) and np.isfinite(bottom_side) and bottom_side > 0:
        pull_top = top_side < bottom_side
    else:  # the sum-of-squares comparison of the counts
        squares_top, squares_bottom = 0.0, 0.0
        for i in range(k):
            squares_top += float(counts[top[i]]) ** 2 / params.dispersion[top[i]]
        for j in range(n_bottom):
            squares_bottom += float(counts[bottom[j]]) ** 2 / params.dispersion[bottom[j]]
        pull_top = squares_top < squares_bottom
    return (chosen_top if pull_top else chosen_bottom), 1


@kernel
def star_top_arm(top, worst_top, index):
    """The ``index``-th top arm other than the worst one, in increasing arm order."""
    seen = 0
    for arm in top:
        if arm != worst_top:
            if seen == index:
                return arm
            seen += 1
    return worst_top


register_policy("bts", BTS)
