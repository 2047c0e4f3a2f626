r"""AdaptiveTopK (Chen, Chen, Zhang, Zhou 2017, Algorithm 1): epsilon-top-K arms with probability 1 - delta, and its
fixed-budget conversion (Section 3).

Rounds :math:`r = 1, 2, \dots` keep a set :math:`S_r` of undecided arms, an accepted set :math:`A` and a
rejected set :math:`B`. While :math:`2 \cdot 2^{-r} (K - |A|) > \epsilon K` (checked with the number
:math:`r` of rounds done so far, starting at 0):

1. round :math:`r` pulls every arm of :math:`S_r` until its (cumulative) count reaches

   .. math:: N_r = \Big\lceil 4\sigma^2 \; 4^r \ln\frac{2 n r^2}{\delta} \Big\rceil,

   where :math:`4\sigma^2 = 1` for rewards in [0, 1] (Bernoulli, the paper's setting) and :math:`4\sigma^2` is four
   times the arm's variance for Gaussian rewards. This is the exact count used here: the paper writes
   :math:`2^{2r}\ln(2nr^2/\delta)` and its Claim 1 needs
   :math:`P(|\tilde\theta^r_i - \theta_i| \ge 2^{-r}) \le \delta/(2nr^2)`, which Hoeffding's inequality
   :math:`2\exp(-N 4^{-r}/(2\sigma^2))` gives at :math:`N = N_r` for sub-Gaussian rewards of variance factor
   :math:`\sigma^2` (1/4 on [0, 1]). The engine's initial pull counts toward :math:`N_1`;
2. with :math:`a` and :math:`b` the :math:`(K-|A|+1)`-th and :math:`(K-|A|)`-th largest empirical means in
   :math:`S_r` and :math:`\tilde\Delta_i = \max(\tilde\theta_i - a, b - \tilde\theta_i)`, while
   :math:`\max_i \tilde\Delta_i > 2 \cdot 2^{-r}`: the arm :math:`x` of largest :math:`\tilde\Delta` is accepted if
   :math:`\tilde\theta_x > a`, else rejected, and leaves :math:`S_r` (then :math:`a` and :math:`b` are recomputed).

At the end :math:`A` is completed by the :math:`K - |A|` arms of :math:`S` with the largest empirical means. When
every undecided arm is needed (:math:`|S| = K - |A|`, so that :math:`a` does not exist) they are all accepted.

The inner loop has a closed form, which the batched rule uses: while arms remain on both sides of the boundary,
accepting the best arm or rejecting the worst leaves :math:`a` and :math:`b` unchanged, so a round accepts exactly
the arms of the top :math:`K-|A|` with :math:`\tilde\theta_i - a > 2 \cdot 2^{-r}` and rejects exactly the others
with :math:`b - \tilde\theta_i > 2 \cdot 2^{-r}` (and a side that empties decides the rest). The scalar rule runs
the paper's loop line by line; the conformance suite checks that both choose the same arms.

Fixed budget (Section 3): "remove the outer while loop ... and stop pulling the arms once the budget is
exhausted": the rounds go on (their lengths use ``delta``, :math:`\epsilon` is not used) and the recommendation at
any budget is :math:`A` completed by the best undecided arms. The rule does not need to know the budget, so it is
anytime: one run serves every budget (the engine cuts a round's block at each budget).

Where the budget ends inside a round, the paper does not say in which order a round's pulls are made. Two readings
are equally literal, and the rule declares which one the engine uses to cut its block (``block_cut``):

* ``"water-fill"`` (the default): a round is pulled in passes, one pull per undecided arm per pass, round robin
  (in general: the undecided arm of smallest count first, ties to the smaller index, up to :math:`N_r`), so that a
  cut round leaves counts that differ by at most one. A partial round is then a uniform sample of the undecided
  arms, and the recommendation at a budget inside the first round is the empirical top-K of nearly equal counts.
* ``"arm-order"``: each arm's block in turn, arm 0's first: a cut round leaves the first arms with their whole
  round and the last ones with nothing, so that below the first round (about :math:`N_1` pulls per arm) the
  undecided arms are ranked on a single pull for most of them.

The default is the reading under which a partial round is informative; the pulls are the same at the end of every
round, so the two readings differ only at budgets that end inside a round. The cut costs one vectorised step per
round either way (:func:`allocopt.algorithms.engine.run.cut_blocks`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from ..._numba import kernel
from ..._validation import as_choice, as_float, fail
from ..engine.loop import DEFER, EACH, copy_into
from .elimination import _order, _priorities, ranked_arms
from ..engine.protocol import PullEach, RuleContext, RunView, StepKernel, register_policy

__all__ = ["AdaptiveTopK", "AdaptiveTopKFixedBudget", "adaptive_topk_round_pulls"]

_MAX_COUNT = 2**60


def adaptive_topk_round_pulls(n_arms: int, delta: float, round_index: int, variance_factor=1.0) -> np.ndarray:
    r"""Cumulative pulls of an undecided arm at the end of round ``r``: :math:`\lceil 4\sigma^2\,4^r \ln(2nr^2/\delta)\rceil`.

    Parameters
    ----------
    n_arms : int
        n, the number of arms.
    delta : float
        Confidence parameter in (0, 1).
    round_index : int
        r >= 1.
    variance_factor : float or ndarray
        :math:`4\sigma^2` per arm (1 for rewards in [0, 1]).

    Examples
    --------
    >>> int(adaptive_topk_round_pulls(1000, 0.01, 1))  # ceil(4 ln(2 * 1000 / 0.01)) = ceil(48.83)
    49
    """
    value = np.asarray(variance_factor, dtype=float) * 4.0**round_index * math.log(
        2.0 * n_arms * round_index**2 / delta)
    return np.minimum(np.ceil(value), _MAX_COUNT).astype(np.int64)


def _variance_factor(context: RuleContext, func: str) -> np.ndarray:
    name = context.family.name
    if name == "bernoulli":
        return np.ones(context.n_arms)
    if name == "gaussian":
        return 4.0 * np.asarray(context.dispersion, dtype=float)
    fail(func, "problem", "a problem with bernoulli rewards (in [0, 1], the paper's setting) or gaussian rewards "
         "(sub-Gaussian with the known variance): Hoeffding's bound behind the round lengths needs one of them",
         name)


@dataclass(frozen=True)
class AdaptiveTopK:
    r"""AdaptiveTopK (Chen, Chen, Zhang, Zhou 2017, Algorithm 1), the PAC form: run it with
    :func:`~allocopt.algorithms.pac_identify`, which passes :math:`\epsilon` and :math:`\delta`.

    It stops when its rounds end (``stopping = "rule"``) and recommends the accepted arms completed by the best
    undecided ones; with probability at least :math:`1-\delta` their aggregate regret is at most
    :math:`\epsilon` (Theorem 4), after :math:`O((\log\log\epsilon^{-1} + \log n + \log\delta^{-1}) H(t,\epsilon))`
    pulls (:func:`allocopt.complexity.adaptive_topk_sample_complexity`). See the module docstring for the exact
    round lengths.

    Parameters
    ----------
    block_cut : {"water-fill", "arm-order"}, default "water-fill", keyword only
        The order of a round's pulls where a budget or a sample cap ends inside it: in passes, round robin
        (``"water-fill"``), or each arm's block in turn (``"arm-order"``); see the module docstring.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import pac_identify
    >>> problem = TopKProblem([0.9, 0.9, 0.1, 0.1, 0.1], k=2, family="bernoulli")
    >>> result = pac_identify(problem, AdaptiveTopK(), epsilon=0.1, delta=0.1, n_runs=10, rng=0)
    >>> bool(result.correct.all()), result.recommendations.shape
    (True, (10, 2))
    """

    name: ClassVar[str] = "adaptive-topk"
    stopping: ClassVar[str] = "rule"
    uses_glr: ClassVar[bool] = False
    uses_empirical_top: ClassVar[bool] = False
    fixed_budget: ClassVar[bool] = False
    block_cut: str = field(default="water-fill", kw_only=True)

    def __post_init__(self):
        as_choice(self.block_cut, type(self).__name__, "block_cut", ("water-fill", "arm-order"))

    # --- parameters ---------------------------------------------------------------------------------------------
    def _parameters(self, context: RuleContext) -> tuple[float, float]:
        """(epsilon, delta) of the run."""
        func = type(self).__name__
        if context.epsilon is None or context.delta is None:
            fail(func, "policy", "run by pac_identify (AdaptiveTopK needs the accuracy epsilon and the confidence "
                 "delta of a PAC run; its fixed-budget form is AdaptiveTopKFixedBudget)", self)
        return float(context.epsilon), float(context.delta)

    def _targets(self, context: RuleContext, round_index) -> np.ndarray:
        _, delta = self._parameters(context)
        factor = _variance_factor(context, type(self).__name__)
        rounds = np.atleast_1d(np.asarray(round_index, dtype=np.int64))
        value = factor[None, :] * 4.0 ** rounds[:, None].astype(float) * np.log(
            2.0 * context.n_arms * rounds[:, None].astype(float) ** 2 / delta)
        return np.minimum(np.ceil(value), _MAX_COUNT).astype(np.int64)

    def _outer_done(self, context: RuleContext, rounds_done, to_accept):
        if self.fixed_budget:
            return np.zeros(np.shape(to_accept), dtype=bool)
        epsilon, _ = self._parameters(context)
        return 2.0 * 2.0 ** -np.asarray(rounds_done, dtype=float) * to_accept <= epsilon * context.k

    # --- protocol -------------------------------------------------------------------------------------------------
    def uniforms_per_step(self, context: RuleContext) -> int:
        return 1

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        self._parameters(context)
        _variance_factor(context, type(self).__name__)
        n_arms = context.n_arms
        return {"active": np.ones((n_runs, n_arms), dtype=bool), "accepted": np.zeros((n_runs, n_arms), dtype=bool),
                "round": np.zeros((n_runs, 1), dtype=np.int64), "finished": np.zeros((n_runs, 1), dtype=bool),
                "priority": np.full((n_runs, n_arms), np.nan)}

    # --- one run: the paper's loops line by line ------------------------------------------------------------------
    def _advance(self, context: RuleContext, counts: np.ndarray, sums: np.ndarray, state) -> None:
        active, accepted = state["active"], state["accepted"]
        priority = _order(state["priority"])
        while not state["finished"][0]:
            to_accept = context.k - int(accepted.sum())
            undecided = np.flatnonzero(active)
            if to_accept == 0 or self._outer_done(context, state["round"][0], to_accept):
                state["finished"][0] = True
                break
            if to_accept == undecided.size:
                accepted[undecided] = True
                active[:] = False
                state["finished"][0] = True
                break
            round_index = int(state["round"][0]) + 1
            if np.any(counts[undecided] < self._targets(context, round_index)[0, undecided]):
                break  # round r's pulls are not done yet
            threshold = 2.0 * 2.0**-round_index
            means = sums / counts
            while True:  # Algorithm 1, lines 6-14
                undecided = np.flatnonzero(active)
                to_accept = context.k - int(accepted.sum())
                if to_accept == 0 or to_accept == undecided.size:
                    break
                values = means[undecided]
                order = np.lexsort((priority[undecided], -values))
                a, b = values[order[to_accept]], values[order[to_accept - 1]]
                gaps = np.maximum(values - a, b - values)
                if gaps.max() <= threshold:
                    break
                largest = np.flatnonzero(gaps == gaps.max())
                x = int(largest[np.argmin(priority[undecided][largest])])
                if values[x] > a:
                    accepted[undecided[x]] = True
                active[undecided[x]] = False
            state["round"][0] = round_index

    def compiled_step(self, context: RuleContext) -> StepKernel:
        """:func:`adaptive_step` with its ``stop`` and ``recommend`` for the engine's compiled loop (the round
        lengths tabulated by :meth:`_targets`); the first step, which draws the run's order, runs in Python."""
        epsilon = 0.0 if self.fixed_budget else self._parameters(context)[0]
        n_arms = context.n_arms
        return StepKernel(adaptive_step, params=AdaptiveParams(
            context.k, self._targets(context, np.arange(1, _ROUND_TABLE + 1)), float(epsilon), bool(self.fixed_budget),
            np.empty((3, n_arms), dtype=np.int64), np.empty((2, n_arms)), np.empty((2, n_arms), dtype=np.bool_)),
            state=AdaptiveState, stop=adaptive_stop, recommend=adaptive_recommend)

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> PullEach:
        if np.isnan(state["priority"][0]):
            state["priority"][:] = _priorities(float(uniforms[0]), context.n_arms)
        self._advance(context, view.counts, view.sums, state)
        if state["finished"][0]:
            return PullEach(np.full(context.n_arms, _MAX_COUNT // context.n_arms, dtype=np.int64))
        target = self._targets(context, int(state["round"][0]) + 1)[0]
        return PullEach(np.where(state["active"], np.maximum(target - view.counts, 0), 0).astype(np.int64))

    def stop(self, context: RuleContext, view: RunView, state) -> bool:
        state = {name: values.copy() for name, values in state.items()}
        self._advance(context, view.counts, view.sums, state)
        return bool(state["finished"][0])

    def recommend(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        state = {name: values.copy() for name, values in state.items()}
        self._advance(context, view.counts, view.sums, state)
        chosen = np.flatnonzero(state["accepted"])
        undecided = np.flatnonzero(state["active"])
        order = np.lexsort((_order(state["priority"])[undecided], -view.means[undecided]))
        return np.sort(np.concatenate([chosen, undecided[order[:context.k - chosen.size]]]))

    # --- a batch of runs: the closed form of the inner loop ------------------------------------------------------
# ------------------------------------------------------------------------------------------- compiled step
_ROUND_TABLE = 64  # rounds tabulated: 4^r passes the count cap 2^60 at r = 30


class AdaptiveState(NamedTuple):
    """AdaptiveTopK's state in the compiled loop (the arrays of ``init_state``)."""

    active: np.ndarray
    accepted: np.ndarray
    round: np.ndarray
    finished: np.ndarray
    priority: np.ndarray


class AdaptiveParams(NamedTuple):
    """What the compiled AdaptiveTopK reads: k, the rounds' target counts (row r - 1: round r), epsilon, whether the
    outer loop is removed (the fixed-budget form), and work arrays."""

    k: int
    targets: np.ndarray
    epsilon: float
    fixed_budget: bool
    order: np.ndarray  # (3, K) int work
    values: np.ndarray  # (2, K) work
    flags: np.ndarray  # (2, K) bool work


@kernel
def advance_adaptive(row, counts, means, active, accepted, round_state, finished, priority, params):
    """:meth:`AdaptiveTopK._advance` for one run (the paper's loops, Algorithm 1), on the given state rows."""
    arms, order = params.order[0], params.order[1]
    n_arms = counts.shape[0]
    while not finished[0]:
        n_undecided, n_accepted = 0, 0
        for arm in range(n_arms):
            if active[arm]:
                arms[n_undecided] = arm
                n_undecided += 1
            n_accepted += accepted[arm]
        to_accept = params.k - n_accepted
        if to_accept == 0 or (not params.fixed_budget
                              and 2.0 * 2.0 ** -float(round_state[0]) * to_accept <= params.epsilon * params.k):
            finished[0] = True
            break
        if to_accept == n_undecided:
            for position in range(n_undecided):
                accepted[arms[position]] = True
                active[arms[position]] = False
            finished[0] = True
            break
        round_index = round_state[0] + 1
        for position in range(n_undecided):
            if counts[arms[position]] < params.targets[round_index - 1, arms[position]]:
                return  # round r's pulls are not done yet
        threshold = 2.0 * 2.0 ** -float(round_index)
        while True:  # Algorithm 1, lines 6-14
            n_undecided, n_accepted = 0, 0
            for arm in range(n_arms):
                if active[arm]:
                    arms[n_undecided] = arm
                    n_undecided += 1
                n_accepted += accepted[arm]
            to_accept = params.k - n_accepted
            if to_accept == 0 or to_accept == n_undecided:
                break
            ranked_arms(arms, n_undecided, means, priority, order)
            a, b = means[order[to_accept]], means[order[to_accept - 1]]
            chosen, largest = -1, -np.inf
            for position in range(n_undecided):  # the largest gap, ties to the smallest priority
                arm = arms[position]
                gap = max(means[arm] - a, b - means[arm])
                if gap > largest or (gap == largest and priority[arm] < priority[chosen]):
                    chosen, largest = arm, gap
            if largest <= threshold:
                break
            if means[chosen] > a:
                accepted[chosen] = True
            active[chosen] = False
        round_state[0] = round_index


@kernel
def advance_copy(row, view, state, params):
    """:func:`advance_adaptive` on a copy of the run's state (the work rows of ``params``): returns the copy's
    accepted arms, active arms and whether the rounds are over."""
    active, accepted = params.flags[0], params.flags[1]
    copy_into(active, state.active[row])
    copy_into(accepted, state.accepted[row])
    round_copy = state.round[row].copy()
    finished = state.finished[row].copy()
    advance_adaptive(row, view.counts, view.means, active, accepted, round_copy, finished,
                     order_keys(state.priority[row], params.values[0]), params)
    return accepted, active, finished[0]


@kernel
def order_keys(priority, out):
    """The tie-break keys of :func:`_order`: the run's order, or the arm index before it is drawn."""
    for arm in range(priority.shape[0]):
        out[arm] = arm if priority[arm] != priority[arm] else priority[arm]
    return out


def adaptive_step(row, view, state, params, uniforms, each):
    """:meth:`AdaptiveTopK.select` compiled."""
    if state.priority[row, 0] != state.priority[row, 0]:
        return DEFER, 0
    n_arms = view.counts.shape[0]
    advance_adaptive(row, view.counts, view.means, state.active[row], state.accepted[row], state.round[row],
                     state.finished[row], state.priority[row], params)
    if state.finished[row, 0]:
        for arm in range(n_arms):
            each[arm] = _MAX_COUNT // n_arms
        return EACH, 0
    round_index = state.round[row, 0] + 1
    for arm in range(n_arms):
        each[arm] = max(params.targets[round_index - 1, arm] - view.counts[arm], 0) if state.active[row, arm] else 0
    return EACH, 0


def adaptive_stop(row, view, state, params):
    """:meth:`AdaptiveTopK.stop` compiled."""
    return advance_copy(row, view, state, params)[2]


def adaptive_recommend(row, view, state, params, out):
    """:meth:`AdaptiveTopK.recommend` compiled: the accepted arms, completed by the undecided arms of largest mean
    (ties: the run's order), in increasing arm order."""
    accepted, active, _ = advance_copy(row, view, state, params)
    arms, order = params.order[0], params.order[1]
    n_arms, chosen, n_active = view.counts.shape[0], 0, 0
    for arm in range(n_arms):
        chosen += accepted[arm]
        if active[arm]:
            arms[n_active] = arm
            n_active += 1
    ranked_arms(arms, n_active, view.means, order_keys(state.priority[row], params.values[1]), order)
    for position in range(min(params.k - chosen, n_active)):
        accepted[order[position]] = True
    filled = 0
    for arm in range(n_arms):
        if accepted[arm]:
            out[filled] = arm
            filled += 1


@dataclass(frozen=True)
class AdaptiveTopKFixedBudget(AdaptiveTopK):
    r"""AdaptiveTopK converted to a fixed budget (Chen, Chen, Zhang, Zhou 2017, Section 3).

    The outer loop is removed: rounds go on with the lengths of :class:`AdaptiveTopK` (which use ``delta``) until
    the budget is spent, and the recommendation is the accepted arms completed by the undecided arms of largest
    empirical mean. Anytime: one run of :func:`~allocopt.algorithms.identify_fixed_budget` serves every budget.

    Parameters
    ----------
    delta : float, default 0.01
        Confidence parameter of the round lengths, in (0, 1) (the paper's experiments: 0.01).
    block_cut : {"water-fill", "arm-order"}, default "water-fill", keyword only
        The order of a round's pulls where a budget ends inside it: in passes, round robin (``"water-fill"``), or
        each arm's block in turn (``"arm-order"``); see the module docstring.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify_fixed_budget
    >>> problem = TopKProblem([0.9, 0.8, 0.2, 0.1], k=2, family="bernoulli")
    >>> result = identify_fixed_budget(problem, AdaptiveTopKFixedBudget(), [100, 2000], n_runs=20, rng=1)
    >>> result.error_rate.tolist()
    [0.0, 0.0]
    """

    delta: float = 0.01
    name: ClassVar[str] = "adaptive-topk-budget"
    stopping: ClassVar[str] = "glr"
    fixed_budget: ClassVar[bool] = True
    anytime: ClassVar[bool] = True

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "delta", as_float(self.delta, "AdaptiveTopKFixedBudget", "delta", low=0.0,
                                                   high=1.0, low_open=True, high_open=True))

    def _parameters(self, context: RuleContext) -> tuple[float, float]:
        return math.nan, self.delta


register_policy("adaptive-topk", AdaptiveTopK)
register_policy("adaptive-topk-budget", AdaptiveTopKFixedBudget)
