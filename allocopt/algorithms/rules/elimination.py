r"""Fixed-budget elimination rules for the top-M arms: NSAR (and SAR, its p = 1 case), Successive Rejects and
Sequential Halving.

All four proceed in rounds. Round ``r`` pulls every active arm until its count reaches the round's cumulative
target (one :class:`~allocopt.algorithms.engine.protocol.PullEach` step, so a round costs one vectorised step), then
deactivates arms by a rule of the round:

* **NSAR** (Shahrampour and Tarokh 2017, Figure 1): :math:`C_p = 2^{-p} + \sum_{r=2}^K r^{-p}` and
  :math:`n_r = \lceil (T-K) / (C_p (K-r+1)^p) \rceil`, :math:`r = 1..K-1`; round ``r`` brings the active arms to
  :math:`n_r` pulls, sorts their empirical means :math:`\hat\mu_{\sigma(1)} \ge \dots`, computes the empirical gaps
  :math:`\hat\Delta_{\sigma(\ell)} = \hat\mu_{\sigma(\ell)} - \hat\mu_{\sigma(m_r+1)}` for :math:`\ell \le m_r` and
  :math:`\hat\mu_{\sigma(m_r)} - \hat\mu_{\sigma(\ell)}` otherwise (:math:`m_r` arms still to accept), deactivates the
  arm of largest gap, and accepts it if :math:`\hat\mu > \hat\mu_{\sigma(m_r+1)}`, else rejects it. SAR (Bubeck,
  Wang, Viswanathan 2013) is NSAR with :math:`p = 1`, where :math:`C_1 = \overline{\log}(K)`.
* **Successive Rejects** (Audibert and Bubeck 2010): the same rounds with :math:`n_k = \lceil (T-K) /
  (\overline{\log}(K)(K+1-k)) \rceil` (equal to SAR's), rejecting the active arm of lowest empirical mean; for the
  top M it stops rejecting when M arms remain, and recommends them.
* **Sequential Halving** (Karnin, Koren, Somekh 2013, Algorithm 1, for the top M): :math:`L = \lceil \log_2(K/M)
  \rceil` rounds; round ``r`` pulls each of its :math:`|S_r|` arms :math:`t_r = \lfloor T / (|S_r| L) \rfloor` more
  times and keeps the :math:`\max(M, \lceil |S_r|/2 \rceil)` arms of largest empirical mean *over that round's
  samples*.

Conventions (where the papers leave a choice):

* The engine's initial pull of every arm counts as the first pull of round 1.
* When every remaining arm must be accepted (:math:`m_r` equals the number of active arms) or none
  (:math:`m_r = 0`), the rule decides them at once and its rounds end; a round whose target the arms already
  reached (zero new pulls, frequent in the first rounds of NSAR and SAR) is decided in the same step.
* The pulls the schedule leaves of the budget (at most K for NSAR and SAR, more when the rounds end early)
  are spent on all arms in one block and never change the recommendation.
* Ties (equal empirical means or gaps) are broken by a random order of the arms drawn once per run from the
  run's own uniforms (the first step's uniform seeds it), so that no arm index is favoured.

These rules need the budget (``anytime = False``): run them with
:func:`~allocopt.algorithms.identify_fixed_budget`. A budget too small for one pull per arm and round is an
error, as is :math:`p \le 0`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from ..._numba import kernel
from ..._validation import as_int, as_positive_float, fail
from ...complexity.top_m import c_p, logbar
from ..engine.loop import DEFER, EACH, copy_into
from ..engine.protocol import PullEach, RuleContext, RunView, StepKernel, register_policy

__all__ = ["NSAR", "SAR", "SuccessiveRejects", "SequentialHalving", "nsar_schedule", "successive_rejects_schedule",
           "sequential_halving_schedule"]


def _check_budget_and_arms(budget, n_arms, func: str) -> tuple[int, int]:
    n_arms = as_int(n_arms, func, "n_arms", low=2)
    budget = as_int(budget, func, "budget", low=1)
    return budget, n_arms


def nsar_schedule(n_arms: int, budget: int, p: float) -> np.ndarray:
    r"""NSAR's cumulative pulls per active arm, :math:`n_r = \lceil (T-K)/(C_p (K-r+1)^p) \rceil`, :math:`r = 1..K-1`.

    Shahrampour and Tarokh (2017), Figure 1. Every arm is pulled :math:`n_1` times, and the arms still active at
    round ``r`` reach :math:`n_r`, so the rounds pull :math:`\sum_{r=1}^{K-1} n_r + n_{K-1} \le T` times in all.

    Parameters
    ----------
    n_arms : int
        K >= 2.
    budget : int
        T; at least K + 1, so that :math:`n_1 \ge 1` (one pull per arm in the first round).
    p : float
        The nonlinearity, p > 0 (p = 1 is SAR).

    Examples
    --------
    >>> nsar_schedule(3, 20, 1.0).tolist()  # C_1 = 1/2 + 1/2 + 1/3 = 4/3: ceil(17/4), ceil(17/(8/3))
    [5, 7]
    """
    return _nsar_schedule(n_arms, budget, p, "nsar_schedule")


def _nsar_schedule(n_arms, budget, p, func: str) -> np.ndarray:
    budget, n_arms = _check_budget_and_arms(budget, n_arms, func)
    p = as_positive_float(p, func, "p")
    if budget <= n_arms:
        fail(func, "budget", f"an integer >= K + 1 = {n_arms + 1} (so that every arm gets at least one "
             f"pull in the first round)", budget)
    remaining_arms = np.arange(n_arms, 1, -1, dtype=float)  # K - r + 1 for r = 1..K-1
    return np.ceil((budget - n_arms) / (c_p(n_arms, p) * remaining_arms**p)).astype(np.int64)


def successive_rejects_schedule(n_arms: int, budget: int) -> np.ndarray:
    r"""Successive Rejects' phase lengths :math:`n_k = \lceil (T-K) / (\overline{\log}(K) (K+1-k)) \rceil`, k = 1..K-1.

    Audibert and Bubeck (2010), with :math:`\overline{\log}(K) = 1/2 + \sum_{i=2}^K 1/i`. Equal to
    :func:`nsar_schedule` at p = 1 (since :math:`C_1 = \overline{\log}(K)`).

    Examples
    --------
    >>> successive_rejects_schedule(3, 20).tolist()
    [5, 7]
    """
    return _successive_rejects_schedule(n_arms, budget, "successive_rejects_schedule")


def _successive_rejects_schedule(n_arms, budget, func: str) -> np.ndarray:
    budget, n_arms = _check_budget_and_arms(budget, n_arms, func)
    if budget <= n_arms:
        fail(func, "budget", f"an integer >= K + 1 = {n_arms + 1} (so that every arm gets "
             f"at least one pull in the first phase)", budget)
    phase = np.arange(1, n_arms, dtype=float)
    return np.ceil((budget - n_arms) / (logbar(n_arms) * (n_arms + 1 - phase))).astype(np.int64)


def _halving_sizes(n_arms: int, m: int) -> list[int]:
    sizes = [n_arms]
    while sizes[-1] > m:
        sizes.append(max(m, -(-sizes[-1] // 2)))
    return sizes


def sequential_halving_schedule(n_arms: int, m: int, budget: int) -> np.ndarray:
    r"""Sequential Halving's pulls per arm and round, :math:`t_r = \lfloor T / (|S_r| L) \rfloor`.

    Karnin, Koren, Somekh (2013), Algorithm 1, for the top ``m``: :math:`L = \lceil \log_2(K/m) \rceil` rounds,
    :math:`|S_0| = K` and :math:`|S_{r+1}| = \max(m, \lceil |S_r|/2 \rceil)`. In all at most T pulls.

    Examples
    --------
    >>> sequential_halving_schedule(8, 1, 96).tolist()  # L = 3: 96 // 24, 96 // 12, 96 // 6
    [4, 8, 16]
    """
    return _sequential_halving_schedule(n_arms, m, budget, "sequential_halving_schedule")


def _sequential_halving_schedule(n_arms, m, budget, func: str) -> np.ndarray:
    budget, n_arms = _check_budget_and_arms(budget, n_arms, func)
    m = as_int(m, func, "m", low=1, high=n_arms - 1)
    sizes = _halving_sizes(n_arms, m)[:-1]
    rounds = len(sizes)
    if budget < n_arms * rounds:
        fail(func, "budget", f"an integer >= K L = {n_arms * rounds} (one pull per arm "
             f"in each of the L = {rounds} rounds)", budget)
    return np.array([budget // (size * rounds) for size in sizes], dtype=np.int64)


def _priorities(uniform: float, n_arms: int) -> np.ndarray:
    """A random order of the arms (distinct ranks as floats) from one uniform of the run's own stream."""
    generator = np.random.default_rng(int(uniform * 2.0**53))
    return generator.permutation(n_arms).astype(float)


def _order(priority: np.ndarray) -> np.ndarray:
    """Tie-break keys (the arm index before the run's random order is drawn)."""
    return np.where(np.isnan(priority), np.arange(priority.shape[-1], dtype=float), priority)


class _Rounds:
    """The machinery shared by the round-based fixed-budget rules (see the module docstring)."""

    uses_glr: ClassVar[bool] = False
    uses_empirical_top: ClassVar[bool] = False
    anytime: ClassVar[bool] = False
    fresh_means: ClassVar[bool] = False  # Sequential Halving: means over the current round's samples only

    # --- to define in each rule -------------------------------------------------------------------------------
    def targets(self, context: RuleContext) -> np.ndarray:  # pragma: no cover - abstract
        """Cumulative pulls of an active arm at the end of each round (validates the budget)."""
        raise NotImplementedError

    def _decide(self, context: RuleContext, round_index: int, values: np.ndarray, priority: np.ndarray,
                m: int) -> tuple[int, bool] | tuple[np.ndarray, np.ndarray] | np.ndarray:
        """Round ``round_index``'s decision on the active arms (their ``values`` and tie-break keys, ``m`` arms
        still to accept): one arm and whether it is accepted, arrays of arms and whether each is accepted, or
        an array of rejected arms (positions among the active arms)."""
        raise NotImplementedError  # pragma: no cover - abstract

    # --- protocol ---------------------------------------------------------------------------------------------
    def _budget_targets(self, context: RuleContext) -> np.ndarray:
        if context.budget is None:
            fail(type(self).__name__, "budget", f"given: {type(self).__name__} is a fixed-budget rule (run it with "
                 "identify_fixed_budget, which passes the budget to the rule)", None)
        return self.targets(context)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 1

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        self._budget_targets(context)
        n_arms = context.n_arms
        return {"active": np.ones((n_runs, n_arms), dtype=bool), "accepted": np.zeros((n_runs, n_arms), dtype=bool),
                "round": np.zeros((n_runs, 1), dtype=np.int64), "priority": np.full((n_runs, n_arms), np.nan),
                "start_counts": np.zeros((n_runs, n_arms), dtype=np.int64), "start_sums": np.zeros((n_runs, n_arms))}

    rule_kind: ClassVar[int] = -1  # the decision of the compiled step (NSAR_DECISION, ...)

    def quantile_rounds(self, context: RuleContext) -> int:
        """OptMAI's Quantile-Elimination rounds (0 for the other rules)."""
        return 0

    def compiled_step(self, context: RuleContext) -> StepKernel:
        """:func:`rounds_step` (and :func:`rounds_recommend`) for the engine's compiled loop; the first step, which
        draws the run's random order of the arms, runs in Python."""
        n_arms = context.n_arms
        return StepKernel(rounds_step, params=RoundsParams(
            self.rule_kind, context.k, np.asarray(self._budget_targets(context), dtype=np.int64),
            int(context.budget_value(type(self).__name__)), bool(self.fresh_means), self.quantile_rounds(context),
            np.empty((4, n_arms), dtype=np.int64), np.empty((2, n_arms)), np.empty((2, n_arms), dtype=np.bool_)),
            state=RoundsState, recommend=rounds_recommend)

    # --- one run ----------------------------------------------------------------------------------------------
    def _round_values(self, counts, sums, state) -> np.ndarray:
        if self.fresh_means:
            pulled = counts - state["start_counts"]
            return np.divide(sums - state["start_sums"], pulled, out=np.full(np.shape(sums), np.nan), where=pulled > 0)
        return sums / counts

    def _advance(self, context: RuleContext, targets: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                 state: dict[str, np.ndarray]) -> None:
        """Decide every round whose pulls are complete, and the remaining arms once they are determined."""
        active, accepted = state["active"], state["accepted"]
        round_index = int(state["round"][0])
        while active.any():
            arms = np.flatnonzero(active)
            to_accept = context.k - int(accepted.sum())
            if to_accept == 0:  # every arm still active is rejected
                active[:] = False
                break
            if to_accept == arms.size:  # every arm still active is accepted
                accepted[arms] = True
                active[:] = False
                break
            if round_index >= targets.size or np.any(counts[arms] < targets[round_index]):
                break
            values = self._round_values(counts, sums, state)[arms]
            decision = self._decide(context, round_index, values, _order(state["priority"])[arms], to_accept)
            if isinstance(decision, tuple):  # arms deactivated, each accepted or rejected
                position, accept = decision
                accepted[arms[position]] = accept
                active[arms[position]] = False
            else:  # a set of arms rejected
                active[arms[decision]] = False
            if self.fresh_means:
                state["start_counts"][:] = counts
                state["start_sums"][:] = sums
            round_index += 1
        state["round"][0] = round_index

    def select(self, context: RuleContext, view: RunView, state: dict[str, np.ndarray],
               uniforms: np.ndarray) -> PullEach:
        if np.isnan(state["priority"][0]):
            state["priority"][:] = _priorities(float(uniforms[0]), context.n_arms)
        targets = self._budget_targets(context)
        self._advance(context, targets, view.counts, view.sums, state)
        if state["active"].any():
            round_index = int(state["round"][0])
            return PullEach(np.where(state["active"], targets[round_index] - view.counts, 0).astype(np.int64))
        remaining = context.budget_value(type(self).__name__) - int(view.t)
        return PullEach(np.full(context.n_arms, -(-remaining // context.n_arms), dtype=np.int64))

    def recommend(self, context: RuleContext, view: RunView, state: dict[str, np.ndarray]) -> np.ndarray:
        """The accepted arms (after deciding any round whose pulls are complete), completed by the active arms of
        largest empirical mean when the rounds are not over."""
        state = {name: values.copy() for name, values in state.items()}
        self._advance(context, self._budget_targets(context), view.counts, view.sums, state)
        chosen = np.flatnonzero(state["accepted"])
        missing = context.k - chosen.size
        if missing > 0:
            arms = np.flatnonzero(state["active"])
            order = np.lexsort((_order(state["priority"])[arms], -view.means[arms]))
            chosen = np.concatenate([chosen, arms[order[:missing]]])
        return np.sort(chosen)

    # --- a batch of runs --------------------------------------------------------------------------------------
def _ranks(order: np.ndarray) -> np.ndarray:
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(order.shape[1]), order.shape).copy(), axis=1)
    return rank


class EmpiricalGaps(NamedTuple):
    """The empirical gaps of the active arms of R rows (:func:`empirical_gaps`)."""

    gaps: np.ndarray
    """(R, K): the gap of each active arm (-inf for the inactive ones)."""
    in_top: np.ndarray
    """(R, K): the arm is among the m empirically best active arms (ties: the run's random order)."""
    above: np.ndarray
    """(R,): the (m+1)-th largest active mean, sigma(m+1)."""


def empirical_gaps(keys: np.ndarray, priority: np.ndarray, to_accept: np.ndarray) -> EmpiricalGaps:
    r"""The empirical gaps of Successive Accepts and Rejects (Bubeck, Wang, Viswanathan 2013), row by row.

    With the active arms' empirical means sorted :math:`\hat\mu_{\sigma(1)} \ge \hat\mu_{\sigma(2)} \ge \dots`
    (ties in the run's random order ``priority``) and :math:`m` arms still to accept, the gap of
    :math:`\sigma(\ell)` is :math:`\hat\mu_{\sigma(\ell)} - \hat\mu_{\sigma(m+1)}` for :math:`\ell \le m` and
    :math:`\hat\mu_{\sigma(m)} - \hat\mu_{\sigma(\ell)}` otherwise.

    Parameters
    ----------
    keys : ndarray, shape (R, K)
        The empirical means, -inf for the inactive arms.
    priority : ndarray, shape (R, K)
        Tie-break keys (smaller first).
    to_accept : ndarray of int, shape (R,)
        m, with 1 <= m < the number of active arms.

    Examples
    --------
    >>> gaps = empirical_gaps(np.array([[0.9, 0.5, 0.4, -np.inf]]), np.array([[0.0, 1.0, 2.0, 3.0]]), np.array([1]))
    >>> gaps.gaps.round(2).tolist(), gaps.in_top.tolist(), gaps.above.tolist()
    ([[0.4, 0.4, 0.5, -inf]], [[True, False, False, False]], [0.5])
    """
    order = np.lexsort((priority, -keys), axis=-1)
    index = np.arange(keys.shape[0])
    above = keys[index, order[index, to_accept]]
    below = keys[index, order[index, to_accept - 1]]
    in_top = _ranks(order) < to_accept[:, None]
    gaps = np.where(in_top, keys - above[:, None], below[:, None] - keys)
    return EmpiricalGaps(np.where(np.isfinite(keys), gaps, -np.inf), in_top, above)


@dataclass(frozen=True)
class NSAR(_Rounds):
    r"""Nonlinear Sequential Accepts and Rejects (Shahrampour and Tarokh 2017, Figure 1); SAR at p = 1.

    Round ``r = 1..K-1`` brings the active arms to :math:`n_r = \lceil (T-K)/(C_p (K-r+1)^p) \rceil` pulls
    (:func:`nsar_schedule`), sorts their empirical means, and deactivates the arm of largest empirical gap
    (against the :math:`(m_r+1)`-th mean for the :math:`m_r` best, against the :math:`m_r`-th for the others),
    accepting it if its mean exceeds the :math:`(m_r+1)`-th. Proposition 2: :math:`P(\text{error}) \le 2K^2
    \exp(-(T-K)/(8 C_p H^{(M)}(p)))` (:func:`allocopt.complexity.nsar_error_bound`). See the module docstring for
    the conventions.

    Parameters
    ----------
    p : float, default 1.1
        The nonlinearity, p > 0 (the paper's analysis takes p in (0, 2]; its experiments p in {0.7, 0.85, 1.1,
        1.2, 1.3}, whose middle value is the default).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify_fixed_budget
    >>> problem = TopKProblem([0.9, 0.8, 0.3, 0.2, 0.1], k=2, family="bernoulli")
    >>> result = identify_fixed_budget(problem, NSAR(p=0.85), [400], n_runs=40, rng=2)
    >>> bool(result.error_rate[0] < 0.2)
    True
    """

    p: float = 1.1
    rule_kind: ClassVar[int] = 0

    def __post_init__(self):
        object.__setattr__(self, "p", as_positive_float(self.p, "NSAR", "p"))

    @property
    def name(self) -> str:
        return "sar" if self.p == 1.0 else f"nsar(p={self.p:g})"

    def targets(self, context: RuleContext) -> np.ndarray:
        return _nsar_schedule(context.n_arms, context.budget_value(self.name), self.p, "NSAR")

    def _decide(self, context, round_index, values, priority, to_accept):
        gaps = empirical_gaps(values[None], priority[None], np.array([to_accept]))
        largest = np.flatnonzero(gaps.gaps[0] == gaps.gaps[0].max())
        position = int(largest[np.argmin(priority[largest])])
        return position, bool(values[position] > gaps.above[0])

def SAR() -> NSAR:
    """Successive Accepts and Rejects (Bubeck, Wang, Viswanathan 2013): :class:`NSAR` with p = 1 (name ``"sar"``).

    Also the fixed-budget baseline SAR of Wang, Yang, You (2022, Appendix C.3).

    Examples
    --------
    >>> SAR().name, SAR().p
    ('sar', 1.0)
    """
    return NSAR(p=1.0)


@dataclass(frozen=True)
class SuccessiveRejects(_Rounds):
    r"""Successive Rejects (Audibert and Bubeck 2010) for the top M.

    Phases k = 1, 2, ... bring the active arms to :math:`n_k = \lceil (T-K)/(\overline{\log}(K)(K+1-k)) \rceil`
    pulls (:func:`successive_rejects_schedule`, equal to SAR's) and reject the active arm of lowest empirical
    mean, until M arms remain; they are recommended. (For M = 1 this is the paper's algorithm; for M > 1 the
    last M - 1 phases of the schedule are not needed.)

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify_fixed_budget
    >>> problem = TopKProblem([0.9, 0.8, 0.3, 0.2, 0.1], k=2, family="bernoulli")
    >>> result = identify_fixed_budget(problem, SuccessiveRejects(), [400], n_runs=40, rng=2)
    >>> bool(result.error_rate[0] < 0.2)
    True
    """

    name = "successive-rejects"
    rule_kind: ClassVar[int] = 1

    def targets(self, context: RuleContext) -> np.ndarray:
        return _successive_rejects_schedule(context.n_arms, context.budget_value(self.name), "SuccessiveRejects")

    def _decide(self, context, round_index, values, priority, to_accept):
        return int(np.lexsort((priority, values))[0]), False  # the lowest empirical mean is rejected

@dataclass(frozen=True)
class SequentialHalving(_Rounds):
    r"""Sequential Halving (Karnin, Koren, Somekh 2013, Algorithm 1) for the top M.

    :math:`L = \lceil \log_2(K/M) \rceil` rounds; round ``r`` pulls each of its :math:`|S_r|` arms :math:`t_r =
    \lfloor T/(|S_r| L) \rfloor` more times (:func:`sequential_halving_schedule`) and keeps the
    :math:`\max(M, \lceil |S_r|/2 \rceil)` arms of largest mean over the round's own samples; the last M are
    recommended.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify_fixed_budget
    >>> problem = TopKProblem([0.9, 0.8, 0.3, 0.2, 0.1], k=2, family="bernoulli")
    >>> result = identify_fixed_budget(problem, SequentialHalving(), [400], n_runs=40, rng=2)
    >>> bool(result.error_rate[0] < 0.2)
    True
    """

    name = "sequential-halving"
    fresh_means: ClassVar[bool] = True
    rule_kind: ClassVar[int] = 2

    def targets(self, context: RuleContext) -> np.ndarray:
        return np.cumsum(_sequential_halving_schedule(context.n_arms, context.k, context.budget_value(self.name),
                                                      "SequentialHalving"))

    def _decide(self, context, round_index, values, priority, to_accept):
        keep = max(to_accept, math.ceil(values.size / 2))
        return np.lexsort((priority, -values))[keep:]  # positions rejected

# ------------------------------------------------------------------------------------------- compiled step
NSAR_DECISION, REJECTS_DECISION, HALVING_DECISION, OPTMAI_DECISION = 0, 1, 2, 3


class RoundsState(NamedTuple):
    """The round-based rules' state in the compiled loop (the arrays of ``init_state``)."""

    active: np.ndarray
    accepted: np.ndarray
    round: np.ndarray
    priority: np.ndarray
    start_counts: np.ndarray
    start_sums: np.ndarray


class RoundsParams(NamedTuple):
    """What the compiled rounds read: the decision, k, the rounds' targets, the budget, whether a round's values
    are its own samples' means (Sequential Halving), and work arrays."""

    decision: int
    k: int
    targets: np.ndarray
    budget: int
    fresh_means: bool
    quantile_rounds: int  # OptMAI's Quantile-Elimination rounds
    order: np.ndarray  # (4, K) int work: the active arms, their order, a saved round, an order by gap
    values: np.ndarray  # (2, K) work: the round's values, their gaps
    flags: np.ndarray  # (2, K) bool work: saved active and accepted


@kernel
def ranked_arms(arms, n, values, priority, order):
    """The first ``n`` arms of ``arms`` by decreasing value, ties by increasing priority (``numpy.lexsort((priority,
    -values))``), into ``order``."""
    for position in range(n):
        arm = arms[position]
        place = position
        while place > 0:
            other = order[place - 1]
            if values[other] > values[arm] or (values[other] == values[arm] and priority[other] <= priority[arm]):
                break
            order[place] = other
            place -= 1
        order[place] = arm


@kernel
def advance_rounds(row, counts, sums, means, state, params):
    """:meth:`_Rounds._advance` for one run: decide every round whose pulls are complete."""
    active, accepted, priority = state.active[row], state.accepted[row], state.priority[row]
    arms, order = params.order[0], params.order[1]
    values, gaps = params.values[0], params.values[1]
    n_arms = counts.shape[0]
    round_index = state.round[row, 0]
    while True:
        n_active, n_accepted = 0, 0
        for arm in range(n_arms):
            if active[arm]:
                arms[n_active] = arm
                n_active += 1
            n_accepted += accepted[arm]
        if n_active == 0:
            break
        to_accept = params.k - n_accepted
        if to_accept == 0 or to_accept == n_active:  # the rest is rejected, or accepted
            for position in range(n_active):
                accepted[arms[position]] = to_accept > 0
                active[arms[position]] = False
            break
        if round_index >= params.targets.shape[0]:
            break
        complete = True
        for position in range(n_active):
            complete = complete and counts[arms[position]] >= params.targets[round_index]
        if not complete:
            break
        for arm in range(n_arms):
            if params.fresh_means:  # the round's own samples (NaN for an arm not pulled in the round)
                pulled = counts[arm] - state.start_counts[row, arm]
                values[arm] = (sums[arm] - state.start_sums[row, arm]) / pulled if pulled > 0 else np.nan
            else:
                values[arm] = means[arm]
        ranked_arms(arms, n_active, values, priority, order)
        decide_round(params, round_index, order, n_active, to_accept, values, priority, gaps, active, accepted)
        if params.fresh_means:
            copy_into(state.start_counts[row], counts)
            copy_into(state.start_sums[row], sums)
        round_index += 1
    state.round[row, 0] = round_index


@kernel
def decide_round(params, round_index, order, n_active, to_accept, values, priority, gaps, active, accepted):
    """One round's decision on the active arms ranked in ``order`` (``to_accept`` of them still to accept)."""
    decision = params.decision
    if decision == REJECTS_DECISION:  # the lowest value (ties: the smaller priority, as lexsort((p, v))[0])
        lowest = order[n_active - 1]
        for position in range(n_active - 1, -1, -1):
            arm = order[position]
            if values[arm] < values[lowest] or (values[arm] == values[lowest] and priority[arm] < priority[lowest]):
                lowest = arm
        active[lowest] = False
        return
    if decision == HALVING_DECISION:  # keep the max(m, ceil(n/2)) best
        for position in range(max(to_accept, -(-n_active // 2)), n_active):
            active[order[position]] = False
        return
    if decision == OPTMAI_DECISION and round_index < params.quantile_rounds:  # discard the lowest quarter
        for position in range(n_active - n_active // 4, n_active):
            active[order[position]] = False
        return
    # the empirical gaps against the (m+1)-th (the m best) or the m-th mean (the others)
    above, below = values[order[to_accept]], values[order[to_accept - 1]]
    for position in range(n_active):
        arm = order[position]
        gaps[arm] = values[arm] - above if position < to_accept else below - values[arm]
    if decision == OPTMAI_DECISION:  # Accept-Reject: the max(1, floor(n/4)) largest gaps, accepted if in the top
        by_gap = params.order[3]
        ranked_arms(order, n_active, gaps, priority, by_gap)
        for position in range(max(1, n_active // 4)):
            arm = by_gap[position]
            accepted[arm] = in_top_position(order, to_accept, arm)
            active[arm] = False
        return
    chosen = -1  # NSAR: the largest gap, accepted if its mean is above the (m+1)-th
    for position in range(n_active):
        arm = order[position]
        if chosen < 0 or gaps[arm] > gaps[chosen] or (gaps[arm] == gaps[chosen] and priority[arm] < priority[chosen]):
            chosen = arm
    accepted[chosen] = values[chosen] > above
    active[chosen] = False


@kernel
def in_top_position(order, to_accept, arm):
    """Whether ``arm`` is among the first ``to_accept`` of ``order``."""
    for position in range(to_accept):
        if order[position] == arm:
            return True
    return False


def rounds_step(row, view, state, params, uniforms, each):
    """:meth:`_Rounds.select` compiled: the pulls that bring the active arms to the round's target (the budget's
    remainder on every arm once the rounds are over); the first step (the run's random order) runs in Python."""
    if state.priority[row, 0] != state.priority[row, 0]:
        return DEFER, 0
    advance_rounds(row, view.counts, view.sums, view.means, state, params)
    n_arms = view.counts.shape[0]
    any_active = False
    for arm in range(n_arms):
        any_active = any_active or state.active[row, arm]
    if any_active:
        target = params.targets[state.round[row, 0]]
        for arm in range(n_arms):
            each[arm] = target - view.counts[arm] if state.active[row, arm] else 0
    else:
        remaining = params.budget - view.t
        for arm in range(n_arms):
            each[arm] = -(-remaining // n_arms)
    return EACH, 0


def rounds_recommend(row, view, state, params, out):
    """:meth:`_Rounds.recommend` compiled: the accepted arms after deciding the complete rounds (on a copy of the
    state), completed by the active arms of largest mean (ties: the run's order), in increasing arm order."""
    n_arms = view.counts.shape[0]
    saved_active, saved_accepted = params.flags[0], params.flags[1]
    saved_round = state.round[row, 0]
    copy_into(saved_active, state.active[row])
    copy_into(saved_accepted, state.accepted[row])
    saved_counts, saved_sums = params.order[2], params.values[1]
    copy_into(saved_counts, state.start_counts[row])
    copy_into(saved_sums, state.start_sums[row])
    advance_rounds(row, view.counts, view.sums, view.means, state, params)
    arms, order = params.order[0], params.order[1]
    chosen = 0
    for arm in range(n_arms):
        if state.accepted[row, arm]:
            chosen += 1
    n_active = 0
    for arm in range(n_arms):
        if state.active[row, arm]:
            arms[n_active] = arm
            n_active += 1
    ranked_arms(arms, n_active, view.means, state.priority[row], order)
    for position in range(min(params.k - chosen, n_active)):
        state.accepted[row, order[position]] = True
    filled = 0
    for arm in range(n_arms):
        if state.accepted[row, arm]:
            out[filled] = arm
            filled += 1
    copy_into(state.active[row], saved_active)
    copy_into(state.accepted[row], saved_accepted)
    state.round[row, 0] = saved_round
    copy_into(state.start_counts[row], saved_counts)
    copy_into(state.start_sums[row], saved_sums)


register_policy("nsar", NSAR)
register_policy("sar", SAR)
register_policy("successive-rejects", SuccessiveRejects)
register_policy("sequential-halving", SequentialHalving)
