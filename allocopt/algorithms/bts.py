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

A batched fixed-confidence run on Gaussian arms stopped by the Chernoff statistic with a built-in threshold runs in
the compiled loop :func:`allocopt.algorithms._compiled_bts.run_bts_rows` (the engine's ``compiled_glr_rows`` hook),
the same steps with the same records bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._rng import random_candidate
from .._validation import as_choice
from ..topk.pairs import KINDS, pair_terms
from ._pair_kernels import gather
from .protocol import RuleContext, RunView, register_policy
from .statistics import posterior_sample, top_k_order
from .stopping import HeuristicThreshold, TheoreticalThreshold

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
        top_side = 1.0 + star_top.sum(axis=-1)
        bottom_side = star_bottom.sum(axis=-1)
        squares = counts.astype(float) ** 2 / dispersion
        fallback_top = gather(squares, top).sum(axis=-1) < gather(squares, bottom).sum(axis=-1)
        finite = np.isfinite(top_side) & np.isfinite(bottom_side) & (bottom_side > 0)
        pull_top = np.where(finite, top_side < bottom_side, fallback_top)
        return chosen_top, chosen_bottom, pull_top

    def compiled_glr_rows(self, context: RuleContext, checkpoints: np.ndarray, threshold, max_samples: int,
                          counts: np.ndarray, sums: np.ndarray, t: np.ndarray, rewards, policy_generators):
        """The engine's hook for a batch stopped by the Chernoff statistic: Gaussian arms (both kinds of costs are
        the same there), a built-in threshold and no budget through
        :func:`~allocopt.algorithms._compiled_bts.run_bts_rows` (None otherwise, or for a subclass, whose steps
        may differ)."""
        from ._compiled_bts import run_bts_rows

        if (type(self) is not BTS or context.budget is not None or context.family.name != "gaussian"
                or not context.family.harmonic_costs(self.kind)
                or type(threshold) not in (HeuristicThreshold, TheoreticalThreshold)
                or np.shape(context.dispersion) != (context.n_arms,)):
            return None
        return run_bts_rows(context.k, context.dispersion, checkpoints, threshold, max_samples, counts, sums, t,
                            rewards, policy_generators)

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        i, j, pull_top = self._pair_and_side(context, view.counts, view.sums, uniforms)
        return int(i) if pull_top else int(j)

    def select_batch(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> np.ndarray:
        i, j, pull_top = self._pair_and_side(context, view.counts, view.sums, uniforms)
        return np.where(pull_top, i, j)


register_policy("bts", BTS)
