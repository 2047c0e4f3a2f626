r"""KKT Thompson Sampling (Wang, Yang, You 2022, Algorithm 2).

At step :math:`t`, with counts :math:`N` and :math:`\psi_t = N/t`:

1. sample :math:`\tilde\theta_t \sim \pi_t` (the posterior, :mod:`allocopt.algorithms.engine.statistics`);
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

``select`` is the rule's step for one run, written like the paper's pseudo-code: the specification, and what runs with
the compiled kernels off, for ``batched=False``, or for a family the compiled step does not cover. ``compiled_step``
gives the same step compiled (:func:`kkt_ts_step`) for the engine's compiled loop; the tests compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from typing import Any, NamedTuple

from ...families import kernels as _compiled_families
from ..._numba import kernel
from ..._special import special_functions
from ..._validation import as_choice
from ...topk.pairs import KINDS
from ..engine.loop import GAUSSIAN_STATISTIC, split_top_k
from ..engine._pair_kernels import pair_cost_grid, pull_probability, sort_arms
from ..engine.protocol import RuleContext, RunView, StepKernel, register_policy
from ..._rng import random_candidate
from ..engine.statistics import posterior_kind, posterior_quantile, posterior_sample

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

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`kkt_ts_step` for the engine's compiled loop: Gaussian arms (closed-form costs) and the families
        with a compiled pair kernel and a posterior sampler; None otherwise (the step then runs in Python)."""
        posterior = posterior_kind(context.family)
        harmonic = context.family.harmonic_costs(self.kind)
        pair = None if harmonic else _compiled_families.kernel_code(context.family.compiled_pair(self.kind))
        if posterior is None or not (harmonic or pair is not None):
            return None
        n_arms = context.n_arms
        return StepKernel(kkt_ts_step, params=KKTTSParams(
            context.k, posterior[0], GAUSSIAN_STATISTIC if pair is None else int(pair),
            np.ascontiguousarray(np.broadcast_to(context.dispersion, (n_arms,)), dtype=float), posterior[1],
            posterior[2], special_functions(), np.empty((3, n_arms)), np.empty(3 * n_arms, dtype=np.int64),
            np.empty(n_arms, dtype=np.bool_)))

class KKTTSParams(NamedTuple):
    """What :func:`kkt_ts_step` reads: k, the posterior's and the pair kernel's numbers, the dispersion, the clip
    bounds of the posterior samples, scipy.special's functions, and work arrays."""

    k: int
    posterior: int
    pair: int
    dispersion: np.ndarray
    low: float
    high: float
    special: Any
    work: np.ndarray  # (3, K): theta~, the effective weights (or their inverses), the insertion top-k's values
    arms: np.ndarray  # (3K,): top, bottom and the insertion top-k's arms
    member: np.ndarray  # (K,)


def kkt_ts_step(row, view, state, params, uniforms, each):
    """:meth:`KKTTS.select` compiled (the same four steps; the costs at the counts, as there)."""
    counts, sums, k = view.counts, view.sums, params.k
    n_arms = counts.shape[0]
    n_bottom = n_arms - k
    theta, weight, cost = params.work[0], params.work[1], params.work[2]
    top, bottom = params.arms[:k], params.arms[k:n_arms]
    gaussian = params.pair == GAUSSIAN_STATISTIC
    # 1. theta~ from the posterior, by inversion
    for arm in range(n_arms):
        theta[arm] = posterior_quantile(params.posterior, counts[arm], sums[arm], params.dispersion[arm],
                                        uniforms[arm], params.special, params.low, params.high)
        weight[arm] = counts[arm] / params.dispersion[arm]
        if gaussian:
            weight[arm] = 1.0 / weight[arm]  # the closed form reads 1/w
    # 2. its top-k and the other arms
    split_top_k(theta, k, top, bottom, cost, params.arms[n_arms:n_arms + k], params.member)
    # 3. a pair of minimal cost at theta~ and the counts (costs are homogeneous in the allocation)
    best, chosen, tied = np.inf, 0, 0
    has_nan = False
    for i in range(k):
        for j in range(n_bottom):
            value = pair_cost(params, theta[top[i]], theta[bottom[j]], weight[top[i]], weight[bottom[j]])
            if value != value:
                has_nan = True
            elif value < best:
                best, chosen, tied = value, i * n_bottom + j, 1
            elif value == best:
                tied += 1
    if has_nan:
        chosen = 0
    elif tied > 1:  # the floor(u c)-th of the c minimal pairs, in row-major order
        pick = min(int(uniforms[n_arms] * tied), tied - 1)
        for i in range(k):
            for j in range(n_bottom):
                if pair_cost(params, theta[top[i]], theta[bottom[j]], weight[top[i]], weight[bottom[j]]) == best:
                    if pick == 0:
                        chosen = i * n_bottom + j
                    pick -= 1
            if pick < 0:
                break
    arm_top, arm_bottom = top[chosen // n_bottom], bottom[chosen % n_bottom]
    # 4. the top arm with probability h_{i;j}, else the bottom arm
    if gaussian:
        h = weight[arm_top] / (weight[arm_top] + weight[arm_bottom])
    else:
        h = pull_probability_top(params.pair, theta[arm_top], theta[arm_bottom], weight[arm_top], weight[arm_bottom])
    return (arm_top if uniforms[n_arms + 1] < h else arm_bottom), 1


@kernel
def pair_cost(params, theta_top, theta_bottom, weight_top, weight_bottom):
    """A pair's cost at the effective weights (their inverses for the Gaussian closed form)."""
    if params.pair == GAUSSIAN_STATISTIC:
        gap = theta_top - theta_bottom
        return 0.5 * (gap * gap) / (weight_top + weight_bottom)
    return _compiled_families.weighted_pair(params.pair, theta_top, theta_bottom, weight_top, weight_bottom)[0]


@kernel
def pull_probability_top(code, theta_top, theta_bottom, weight_top, weight_bottom):
    """h_{i;j} = w_i dC/dw_i / C with its limits at zero cost, clipped to [0, 1] (NaN kept, as numpy's clip):
    :func:`allocopt.topk.problem.sampling_function_top` for one pair."""
    cost, derivative, _ = _compiled_families.weighted_pair(code, theta_top, theta_bottom, weight_top, weight_bottom)
    if cost > 0:
        h = weight_top * derivative / cost
    elif weight_top > 0:
        h = 0.5 if weight_bottom > 0 else 0.0
    else:
        h = 1.0 if weight_bottom > 0 else 0.5
    if h == h:
        h = min(max(h, 0.0), 1.0)
    return h


register_policy("kkt-ts", KKTTS)
