r"""CLUCB-PAC for :math:`\epsilon`-top-k identification (Chen, Lin, King, Lyu, Chen 2014), and its fixed-budget form.

CLUCB (Combinatorial LUCB, Chen et al. 2014, Algorithm 1) specialised to the top-k decision class, whose
maximisation oracle is the top-k of a weight vector. After one pull of every arm, at each time :math:`t` (the
number of pulls so far):

1. :math:`M_t` = the empirical top-k (ties to the smaller arm index);
2. the radius :math:`\mathrm{rad}_t(a) = \sigma_a\sqrt{2\log(4 n t^3/\delta)/N_a}` (Chen et al. 2014, Theorem 1,
   for :math:`\sigma_a`-sub-Gaussian rewards: :math:`\sigma_a = 1/2` for rewards in [0, 1]);
3. the adjusted weights :math:`\tilde w_t(a) = \hat\mu_a - \mathrm{rad}_t(a)` for :math:`a \in M_t` and
   :math:`\hat\mu_a + \mathrm{rad}_t(a)` otherwise, and :math:`\tilde M_t` = the top-k of :math:`\tilde w_t`;
4. the PAC stopping rule (Chen et al. 2014, Section 5): stop and return :math:`M_t` when
   :math:`\tilde w_t(\tilde M_t) - \tilde w_t(M_t) \le \epsilon_{\text{sum}}`;
5. otherwise pull the arm of largest radius in :math:`(\tilde M_t \setminus M_t) \cup (M_t \setminus \tilde M_t)`
   (ties uniformly at random: one uniform per step).

Chen et al. bound :math:`w(M^*) - w(M)`, a sum over the k arms. Chen, Chen, Zhang, Zhou (2017), who compare with
CLUCB-PAC in their Figures 1-4, measure the *aggregate* regret :math:`(w(M^*) - w(M))/k \le \epsilon`, so the
rule here stops at :math:`\epsilon_{\text{sum}} = k\epsilon`, and :math:`\tilde w_t(\tilde M_t) -
\tilde w_t(M_t)` is summed over the symmetric difference only (the common arms cancel exactly), each of its two
sums in increasing arm order.

The fixed-budget form (:class:`CLUCBPACFixedBudget`) is the conversion Chen, Chen, Zhang, Zhou (2017, Section 3)
apply to their own algorithm: no outer stop, a fixed number of pulls. A run whose PAC rule holds before the budget
has been spent keeps the answer :math:`M_t` it would have returned (the algorithm has stopped; the remaining
pulls, which the engine still spends, go to the arm of largest radius and never change the recommendation).
It is anytime: one run serves every budget.

``select`` is the rule's step for one run, written like the paper's pseudo-code: the specification, and what runs with
the compiled kernels off, for ``batched=False``, or for a family the compiled step does not cover. ``compiled_step``
gives the same step compiled (:func:`clucb_step`, :func:`clucb_stop`, :func:`clucb_recommend`) for the engine's
compiled loop; the tests compare the two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from typing import NamedTuple

from ..._numba import kernel
from ..._rng import random_candidate
from ..._validation import as_float, fail
from ..engine.loop import GROW, copy_into, split_top_k
from ..engine.confidence_bounds import SUBGAUSSIAN_FAMILIES, subgaussian_radius, subgaussian_variance
from .lucb import in_top_mask
from ..engine.protocol import RuleContext, RunView, StepKernel, register_policy
from ..engine.statistics import top_k_order

__all__ = ["CLUCBPAC", "CLUCBPACFixedBudget", "clucb_radius", "clucb_pac_step", "CLUCBStep"]


def clucb_level(t, n_arms: int, delta: float) -> np.ndarray:
    r""":math:`\log(4 n t^3/\delta)`, the logarithm in the radius of Chen et al. (2014, Theorem 1), for every entry of
    ``t`` (the compiled step reads it from a table this function computes, so that both use numpy's logarithm).

    Examples
    --------
    >>> round(float(clucb_level(100, 5, 0.05)), 6)  # log(4 * 5 * 100**3 / 0.05)
    19.806975
    """
    return np.log(4.0 * n_arms * np.asarray(t, dtype=float) ** 3 / delta)


def clucb_radius(counts, t, n_arms: int, delta: float, variance) -> np.ndarray:
    r""":math:`\sigma_a\sqrt{2\log(4 n t^3/\delta)/N_a}` (Chen et al. 2014, Theorem 1); ``t`` a scalar or shape (R,).

    Examples
    --------
    >>> round(float(clucb_radius(10, 100, 5, 0.05, 0.25)), 6)  # sqrt(2 * 0.25 * log(4 * 5 * 100**3 / 0.05) / 10)
    0.995163
    """
    level = clucb_level(t, n_arms, delta)
    return subgaussian_radius(counts, level[..., None] if level.ndim else level, variance)


@dataclass(frozen=True)
class CLUCBStep:
    """One CLUCB step of one run or a batch: the radii, the adjusted weights' top-k mask, the mask of the empirical
    top-k, and the adjusted gap :math:`\\tilde w_t(\\tilde M_t) - \\tilde w_t(M_t)`."""

    radius: np.ndarray
    adjusted_top: np.ndarray
    empirical_top: np.ndarray
    gap: np.ndarray


def clucb_pac_step(context: RuleContext, view: RunView, delta: float, func: str) -> CLUCBStep:
    """Steps 1-3 of CLUCB and the adjusted gap of step 4, for one run (shapes (K,)) or a batch (a leading axis)."""
    variance = subgaussian_variance(context.family, context.dispersion, func)
    radius = clucb_radius(view.counts, view.t, context.n_arms, delta, variance)
    empirical_top = in_top_mask(view.top, context.n_arms)
    adjusted = np.where(empirical_top, view.means - radius, view.means + radius)
    adjusted_top = in_top_mask(top_k_order(adjusted, context.k)[0], context.n_arms)
    # each sum in increasing arm order (cumsum adds in sequence, as the compiled step does)
    gained = np.cumsum(np.where(adjusted_top & ~empirical_top, adjusted, 0.0), axis=-1)[..., -1]
    lost = np.cumsum(np.where(empirical_top & ~adjusted_top, adjusted, 0.0), axis=-1)[..., -1]
    return CLUCBStep(radius, adjusted_top, empirical_top, gained - lost)


def _largest_radius(radius: np.ndarray, candidates: np.ndarray, uniforms) -> np.ndarray:
    """The arm of largest radius among ``candidates`` (every arm where a row has none), ties at random."""
    candidates = np.where(np.any(candidates, axis=-1, keepdims=True), candidates, True)
    largest = np.max(np.where(candidates, radius, -np.inf), axis=-1, keepdims=True)
    return random_candidate(candidates & (radius == largest), uniforms)


@dataclass(frozen=True)
class CLUCBPAC:
    r"""CLUCB-PAC (Chen, Lin, King, Lyu, Chen 2014, Algorithm 1 with the PAC stopping rule of Section 5) for
    :math:`\epsilon`-top-k identification by aggregate regret; run it with
    :func:`~allocopt.algorithms.pac_identify`, which gives :math:`\epsilon` and :math:`\delta`.

    See the module notes for the algorithm. Rewards must be sub-Gaussian with a known proxy (gaussian arms, or
    bernoulli arms with :math:`\sigma = 1/2`).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import pac_identify
    >>> problem = TopKProblem([0.9, 0.8, 0.3, 0.2, 0.1], k=2, family="bernoulli")
    >>> result = pac_identify(problem, CLUCBPAC(), epsilon=0.05, delta=0.05, n_runs=20, rng=0)
    >>> bool(result.correct.all())
    True
    """

    name: ClassVar[str] = "clucb-pac"
    stopping: ClassVar[str] = "rule"
    uses_glr: ClassVar[bool] = False
    delta_dependent: ClassVar[bool] = True
    families: ClassVar[tuple[str, ...]] = SUBGAUSSIAN_FAMILIES

    def _tolerance(self, context: RuleContext) -> tuple[float, float]:
        """(delta, the summed tolerance k epsilon)."""
        func = type(self).__name__
        epsilon = context.epsilon
        if epsilon is None:
            fail(func, "epsilon", "an accuracy epsilon > 0 (run it with pac_identify)", None)
        return context.delta_value(func), context.k * float(epsilon)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 1

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        self._tolerance(context)
        subgaussian_variance(context.family, context.dispersion, type(self).__name__)
        return {}

    def stop(self, context: RuleContext, view: RunView, state) -> bool:
        delta, tolerance = self._tolerance(context)
        return bool(clucb_pac_step(context, view, delta, type(self).__name__).gap <= tolerance)

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        step = clucb_pac_step(context, view, self._tolerance(context)[0], type(self).__name__)
        return int(_largest_radius(step.radius, step.adjusted_top != step.empirical_top, uniforms[0]))

    def compiled_step(self, context: RuleContext) -> StepKernel:
        """:func:`clucb_step` with its ``stop`` for the engine's compiled loop."""
        delta, tolerance = self._tolerance(context)
        return StepKernel(clucb_step, params=clucb_params(context, delta, tolerance, False, type(self).__name__),
                          state=ClucbState, stop=clucb_stop, grow=grow_clucb, work_state=clucb_state)


@dataclass(frozen=True)
class CLUCBPACFixedBudget:
    r"""CLUCB-PAC converted to a fixed budget, as Chen, Chen, Zhang, Zhou (2017, Section 3) run it (module notes):
    the recommendation is the answer :math:`M_t` of the first step where the PAC rule holds, else the empirical
    top-k at the budget. Anytime: one run of :func:`~allocopt.algorithms.identify_fixed_budget` serves every
    budget.

    Parameters
    ----------
    epsilon : float, default 0.01
        Aggregate-regret tolerance of the PAC rule, > 0 (the rule stops at a summed gap of k epsilon).
    delta : float, default 0.01
        Confidence parameter of the radius, in (0, 1) (both are 0.01 in the 2017 paper's experiments).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify_fixed_budget
    >>> problem = TopKProblem([0.9, 0.8, 0.3, 0.2, 0.1], k=2, family="bernoulli")
    >>> result = identify_fixed_budget(problem, CLUCBPACFixedBudget(), [50, 4000], n_runs=20, rng=1)
    >>> float(result.error_rate[-1])
    0.0
    """

    epsilon: float = 0.01
    delta: float = 0.01
    name: ClassVar[str] = "clucb-pac-budget"
    uses_glr: ClassVar[bool] = False
    anytime: ClassVar[bool] = True
    families: ClassVar[tuple[str, ...]] = SUBGAUSSIAN_FAMILIES

    def __post_init__(self):
        func = type(self).__name__
        object.__setattr__(self, "epsilon", as_float(self.epsilon, func, "epsilon", low=0.0, low_open=True))
        object.__setattr__(self, "delta", as_float(self.delta, func, "delta", low=0.0, high=1.0, low_open=True,
                                                   high_open=True))
        if not math.isfinite(self.epsilon):
            fail(func, "epsilon", "a finite accuracy > 0", self.epsilon)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 1

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        subgaussian_variance(context.family, context.dispersion, type(self).__name__)
        return {"stopped": np.zeros((n_runs, 1), dtype=bool), "answer": np.zeros((n_runs, context.k), dtype=np.int64)}

    def _step(self, context: RuleContext, view: RunView, stopped: np.ndarray, answer: np.ndarray,
              uniforms) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        step = clucb_pac_step(context, view, self.delta, type(self).__name__)
        newly = ~stopped & (step.gap <= context.k * self.epsilon)
        answer = np.where(newly[..., None], view.top, answer)
        stopped = stopped | newly
        candidates = np.where(stopped[..., None], False, step.adjusted_top != step.empirical_top)
        return _largest_radius(step.radius, candidates, uniforms), stopped, answer

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        arm, stopped, answer = self._step(context, view, np.asarray(state["stopped"][0]), state["answer"],
                                          uniforms[0])
        state["stopped"][0] = stopped
        state["answer"][...] = answer
        return int(arm)

    def recommend(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        return state["answer"].copy() if bool(state["stopped"][0]) else np.asarray(view.top)

    def compiled_step(self, context: RuleContext) -> StepKernel:
        """:func:`clucb_step` with its ``recommend`` for the engine's compiled loop."""
        params = clucb_params(context, self.delta, context.k * self.epsilon, True, type(self).__name__)
        return StepKernel(clucb_step, params=params, state=ClucbState, recommend=clucb_recommend, grow=grow_clucb,
                          work_state=clucb_state)


# ------------------------------------------------------------------------------------------- compiled step
class ClucbState(NamedTuple):
    """The fixed-budget form's stop and answer (zeros for the PAC form)."""

    stopped: np.ndarray
    answer: np.ndarray


class ClucbParams(NamedTuple):
    """What the compiled CLUCB step reads: k, the summed tolerance, whether it is the fixed-budget form, 2 sigma^2,
    the table of log(4 n t^3 / delta) over t (and what grows it), and work arrays."""

    k: int
    tolerance: float
    budget_form: bool
    twice_variance: np.ndarray
    levels: np.ndarray
    delta: float
    work: np.ndarray  # (3, K): radii, adjusted weights, the insertion top-k's values
    arms: np.ndarray  # (2K,) int work
    flags: np.ndarray  # (2, K) bool: the empirical top-k, the adjusted top-k


def clucb_state(n_rows: int, n_arms: int) -> dict[str, np.ndarray]:
    """The PAC form's (unused) stop and answer, for the kernel's state."""
    return {"stopped": np.zeros((n_rows, 1), dtype=np.bool_), "answer": np.zeros((n_rows, 1), dtype=np.int64)}


def level_table(n_arms: int, delta: float, largest: int) -> np.ndarray:
    """:func:`clucb_level` for t = 0 .. T - 1 (T a power of two beyond ``largest``; entry 0 NaN)."""
    size = max(1024, 1 << int(largest).bit_length())
    return np.concatenate([[np.nan], clucb_level(np.arange(1, size), n_arms, delta)])


def clucb_params(context: RuleContext, delta: float, tolerance: float, budget_form: bool, func: str) -> ClucbParams:
    """The compiled step's parameters."""
    n_arms = context.n_arms
    variance = subgaussian_variance(context.family, context.dispersion, func)
    return ClucbParams(context.k, float(tolerance), budget_form, 2.0 * np.ascontiguousarray(variance, dtype=float),
                       level_table(n_arms, delta, n_arms + 2), float(delta), np.empty((3, n_arms)),
                       np.empty(2 * n_arms, dtype=np.int64), np.empty((2, n_arms), dtype=np.bool_))


def grow_clucb(params: ClucbParams, largest: int) -> ClucbParams:
    """The parameters with a level table beyond ``largest``."""
    return params._replace(levels=level_table(params.twice_variance.shape[0], params.delta, largest))


@kernel
def clucb_gap(view, params):
    """:func:`clucb_pac_step` compiled: the radii (``params.work[0]``), the adjusted weights and their top-k
    (``params.flags[1]``) against the empirical top-k (``params.flags[0]``); returns the adjusted gap, each of its
    two sums in increasing arm order."""
    counts, means, k = view.counts, view.means, params.k
    n_arms = counts.shape[0]
    radius, adjusted = params.work[0], params.work[1]
    empirical_top, adjusted_top = params.flags[0], params.flags[1]
    level = params.levels[view.t]
    empirical_top[:] = False
    for arm in view.top:
        empirical_top[arm] = True
    for arm in range(n_arms):
        radius[arm] = np.sqrt(params.twice_variance[arm] * level / counts[arm])
        adjusted[arm] = means[arm] - radius[arm] if empirical_top[arm] else means[arm] + radius[arm]
    top, bottom = params.arms[:k], params.arms[k:n_arms]
    split_top_k(adjusted, k, top, bottom, params.work[2], params.arms[n_arms:n_arms + k], adjusted_top)
    gained, lost = 0.0, 0.0
    for arm in range(n_arms):
        if adjusted_top[arm] and not empirical_top[arm]:
            gained += adjusted[arm]
        if empirical_top[arm] and not adjusted_top[arm]:
            lost += adjusted[arm]
    return gained - lost


@kernel
def largest_radius(radius, candidates, stopped, uniform):
    """The arm of largest radius among ``candidates`` (every arm where there is none, or once ``stopped``), ties as
    random_candidate."""
    n_arms = radius.shape[0]
    any_candidate = False
    for arm in range(n_arms):
        any_candidate = any_candidate or (candidates[arm] and not stopped)
    largest = -np.inf
    for arm in range(n_arms):
        if not any_candidate or (candidates[arm] and not stopped):
            largest = max(largest, radius[arm])
    tied = 0
    for arm in range(n_arms):
        tied += (not any_candidate or (candidates[arm] and not stopped)) and radius[arm] == largest
    pick = min(int(uniform * tied), max(tied - 1, 0))
    for arm in range(n_arms):
        if (not any_candidate or (candidates[arm] and not stopped)) and radius[arm] == largest:
            if pick == 0:
                return arm
            pick -= 1
    return 0


def clucb_stop(row, view, state, params):
    """:meth:`CLUCBPAC.stop` compiled: the adjusted gap at most the tolerance."""
    return clucb_gap(view, params) <= params.tolerance


def clucb_step(row, view, state, params, uniforms, each):
    """:meth:`CLUCBPAC.select` (and the fixed-budget form's) compiled: the arm of largest radius in the symmetric
    difference of the empirical and the adjusted top-k."""
    if view.t + 2 >= params.levels.shape[0]:
        each[0] = view.t + 2
        return GROW, 0
    gap = clucb_gap(view, params)
    stopped = False
    if params.budget_form:
        if not state.stopped[row, 0] and gap <= params.tolerance:
            state.stopped[row, 0] = True
            copy_into(state.answer[row], view.top)
        stopped = state.stopped[row, 0]
    candidates = params.flags[1]
    for arm in range(candidates.shape[0]):
        candidates[arm] = params.flags[0][arm] != params.flags[1][arm]
    return largest_radius(params.work[0], candidates, stopped, uniforms[0]), 1


def clucb_recommend(row, view, state, params, out):
    """:meth:`CLUCBPACFixedBudget.recommend` compiled: the answer of the first stop, else the empirical top-k."""
    if state.stopped[row, 0]:
        copy_into(out, state.answer[row])
    else:
        copy_into(out, view.top)


register_policy("clucb-pac", CLUCBPAC)
register_policy("clucb-pac-budget", CLUCBPACFixedBudget)
