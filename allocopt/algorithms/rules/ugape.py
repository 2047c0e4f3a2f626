r"""UGapE (Gabillon, Ghavamzadeh, Lazaric 2012), top-k, in its fixed-confidence (UGapEc) and fixed-budget
(UGapEb) forms.

At each step, with confidence bounds :math:`L_a \le \hat\mu_a \le U_a`:

1. gap indices :math:`B_a = \max^{(k)}_{i \ne a} U_i - L_a` (:math:`\max^{(k)}` the k-th largest);
2. :math:`J_t` = the k arms of smallest :math:`B_a` (ties to the smaller arm index);
3. :math:`u_t = \arg\max_{a \notin J_t} U_a`, :math:`l_t = \arg\min_{a \in J_t} L_a` (ties at random);
4. pull the one of :math:`u_t, l_t` whose confidence interval is the wider (ties at random).

UGapEc's bounds at the exploration rate :math:`\beta(t,\delta)` (``"heuristic"`` by default, as Wang, Yang, You
2022 run it; ``"gabillon"`` is the paper's :math:`\log(4K(t-1)^3/\delta)`):

``bounds="kl"`` (the default in confidence mode)
    the KL bounds :math:`U_a = \max\{q : N_a\,d(\hat\mu_a, q) \le \beta(t,\delta)\}`,
    :math:`L_a = \min\{q : N_a\,d(\hat\mu_a, q) \le \beta(t,\delta)\}` of Kaufmann and Kalyanakrishnan (2013),
    which Wang, Yang, You (2022, Appendix C.3) prescribe for UGapE, KL-LUCB and KL-Elimination alike, computed by
    :func:`~allocopt.algorithms.engine.confidence_bounds.kl_bound` (the bounds KL-LUCB uses; compiled, the same
    bisection of :mod:`allocopt.algorithms.engine._kl_bounds`). Every family with a divergence: the rate's union
    argument holds for them as for Hoeffding's bound, since :math:`P(N\,d(\hat\mu, \mu) > \beta) \le 2e^{-\beta}`
    at a fixed count in any one-parameter exponential family (Chernoff). On Gaussian arms
    :math:`d(x, q) = (x - q)^2/(2\sigma^2)`, so the KL bounds *are* the Hoeffding bounds below (computed as those);
    on Bernoulli arms they are narrower, the more so the nearer the mean is to 0 or 1.
``bounds="hoeffding"``
    :math:`\hat\mu_a \pm \beta_a`, :math:`\beta_a = \sqrt{2\sigma_a^2\beta(t,\delta)/N_a}` (:math:`\sigma_a^2` the
    Gaussian variance, 1/4 for Bernoulli rewards; Gaussian and Bernoulli arms only), Gabillon et al.'s radius.

Step 4 compares Gabillon et al.'s radii :math:`\beta_a` for Hoeffding bounds; KL bounds are not symmetric about the
mean, so the rule compares the widths :math:`U_a - L_a`, the quantity the radius measures for symmetric bounds
(:math:`2\beta_a`): the arm whose value is the less certain is pulled.

UGapEc stops (``stop_on``) when

``"boxes"`` (the default, Gabillon et al.'s rule)
    :math:`B_{J_t} = \max_{a \in J_t} B_a < \epsilon`: every arm of :math:`J_t` has its lower bound above the
    upper bounds of all but k - 1 other arms, so the confidence boxes of :math:`J_t` and of the others separate;
``"min-gap-index"``
    :math:`\min_a B_a < \epsilon`: a literal reading of Wang, Yang, You's (2022, Appendix C.3) description ("the
    algorithm stops when :math:`\min_i B_i(t)` ..."), under which one arm certified in the top k ends the run. It
    needs far fewer samples, with an error rate above :math:`\delta` (see ``docs/faithful_rules.md``).

Both return :math:`J_t`. UGapEb runs to the budget :math:`n` and returns the :math:`J_t` of
smallest :math:`B_{J_t}` over its steps; its radius is :math:`b\sqrt{a'/N_a}` with :math:`b = 2\sigma_a`
(the range of Bernoulli rewards, 1) and the exploration constant :math:`a' = a\,(n - K)/(4H)`: the paper's
Theorem 2 covers :math:`a' \le (n - K)/(4H)`, i.e. our :math:`a \le 1`, where :math:`H` is the complexity
of the problem; both :math:`a` and :math:`H` must be given (Wang, Yang, You 2022, Appendix C.3, give
UGapEb the true :math:`H` and report :math:`a = 5` as the best value in hindsight). UGapEb uses this (Hoeffding)
radius only: Gaussian and Bernoulli rewards.

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
from ..engine import _kl_bounds as _bounds
from ..engine.confidence_bounds import (SUBGAUSSIAN_FAMILIES, check_exploration, exploration_rate, kl_bound,
                                        subgaussian_radius, subgaussian_variance)
from ..engine.loop import GROW, copy_into, pick_among, split_top_k
from ._lucb_step import rate_table
from .lucb import _pick
from ..engine.protocol import RuleContext, RunView, StepKernel, register_policy

__all__ = ["UGapE", "UGAPE_MODES", "UGAPE_BOUNDS", "UGAPE_STOPS", "GapIndices", "gap_indices", "gap_indices_of_bounds"]

UGAPE_MODES = ("confidence", "budget")
UGAPE_BOUNDS = ("kl", "hoeffding")
UGAPE_STOPS = ("boxes", "min-gap-index")


class GapIndices(NamedTuple):
    """Bounds, gap indices and :math:`J_t` of one run (shape (K,)) or a batch (R, K). ``radius`` is what the pull
    choice compares: the radius :math:`\\beta_a` of symmetric bounds, the width :math:`U_a - L_a` of KL bounds."""

    radius: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    gap_index: np.ndarray
    chosen: np.ndarray
    others: np.ndarray
    chosen_index: np.ndarray


def gap_indices(means: np.ndarray, radius: np.ndarray, k: int) -> GapIndices:
    r""":func:`gap_indices_of_bounds` of the symmetric bounds :math:`\hat\mu_a \pm \beta_a` (``radius``).

    Examples
    --------
    >>> gaps = gap_indices(np.array([2.0, 1.0, 0.0]), np.full(3, 1.0), 1)
    >>> gaps.gap_index.tolist(), gaps.chosen.tolist(), gaps.others.tolist()
    ([1.0, 3.0, 4.0], [0], [1, 2])
    """
    return gap_indices_of_bounds(means + radius, means - radius, radius, k)


def gap_indices_of_bounds(upper: np.ndarray, lower: np.ndarray, spread: np.ndarray, k: int) -> GapIndices:
    r""":math:`B_a = \max^{(k)}_{i \ne a} U_i - L_a`, :math:`J_t` (k smallest, ties to the smaller index), the
    other arms (both in increasing arm order) and :math:`B_{J_t} = \max_{a \in J_t} B_a`; ``spread`` is kept as
    the pull choice's measure (:class:`GapIndices`).

    The k-th largest upper bound among the other arms is the (k+1)-th largest overall for an arm ranked in
    the top k of :math:`U` and the k-th largest otherwise.

    Examples
    --------
    >>> gaps = gap_indices_of_bounds(np.array([0.9, 0.7, 0.4]), np.array([0.6, 0.2, 0.3]), np.zeros(3), 1)
    >>> [round(value, 12) for value in gaps.gap_index.tolist()], gaps.chosen.tolist()
    ([0.1, 0.7, 0.6], [0])
    """
    order = np.argsort(-upper, axis=-1, kind="stable")
    ranked = np.take_along_axis(upper, order, axis=-1)
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.broadcast_to(np.arange(upper.shape[-1]), order.shape), axis=-1)
    kth_other = np.where(position < k, ranked[..., k:k + 1], ranked[..., k - 1:k])
    index = kth_other - lower
    ranked_index = np.argsort(index, axis=-1, kind="stable")
    chosen, others = np.sort(ranked_index[..., :k], axis=-1), np.sort(ranked_index[..., k:], axis=-1)
    chosen_index = np.take_along_axis(index, chosen, axis=-1).max(axis=-1)
    return GapIndices(spread, upper, lower, index, chosen, others, chosen_index)


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
        UGapEc's accuracy: stop when :math:`B_{J_t} < \epsilon` (or :math:`\min_a B_a < \epsilon`).
    exploration : str or callable, default "heuristic"
        UGapEc's exploration rate.
    bounds : {"kl", "hoeffding"}, optional
        UGapEc's confidence bounds (module docstring): ``"kl"`` (the default in confidence mode; every family) or
        ``"hoeffding"`` (Gaussian and Bernoulli arms). UGapEb has the paper's Hoeffding radius only: None or
        ``"hoeffding"`` in budget mode.
    stop_on : {"boxes", "min-gap-index"}, default "boxes"
        UGapEc's stopping rule (module docstring): the confidence boxes separate (:math:`B_{J_t} < \epsilon`), or
        the smallest gap index is below :math:`\epsilon`.

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
    >>> bernoulli = TopKProblem([0.9, 0.6, 0.3, 0.1], k=1, family="bernoulli")
    >>> kl = identify(bernoulli, UGapE(), delta=0.1, n_runs=20, rng=1)
    >>> hoeffding = identify(bernoulli, UGapE(bounds="hoeffding"), delta=0.1, n_runs=20, rng=1)
    >>> bool(kl.stopping_times.mean() < hoeffding.stopping_times.mean())
    True
    """

    mode: str = "confidence"
    a: float | None = None
    complexity: float | None = None
    epsilon: float = 0.0
    exploration: str | Callable = "heuristic"
    bounds: str | None = None
    stop_on: str = "boxes"
    name = "ugape"
    stopping = "rule"
    uses_glr = False
    delta_dependent = True

    def __post_init__(self):
        as_choice(self.mode, "UGapE", "mode", UGAPE_MODES)
        as_float(self.epsilon, "UGapE", "epsilon", low=0.0)
        check_exploration(self.exploration, "UGapE")
        if self.bounds is not None:
            as_choice(self.bounds, "UGapE", "bounds", UGAPE_BOUNDS)
        as_choice(self.stop_on, "UGapE", "stop_on", UGAPE_STOPS)
        if self.mode == "budget":
            if self.bounds == "kl":
                fail("UGapE", "bounds", "None or 'hoeffding' in budget mode (UGapEb's radius b sqrt(a/N) is "
                     "Hoeffding's; KL bounds are UGapEc's)", self.bounds)
            if self.stop_on != "boxes":
                fail("UGapE", "stop_on", "'boxes' in budget mode (UGapEb runs to its budget and has no stopping "
                     "rule)", self.stop_on)
            for name in ("a", "complexity"):
                value = getattr(self, name)
                if value is None:
                    fail("UGapE", name, "a positive number in budget mode (UGapEb needs its exploration parameter a "
                         "and the problem complexity H, as Gabillon et al. 2012 state them)", value)
                as_float(value, "UGapE", name, low=0.0, low_open=True)

    @property
    def bound_kind(self) -> str:
        """The bounds in use: ``bounds``, or by default ``"kl"`` in confidence mode and ``"hoeffding"`` in budget
        mode."""
        if self.bounds is not None:
            return self.bounds
        return "kl" if self.mode == "confidence" else "hoeffding"

    @property
    def families(self) -> tuple[str, ...] | None:
        """Every family with KL bounds; Gaussian and Bernoulli arms with Hoeffding's (the runners refuse the rest)."""
        return None if self.bound_kind == "kl" else SUBGAUSSIAN_FAMILIES

    def _kl_bounds(self, context: RuleContext) -> bool:
        """Whether the bounds are computed as KL bounds (KL bounds off Gaussian arms, where they are Hoeffding's)."""
        return self.bound_kind == "kl" and context.family.name != "gaussian"

    @property
    def anytime(self) -> bool:
        """UGapEb's radius depends on the budget: one run per budget."""
        return self.mode == "confidence"

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 3

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        if not self._kl_bounds(context):
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
        """:math:`\\beta_a` of every arm (Hoeffding's radius, or UGapEb's)."""
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
        if not self._kl_bounds(context):
            return gap_indices(view.means, self.radius(context, view), context.k)
        beta = exploration_rate(self.exploration, view.t, context.delta_value("UGapE"), context.n_arms)
        level = np.asarray(beta)[..., None] / view.counts
        upper = kl_bound(context.family, view.means, level, True, context.dispersion)
        lower = kl_bound(context.family, view.means, level, False, context.dispersion)
        return gap_indices_of_bounds(upper, lower, upper - lower, context.k)

    def stop(self, context: RuleContext, view: RunView, state) -> bool:
        gaps = self.indices(context, view)
        if self.stop_on == "min-gap-index":
            return bool(gaps.gap_index.min(axis=-1) < self.epsilon)
        return bool(gaps.chosen_index < self.epsilon)

    def _choose(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> np.ndarray:
        gaps = self.indices(context, view)
        if self.mode == "budget":  # keep the J_t of smallest B_{J_t} seen so far
            better = gaps.chosen_index < state["best_index"][..., 0]
            state["best_index"][..., 0] = np.where(better, gaps.chosen_index, state["best_index"][..., 0])
            state["best_set"][...] = np.where(np.asarray(better)[..., None], gaps.chosen, state["best_set"])
        u = _pick(gaps.others, gaps.upper, "max", uniforms[..., 0])  # u_t, among the arms not in J_t
        l = _pick(gaps.chosen, gaps.lower, "min", uniforms[..., 1])  # l_t
        pair = np.stack([l, u], axis=-1)
        return _pick(pair, gaps.radius, "max", uniforms[..., 2])  # the wider interval (radius, or KL width)

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
        exploration rate given as a callable, or KL bounds of a divergence without compiled bounds: the step runs in
        Python)."""
        if self.mode == "confidence" and not isinstance(self.exploration, str):
            return None
        n_arms, k = context.n_arms, context.k
        kl_code = _bounds.bound_code(context.family) if self._kl_bounds(context) else -1
        if kl_code is None:
            return None
        variance = (_bounds.bound_scale(kl_code, np.broadcast_to(context.dispersion, (n_arms,))) if kl_code >= 0
                    else subgaussian_variance(context.family, context.dispersion, "UGapE"))
        confidence = self.mode == "confidence"
        delta = context.delta_value("UGapE") if confidence else np.nan
        constant = np.nan
        if not confidence:
            assert self.a is not None and self.complexity is not None  # (checked by __post_init__ in budget mode)
            constant = self.a * (context.budget_value("UGapE") - n_arms) / (4.0 * self.complexity)
        return StepKernel(ugape_step, params=UGapEParams(
            k, float(self.epsilon), confidence, kl_code, self.stop_on == "min-gap-index",
            np.ascontiguousarray(variance, dtype=float), float(constant),
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
    """What the compiled UGapE reads: k, epsilon, the mode, the bounds (the KL bounds' family number, or -1 for
    Hoeffding's), the stopping rule (the smallest gap index, else B_{J_t}), sigma^2 (the KL bounds' scale with KL
    bounds), UGapEb's radius constant, the rate table (and what grows it), and work arrays."""

    k: int
    epsilon: float
    confidence: bool
    kl_code: int
    min_gap_index: bool
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
        if params.kl_code >= 0:  # the KL bounds at level beta(t, delta) / N_a; the pull choice compares the widths
            level = params.rates[view.t] / counts[arm]
            upper[arm] = _bounds.kl_bound(params.kl_code, means[arm], level, True, params.variance[arm])
            lower[arm] = _bounds.kl_bound(params.kl_code, means[arm], level, False, params.variance[arm])
            radius[arm] = upper[arm] - lower[arm]
            continue
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
    """:meth:`UGapE.stop` compiled: B_{J_t} < epsilon, or min_a B_a < epsilon."""
    if params.confidence and view.t >= params.rates.shape[0]:
        return False  # (the step grows the table first: never reached)
    ugape_indices(row, view, state, params)
    if params.min_gap_index:
        index = state.indices_gap_index[row]
        smallest = index[0]
        for arm in range(1, index.shape[0]):
            smallest = min(smallest, index[arm])
        return smallest < params.epsilon
    return state.indices_chosen_index[row, 0] < params.epsilon


def ugape_step(row, view, state, params, uniforms, each):
    """:meth:`UGapE.select` compiled: u_t (largest U off J_t), l_t (smallest L in J_t), the one of wider interval
    (ties: l_t first, u_t second); UGapEb keeps the J_t of smallest B_{J_t}."""
    if params.confidence and view.t + 2 >= params.rates.shape[0]:
        each[0] = view.t + 2
        return GROW, 0
    ugape_indices(row, view, state, params)
    if not params.confidence and state.indices_chosen_index[row, 0] < state.best_index[row, 0]:
        state.best_index[row, 0] = state.indices_chosen_index[row, 0]
        copy_into(state.best_set[row], state.indices_chosen[row])
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
        copy_into(out, state.indices_chosen[row])
    else:
        copy_into(out, state.best_set[row])


register_policy("ugape", UGapE)
