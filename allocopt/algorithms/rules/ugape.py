r"""UGapE (Gabillon, Ghavamzadeh, Lazaric 2012), top-k, in its fixed-confidence (UGapEc) and fixed-budget
(UGapEb) forms.

At each step, with confidence radii :math:`\beta_a` and bounds :math:`U_a = \hat\mu_a + \beta_a`,
:math:`L_a = \hat\mu_a - \beta_a`:

1. gap indices :math:`B_a = \max^{(k)}_{i \ne a} U_i - L_a` (:math:`\max^{(k)}` the k-th largest);
2. :math:`J_t` = the k arms of smallest :math:`B_a` (ties to the smaller arm index);
3. :math:`u_t = \arg\max_{a \notin J_t} U_a`, :math:`l_t = \arg\min_{a \in J_t} L_a` (ties at random);
4. pull the one of :math:`u_t, l_t` with the larger radius :math:`\beta` (ties at random).

UGapEc stops when :math:`B_{J_t} = \max_{a \in J_t} B_a < \epsilon` and returns :math:`J_t`; its radius
is :math:`\sqrt{2\sigma_a^2\beta(t,\delta)/N_a}` with the exploration rate :math:`\beta(t,\delta)`
(``"heuristic"`` by default, as Wang, Yang, You 2022 run it; ``"gabillon"`` is the paper's
:math:`\log(4K(t-1)^3/\delta)`). UGapEb runs to the budget :math:`n` and returns the :math:`J_t` of
smallest :math:`B_{J_t}` over its steps; its radius is :math:`b\sqrt{a'/N_a}` with :math:`b = 2\sigma_a`
(the range of Bernoulli rewards, 1) and the exploration constant :math:`a' = a\,(n - K)/(4H)`: the paper's
Theorem 2 covers :math:`a' \le (n - K)/(4H)`, i.e. our :math:`a \le 1`, where :math:`H` is the complexity
of the problem; both :math:`a` and :math:`H` must be given (Wang, Yang, You 2022, Appendix C.3, give
UGapEb the true :math:`H` and report :math:`a = 5` as the best value in hindsight).

Gaussian and Bernoulli rewards only (the radius is Hoeffding's).

``select`` is the rule's step for one run, written like the paper's pseudo-code: the specification, and what runs with
the compiled kernels off, for ``batched=False``, or for a family the compiled step does not cover. ``compiled_step``
gives the same step compiled (:func:`ugape_step`, :func:`ugape_stop`, :func:`ugape_recommend`) for the engine's
compiled loop; the tests compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from ..._numba import kernel
from ..._validation import as_choice, as_float, fail
from ..engine.confidence_bounds import (SUBGAUSSIAN_FAMILIES, check_exploration, exploration_rate, subgaussian_radius,
                                subgaussian_variance)
from ..engine.loop import GROW, pick_among, split_top_k
from ._lucb_step import rate_table
from .lucb import _pick
from ..engine.protocol import RuleContext, RunView, StepKernel, register_policy

__all__ = ["UGapE", "UGAPE_MODES", "GapIndices", "gap_indices"]

UGAPE_MODES = ("confidence", "budget")


class GapIndices(NamedTuple):
    """Bounds, gap indices and :math:`J_t` of one run (shape (K,)) or a batch (R, K)."""

    radius: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    gap_index: np.ndarray
    chosen: np.ndarray
    others: np.ndarray
    chosen_index: np.ndarray


def gap_indices(means: np.ndarray, radius: np.ndarray, k: int) -> GapIndices:
    r""":math:`B_a = \max^{(k)}_{i \ne a} U_i - L_a`, :math:`J_t` (k smallest, ties to the smaller index), the
    other arms (both in increasing arm order) and :math:`B_{J_t} = \max_{a \in J_t} B_a`.

    The k-th largest upper bound among the other arms is the (k+1)-th largest overall for an arm ranked in
    the top k of :math:`U` and the k-th largest otherwise.

    Examples
    --------
    >>> gaps = gap_indices(np.array([2.0, 1.0, 0.0]), np.full(3, 1.0), 1)
    >>> gaps.gap_index.tolist(), gaps.chosen.tolist(), gaps.others.tolist()
    ([1.0, 3.0, 4.0], [0], [1, 2])
    """
    upper, lower = means + radius, means - radius
    order = np.argsort(-upper, axis=-1, kind="stable")
    ranked = np.take_along_axis(upper, order, axis=-1)
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.broadcast_to(np.arange(upper.shape[-1]), order.shape), axis=-1)
    kth_other = np.where(position < k, ranked[..., k:k + 1], ranked[..., k - 1:k])
    index = kth_other - lower
    ranked_index = np.argsort(index, axis=-1, kind="stable")
    chosen, others = np.sort(ranked_index[..., :k], axis=-1), np.sort(ranked_index[..., k:], axis=-1)
    chosen_index = np.take_along_axis(index, chosen, axis=-1).max(axis=-1)
    return GapIndices(radius, upper, lower, index, chosen, others, chosen_index)


@dataclass(frozen=True)
class UGapE:
    r"""UGapE: ``mode="confidence"`` (UGapEc, run by :func:`~allocopt.algorithms.identify`) or
    ``mode="budget"`` (UGapEb, run by :func:`~allocopt.algorithms.identify_fixed_budget`, one run per budget).

    Parameters
    ----------
    mode : {"confidence", "budget"}
    a : float, optional
        UGapEb's exploration multiplier (required in budget mode), > 0.
    complexity : float, optional
        UGapEb's problem complexity :math:`H` (required in budget mode), > 0, e.g.
        :func:`allocopt.complexity.top_m.h1` of the instance.
    epsilon : float, default 0
        UGapEc's accuracy: stop when :math:`B_{J_t} < \epsilon`.
    exploration : str or callable, default "heuristic"
        UGapEc's exploration rate.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify, identify_fixed_budget
    >>> problem = TopKProblem([1.0, 0.9, 0.1, 0.0], k=2, variance=0.25)
    >>> bool(identify(problem, UGapE(), delta=0.05, n_runs=10, rng=4).correct.all())
    True
    >>> result = identify_fixed_budget(problem, UGapE("budget", a=1.0, complexity=12.0), [40], n_runs=20, rng=0)
    >>> result.recommendations.shape
    (20, 1, 2)
    """

    mode: str = "confidence"
    a: float | None = None
    complexity: float | None = None
    epsilon: float = 0.0
    exploration: str | Callable = "heuristic"
    name = "ugape"
    families = SUBGAUSSIAN_FAMILIES  # Hoeffding radii: the runners refuse poisson, exponential and gamma arms
    stopping = "rule"
    uses_glr = False
    delta_dependent = True

    def __post_init__(self):
        as_choice(self.mode, "UGapE", "mode", UGAPE_MODES)
        as_float(self.epsilon, "UGapE", "epsilon", low=0.0)
        check_exploration(self.exploration, "UGapE")
        if self.mode == "budget":
            for name in ("a", "complexity"):
                value = getattr(self, name)
                if value is None:
                    fail("UGapE", name, "a positive number in budget mode (UGapEb needs its exploration parameter a "
                         "and the problem complexity H, as Gabillon et al. 2012 state them)", value)
                as_float(value, "UGapE", name, low=0.0, low_open=True)

    @property
    def anytime(self) -> bool:
        """UGapEb's radius depends on the budget: one run per budget."""
        return self.mode == "confidence"

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 3

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        subgaussian_variance(context.family, context.dispersion, "UGapE")
        if self.mode == "confidence" and context.delta is None:
            fail("UGapE", "policy", "run in fixed confidence (identify) in mode 'confidence'; use "
                 "UGapE('budget', a=..., complexity=...) with identify_fixed_budget", "a fixed-budget run")
        if self.mode == "budget" and context.budget is None:
            fail("UGapE", "policy", "run in fixed budget (identify_fixed_budget) in mode 'budget'; use "
                 "UGapE('confidence') with identify", "a fixed-confidence run")
        # UGapEb's best J_t so far (unused by UGapEc)
        return {"best_index": np.full((n_runs, 1), np.inf), "best_set": np.zeros((n_runs, context.k), dtype=np.int64),
                **self._index_cache(context, n_runs)}

    @staticmethod
    def _index_cache(context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        # the stopping check computes the gap indices first; select (and recommend) reuse them at the same t
        n_arms, k = context.n_arms, context.k
        return {"indices_at": np.full((n_runs, 1), -1, dtype=np.int64),
                **{f"indices_{name}": np.zeros((n_runs, n_arms)) for name in ("radius", "upper", "lower", "gap_index")},
                "indices_chosen": np.zeros((n_runs, k), dtype=np.int64),
                "indices_others": np.zeros((n_runs, n_arms - k), dtype=np.int64),
                "indices_chosen_index": np.zeros((n_runs, 1))}

    def radius(self, context: RuleContext, view: RunView) -> np.ndarray:
        """:math:`\\beta_a` of every arm."""
        variance = subgaussian_variance(context.family, context.dispersion, "UGapE")
        if self.mode == "confidence":
            beta = exploration_rate(self.exploration, view.t, context.delta_value("UGapE"), context.n_arms)
            return subgaussian_radius(view.counts, np.asarray(beta)[..., None], variance)
        a, complexity = self.a, self.complexity
        if a is None or complexity is None:  # refused by __post_init__ in budget mode
            fail("UGapE", "a", "a positive number in budget mode, with the complexity H", a)
        constant = a * (context.budget_value("UGapE") - context.n_arms) / (4.0 * complexity)
        return 2.0 * np.sqrt(variance) * np.sqrt(max(constant, 0.0) / view.counts)

    def indices(self, context: RuleContext, view: RunView) -> GapIndices:
        return gap_indices(view.means, self.radius(context, view), context.k)

    def stop(self, context: RuleContext, view: RunView, state) -> bool:
        return bool(self.indices(context, view).chosen_index < self.epsilon)

    def _choose(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> np.ndarray:
        gaps = self.indices(context, view)
        if self.mode == "budget":  # keep the J_t of smallest B_{J_t} seen so far
            better = gaps.chosen_index < state["best_index"][..., 0]
            state["best_index"][..., 0] = np.where(better, gaps.chosen_index, state["best_index"][..., 0])
            state["best_set"][...] = np.where(np.asarray(better)[..., None], gaps.chosen, state["best_set"])
        u = _pick(gaps.others, gaps.upper, "max", uniforms[..., 0])  # u_t, among the arms not in J_t
        l = _pick(gaps.chosen, gaps.lower, "min", uniforms[..., 1])  # l_t
        pair = np.stack([l, u], axis=-1)
        return _pick(pair, gaps.radius, "max", uniforms[..., 2])  # the one with the larger radius

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        return int(self._choose(context, view, state, uniforms))

    def _recommend(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        gaps = self.indices(context, view)
        if self.mode == "confidence":
            return gaps.chosen
        better = gaps.chosen_index < state["best_index"][..., 0]
        return np.where(np.asarray(better)[..., None], gaps.chosen, state["best_set"])

    def recommend(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        return self._recommend(context, view, state)

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`ugape_step` with its ``stop`` and ``recommend`` for the engine's compiled loop (None for an
        exploration rate given as a callable: the step runs in Python)."""
        if self.mode == "confidence" and not isinstance(self.exploration, str):
            return None
        variance = subgaussian_variance(context.family, context.dispersion, "UGapE")
        n_arms, k = context.n_arms, context.k
        confidence = self.mode == "confidence"
        delta = context.delta_value("UGapE") if confidence else np.nan
        constant = np.nan
        if not confidence:
            assert self.a is not None and self.complexity is not None  # (checked by __post_init__ in budget mode)
            constant = self.a * (context.budget_value("UGapE") - n_arms) / (4.0 * self.complexity)
        return StepKernel(ugape_step, params=UGapEParams(
            k, float(self.epsilon), confidence, np.ascontiguousarray(variance, dtype=float), float(constant),
            rate_table(str(self.exploration), delta, n_arms, n_arms + 2) if confidence else np.zeros(1),
            str(self.exploration), float(delta), np.empty((2, n_arms)), np.empty(3 * n_arms + 2, dtype=np.int64),
            np.empty(n_arms, dtype=np.bool_)),
            state=UGapEState, stop=ugape_stop, recommend=ugape_recommend, grow=grow_ugape)


class UGapEState(NamedTuple):
    """UGapE's state in the compiled loop: the gap indices at ``indices_at`` and UGapEb's best J_t so far."""

    indices_at: np.ndarray
    indices_radius: np.ndarray
    indices_upper: np.ndarray
    indices_lower: np.ndarray
    indices_gap_index: np.ndarray
    indices_chosen: np.ndarray
    indices_others: np.ndarray
    indices_chosen_index: np.ndarray
    best_index: np.ndarray
    best_set: np.ndarray


class UGapEParams(NamedTuple):
    """What the compiled UGapE reads: k, epsilon, the mode, sigma^2, UGapEb's radius constant, the rate table (and
    what grows it), and work arrays."""

    k: int
    epsilon: float
    confidence: bool
    variance: np.ndarray
    constant: float
    rates: np.ndarray
    exploration: str
    delta: float
    work: np.ndarray  # (2, K): the ranked values of the insertion top-k, -B
    arms: np.ndarray  # (3K + 2,) int work
    member: np.ndarray  # (K,) bool work


def grow_ugape(params: UGapEParams, largest: int) -> UGapEParams:
    """The parameters with a rate table beyond ``largest``."""
    return params._replace(rates=rate_table(params.exploration, params.delta, params.variance.shape[0], largest))


@kernel
def ugape_indices(row, view, state, params):
    """:meth:`UGapE.indices` compiled (kept in the state once per step): the radii, bounds, gap indices B_a, J_t and B_{J_t} at t, once."""
    if state.indices_at[row, 0] == view.t:
        return
    state.indices_at[row, 0] = view.t
    counts, means, k = view.counts, view.means, params.k
    n_arms = counts.shape[0]
    radius, upper, lower = state.indices_radius[row], state.indices_upper[row], state.indices_lower[row]
    index, chosen, others = state.indices_gap_index[row], state.indices_chosen[row], state.indices_others[row]
    for arm in range(n_arms):
        if params.confidence:  # Hoeffding's radius at beta(t, delta)
            radius[arm] = np.sqrt(2.0 * params.variance[arm] * params.rates[view.t] / counts[arm])
        else:  # UGapEb: 2 sigma sqrt(a (T - K) / (4 H N_a))
            radius[arm] = 2.0 * np.sqrt(params.variance[arm]) * np.sqrt(max(params.constant, 0.0) / counts[arm])
        upper[arm] = means[arm] + radius[arm]
        lower[arm] = means[arm] - radius[arm]
    # B_a = (k-th largest U among the other arms) - L_a: the (k+1)-th largest U for the arms of the stable top-k
    # of U, the k-th otherwise; J_t = the k smallest B_a, ties to the smaller arm (the stable top-k of -B)
    values, negated, member = params.work[0], params.work[1], params.member
    top, bottom, ranked = params.arms[:k + 1], params.arms[k + 1:n_arms + 1], params.arms[n_arms + 1:n_arms + k + 2]
    split_top_k(upper, k + 1, top, bottom, values, ranked, member)
    kth, next_value = values[k - 1], values[k]
    member[:] = False
    for position in range(k):
        member[ranked[position]] = True
    for arm in range(n_arms):
        index[arm] = (next_value if member[arm] else kth) - lower[arm]
        negated[arm] = -index[arm]
    split_top_k(negated, k, chosen, others, values, params.arms[n_arms + k + 2:n_arms + 2 * k + 2], member)
    largest = index[chosen[0]]
    for position in range(1, k):
        largest = max(largest, index[chosen[position]])
    state.indices_chosen_index[row, 0] = largest


def ugape_stop(row, view, state, params):
    """:meth:`UGapE.stop` compiled: B_{J_t} < epsilon."""
    if params.confidence and view.t >= params.rates.shape[0]:
        return False  # (the step grows the table first: never reached)
    ugape_indices(row, view, state, params)
    return state.indices_chosen_index[row, 0] < params.epsilon


def ugape_step(row, view, state, params, uniforms, each):
    """:meth:`UGapE.select` compiled: u_t (largest U off J_t), l_t (smallest L in J_t), the one of larger radius
    (ties: l_t first, u_t second); UGapEb keeps the J_t of smallest B_{J_t}."""
    if params.confidence and view.t + 2 >= params.rates.shape[0]:
        each[0] = view.t + 2
        return GROW, 0
    ugape_indices(row, view, state, params)
    if not params.confidence and state.indices_chosen_index[row, 0] < state.best_index[row, 0]:
        state.best_index[row, 0] = state.indices_chosen_index[row, 0]
        state.best_set[row, :] = state.indices_chosen[row]
    radius = state.indices_radius[row]
    u_arm = pick_among(state.indices_others[row], state.indices_upper[row], True, uniforms[0])
    l_arm = pick_among(state.indices_chosen[row], state.indices_lower[row], False, uniforms[1])
    if radius[l_arm] == radius[u_arm]:
        return (l_arm if int(uniforms[2] * 2) == 0 else u_arm), 1
    return (l_arm if radius[l_arm] > radius[u_arm] else u_arm), 1


def ugape_recommend(row, view, state, params, out):
    """:meth:`UGapE.recommend` compiled: J_t (UGapEb: the best J_t, unless the current one is better)."""
    ugape_indices(row, view, state, params)
    if params.confidence or state.indices_chosen_index[row, 0] < state.best_index[row, 0]:
        out[:] = state.indices_chosen[row]
    else:
        out[:] = state.best_set[row]


register_policy("ugape", UGapE)
