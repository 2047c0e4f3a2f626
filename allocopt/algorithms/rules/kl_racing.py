r"""KL-Racing and KL-Elimination (Kaufmann and Kalyanakrishnan 2013, Section 3), fixed confidence, top-k.

Each round pulls every arm still in the race :math:`R` once (one :class:`~allocopt.algorithms.PullEach`
step), then, with :math:`S` the accepted arms, :math:`m = k - |S|`, :math:`J` the :math:`m` arms of
:math:`R` with the largest empirical means and the KL bounds :math:`U_a, L_a` at level
:math:`\beta(t, \delta)/N_a` (:mod:`allocopt.algorithms.engine.confidence_bounds`):

* :math:`a_B = \arg\max_{a \in R} \hat\mu_a`, :math:`a_W = \arg\min_{a \in R} \hat\mu_a`,
  :math:`u = \arg\max_{a \in R \setminus J} U_a`, :math:`l = \arg\min_{a \in J} L_a`;
* accept :math:`a_B` (move it to :math:`S`) if :math:`L_{a_B} \ge U_u` - KL-Racing only;
* eliminate :math:`a_W` if :math:`U_{a_W} \le L_l`.

At most one acceptance and one elimination per round, both tested on the same statistics. The run stops
when :math:`|S| = k` or :math:`|S| + |R| = k` and recommends :math:`S` with the :math:`k - |S|` best
survivors. KL-Elimination never accepts (Wang, Yang, You 2022, Appendix C.3: "the Elimination algorithm
never selects arm :math:`a_B` into S"), so it stops when :math:`k` arms survive.

Randomness: ties among arms of equal empirical mean (for :math:`a_B`, :math:`a_W`) or equal bound (for
:math:`u`, :math:`l`) are broken uniformly at random. The decision at pull count :math:`t` is taken by the
rule's stopping check (which receives no uniforms) or, in the first step, by ``select``; it uses the two
uniforms that the previous step stored in the run's state (0.5 before the first step, when every arm has
one pull): two for :math:`a_B, a_W` and, reused, for :math:`u, l`. Each step draws two uniforms.

``select`` is the rule's step for one run, written like the paper's pseudo-code: the specification, and what runs with
the compiled kernels off, for ``batched=False``, or for a family the compiled step does not cover. ``compiled_step``
gives the same step compiled (:func:`racing_step`, :func:`racing_stop`, :func:`racing_recommend`; every family
with compiled KL bounds) for the engine's compiled loop; the tests compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from ..._numba import kernel
from ..._rng import random_candidate
from ..._validation import as_bool
from ..engine import _kl_bounds as _bounds
from ..engine.loop import EACH, GROW
from ._lucb_step import rate_table
from ..engine.confidence_bounds import check_exploration, exploration_rate, kl_bound
from .lucb import _need_delta
from ..engine.protocol import PullEach, RuleContext, RunView, StepKernel, register_policy

__all__ = ["KLElimination", "RacingSets", "racing_decision"]


class RacingSets(NamedTuple):
    """Accepted and eliminated arms (boolean masks over the arms, one run or a batch)."""

    accepted: np.ndarray
    eliminated: np.ndarray


def _ranked_in(values: np.ndarray, members: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Mask of the ``count`` members with the largest values (ties to the smaller arm index)."""
    order = np.argsort(np.where(members, -values, np.inf), axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(values.shape[-1]), order.shape), axis=-1)
    return members & (rank < np.asarray(count)[..., None])


def _extreme(values: np.ndarray, members: np.ndarray, best: str, uniforms: Any) -> np.ndarray:
    masked = np.where(members, values, -np.inf if best == "max" else np.inf)
    target = masked.max(axis=-1, keepdims=True) if best == "max" else masked.min(axis=-1, keepdims=True)
    return np.asarray(random_candidate(members & (masked == target), uniforms))


def _take(values: np.ndarray, arm: np.ndarray) -> np.ndarray:
    return np.take_along_axis(values, arm[..., None], axis=-1)[..., 0]


def racing_decision(family, dispersion, view: RunView, sets: RacingSets, k: int, beta: Any, uniforms: np.ndarray,
                    accept: bool) -> RacingSets:
    """One round's decisions (see the module docstring); ``uniforms[..., 0:2]`` break the ties."""
    accepted, eliminated = sets.accepted.copy(), sets.eliminated.copy()
    remaining = ~(accepted | eliminated)
    n_accepted = accepted.sum(axis=-1)
    still_open = (n_accepted < k) & (n_accepted + remaining.sum(axis=-1) > k)
    means = view.means
    level = np.asarray(beta)[..., None] / view.counts
    upper = kl_bound(family, means, level, True, dispersion)
    lower = kl_bound(family, means, level, False, dispersion)
    leaders = _ranked_in(means, remaining, k - n_accepted)  # J: the k - |S| empirical best of R
    best = _extreme(means, remaining, "max", uniforms[..., 0])  # a_B
    worst = _extreme(means, remaining, "min", uniforms[..., 1])  # a_W
    challenger = _extreme(upper, remaining & ~leaders, "max", uniforms[..., 0])  # u
    weakest = _extreme(lower, leaders, "min", uniforms[..., 1])  # l
    accept_now = still_open & (_take(lower, best) >= _take(upper, challenger)) if accept else np.zeros_like(still_open)
    eliminate_now = still_open & (_take(upper, worst) <= _take(lower, weakest)) & ~(accept_now & (best == worst))
    np.put_along_axis(accepted, best[..., None], _take(accepted, best)[..., None] | accept_now[..., None], axis=-1)
    np.put_along_axis(eliminated, worst[..., None], _take(eliminated, worst)[..., None] | eliminate_now[..., None],
                      axis=-1)
    return RacingSets(accepted, eliminated)


@dataclass(frozen=True)
class KLElimination:
    r"""KL-Elimination (``racing=False``, default) and KL-Racing (``racing=True``) of Kaufmann and
    Kalyanakrishnan (2013), with the exploration rate of Wang, Yang, You (2022, Section 5) by default.

    Parameters
    ----------
    racing : bool, default False
        Also accept arms (KL-Racing).
    exploration : str or callable, default "heuristic"
        :math:`\beta(t, \delta)`, :mod:`allocopt.algorithms.engine.confidence_bounds`.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.9, 0.1, 0.0], k=2, variance=0.25)
    >>> result = identify(problem, KLElimination(), delta=0.05, n_runs=10, rng=4)
    >>> bool(result.correct.all()), bool(result.stopped.all())
    (True, True)
    """

    racing: bool = False
    exploration: str | Callable = "heuristic"
    name = "kl-elimination"
    stopping = "rule"
    uses_glr = False
    uses_empirical_top = False  # it ranks the arms of the race itself (the engine's top-k only for the records)
    delta_dependent = True

    def __post_init__(self):
        as_bool(self.racing, "KLElimination", "racing")
        check_exploration(self.exploration, "KLElimination")

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 2

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        _need_delta(context, "KLElimination")
        return {"accepted": np.zeros((n_runs, context.n_arms), dtype=bool),
                "eliminated": np.zeros((n_runs, context.n_arms), dtype=bool),
                "decided_at": np.full((n_runs, 1), -1, dtype=np.int64),
                "tie_uniforms": np.full((n_runs, 2), 0.5)}

    def _sets(self, context: RuleContext, view: RunView, state) -> RacingSets:
        """The sets after the decision at the current pull count (computed, not stored)."""
        sets = RacingSets(state["accepted"], state["eliminated"])
        due = state["decided_at"][..., 0] != view.t
        if not np.any(due):
            return sets
        beta = exploration_rate(self.exploration, view.t, context.delta_value(self.name), context.n_arms)
        decided = racing_decision(context.family, context.dispersion, view, sets, context.k, beta,
                                  state["tie_uniforms"], self.racing)
        return RacingSets(np.where(np.asarray(due)[..., None], decided.accepted, sets.accepted),
                          np.where(np.asarray(due)[..., None], decided.eliminated, sets.eliminated))

    def _decide(self, context: RuleContext, view: RunView, state) -> RacingSets:
        sets = self._sets(context, view, state)
        state["accepted"][...] = sets.accepted
        state["eliminated"][...] = sets.eliminated
        state["decided_at"][..., 0] = view.t
        return sets

    @staticmethod
    def _finished(sets: RacingSets, k: int) -> np.ndarray:
        n_accepted = sets.accepted.sum(axis=-1)
        return (n_accepted == k) | (n_accepted + (~(sets.accepted | sets.eliminated)).sum(axis=-1) == k)

    def stop(self, context: RuleContext, view: RunView, state) -> bool:
        return bool(self._finished(self._decide(context, view, state), context.k))

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> PullEach:
        sets = self._decide(context, view, state)  # accept a_B / eliminate a_W (done once per pull count)
        state["tie_uniforms"][...] = uniforms  # the next decision's tie-breaks
        remaining = ~(sets.accepted | sets.eliminated)
        return PullEach(remaining.astype(np.int64))  # sample every arm still in the race

    def _recommend(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        sets = self._sets(context, view, state)
        remaining = ~(sets.accepted | sets.eliminated)
        best_survivors = _ranked_in(view.means, remaining, context.k - sets.accepted.sum(axis=-1))
        chosen = sets.accepted | best_survivors
        return np.sort(np.argsort(~chosen, axis=-1, kind="stable")[..., :context.k], axis=-1)

    def recommend(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        return self._recommend(context, view, state)

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`racing_step` with its ``stop`` and ``recommend`` for the engine's compiled loop: the families with
        compiled KL bounds (:data:`~allocopt.algorithms.engine._kl_bounds.KL_BOUND_FAMILIES`) at a named exploration
        rate (None otherwise: the step runs in Python)."""
        code = _bounds.bound_code(context.family)
        if code is None or not isinstance(self.exploration, str):
            return None
        n_arms = context.n_arms
        delta = context.delta_value(self.name)
        return StepKernel(racing_step, params=RacingParams(
            context.k, bool(self.racing), code,
            _bounds.bound_scale(code, np.broadcast_to(context.dispersion, (n_arms,))),
            rate_table(self.exploration, delta, n_arms, 2 * n_arms + 2), self.exploration, float(delta),
            np.empty(n_arms), np.empty((3, n_arms), dtype=np.bool_)),
            state=RacingState, stop=racing_stop, recommend=racing_recommend, grow=grow_racing)


class RacingState(NamedTuple):
    """KL-Elimination's state in the compiled loop (the arrays of ``init_state``)."""

    accepted: np.ndarray
    eliminated: np.ndarray
    decided_at: np.ndarray
    tie_uniforms: np.ndarray


class RacingParams(NamedTuple):
    """What the compiled race reads: k, whether it accepts arms, the KL bounds' family number and per-arm scale
    (:func:`~allocopt.algorithms.engine._kl_bounds.bound_scale`), the rate table (and what grows it), and work
    arrays."""

    k: int
    accept: bool
    family: int
    scale: np.ndarray
    rates: np.ndarray
    exploration: str
    delta: float
    means: np.ndarray  # (K,) work
    flags: np.ndarray  # (3, K) bool work: the survivors, the leaders, the chosen


def grow_racing(params: RacingParams, largest: int) -> RacingParams:
    """The parameters with a rate table beyond ``largest``."""
    return params._replace(rates=rate_table(params.exploration, params.delta, params.means.shape[0], largest))


@kernel
def extreme_member(values, members, largest, uniform):
    """The member of largest (or smallest) value, ties as random_candidate (the floor(u c)-th of the c tied members
    in arm order); arm 0 when there is no member."""
    n_arms = values.shape[0]
    extreme = -np.inf if largest else np.inf
    for arm in range(n_arms):
        if members[arm]:
            extreme = max(extreme, values[arm]) if largest else min(extreme, values[arm])
    count = 0
    for arm in range(n_arms):
        count += members[arm] and values[arm] == extreme
    pick = min(int(uniform * count), max(count - 1, 0))
    for arm in range(n_arms):
        if members[arm] and values[arm] == extreme:
            if pick == 0:
                return arm
            pick -= 1
    return 0


@kernel
def rank_members(values, members, count, chosen):
    """``chosen`` := the ``count`` members of largest value, ties to the smaller arm (:func:`_ranked_in`)."""
    n_arms = values.shape[0]
    chosen[:] = False
    for _ in range(count):
        best = -1
        for arm in range(n_arms):
            if members[arm] and not chosen[arm] and (best < 0 or values[arm] > values[best]):
                best = arm
        if best < 0:
            return
        chosen[best] = True


@kernel
def race_sets(row, state, remaining):
    """``remaining`` := the run's survivors R (neither accepted nor eliminated); returns |S| and |R|."""
    n_accepted, n_remaining = 0, 0
    for arm in range(remaining.shape[0]):
        remaining[arm] = not (state.accepted[row, arm] or state.eliminated[row, arm])
        n_accepted += state.accepted[row, arm]
        n_remaining += remaining[arm]
    return n_accepted, n_remaining


@kernel
def racing_decide(row, view, state, params):
    """:func:`racing_decision` at the current pull count, once (``decided_at``), with only the bounds a decision
    reads, each as :func:`kl_bound` computes it: u = argmax U over R \\ J enters as max U, l = argmin L over J as
    min L, and a bound on the wrong side of a mean (L_a <= mu_a <= U_a exactly) settles a comparison without it."""
    if state.decided_at[row, 0] == view.t:
        return
    state.decided_at[row, 0] = view.t
    counts, means, k = view.counts, view.means, params.k
    remaining, leaders = params.flags[0], params.flags[1]
    n_accepted, n_remaining = race_sets(row, state, remaining)
    if not (n_accepted < k and n_accepted + n_remaining > k):
        return
    beta = params.rates[view.t]
    scale, code = params.scale, params.family
    rank_members(means, remaining, k - n_accepted, leaders)
    best = extreme_member(means, remaining, True, state.tie_uniforms[row, 0])
    worst = extreme_member(means, remaining, False, state.tie_uniforms[row, 1])
    accept_now = False
    if params.accept:  # L_{a_B} >= U_u
        lower_best = _bounds.kl_bound(code, means[best], beta / counts[best], False, scale[best])
        accept_now = True
        n_others = 0
        for arm in range(means.shape[0]):
            if remaining[arm] and not leaders[arm]:
                n_others += 1
                if means[arm] > lower_best or _bounds.kl_bound(code, means[arm], beta / counts[arm], True,
                                                               scale[arm]) > lower_best:
                    accept_now = False
                    break
        if n_others == 0:  # u is arm 0 when R \\ J is empty (as random_candidate picks among no candidate)
            accept_now = lower_best >= _bounds.kl_bound(code, means[0], beta / counts[0], True, scale[0])
    if not (accept_now and best == worst):  # U_{a_W} <= L_l
        upper_worst = _bounds.kl_bound(code, means[worst], beta / counts[worst], True, scale[worst])
        eliminate = True
        for arm in range(means.shape[0]):
            if leaders[arm] and (means[arm] < upper_worst or _bounds.kl_bound(
                    code, means[arm], beta / counts[arm], False, scale[arm]) < upper_worst):
                eliminate = False
                break
        if eliminate:
            state.eliminated[row, worst] = True
    if accept_now:
        state.accepted[row, best] = True


def racing_stop(row, view, state, params):
    """:meth:`KLElimination.stop` compiled: the decision at t, then |S| = k or |S| + |R| = k."""
    racing_decide(row, view, state, params)
    n_accepted, n_remaining = race_sets(row, state, params.flags[0])
    return n_accepted == params.k or n_accepted + n_remaining == params.k


def racing_step(row, view, state, params, uniforms, each):
    """:meth:`KLElimination.select` compiled: every survivor once; the step's two uniforms break the next ties."""
    n_arms = view.counts.shape[0]
    if view.t + n_arms + 1 >= params.rates.shape[0]:
        each[0] = view.t + n_arms + 1
        return GROW, 0
    racing_decide(row, view, state, params)
    state.tie_uniforms[row, 0], state.tie_uniforms[row, 1] = uniforms[0], uniforms[1]
    remaining = params.flags[0]
    race_sets(row, state, remaining)
    for arm in range(n_arms):
        each[arm] = 1 if remaining[arm] else 0
    return EACH, 0


def racing_recommend(row, view, state, params, out):
    """:meth:`KLElimination.recommend` compiled: S and the best survivors (ties to the smaller arm), then, if fewer
    than k, the other arms in arm order; in increasing arm order."""
    remaining, chosen = params.flags[0], params.flags[2]
    n_accepted, _ = race_sets(row, state, remaining)
    rank_members(view.means, remaining, params.k - n_accepted, chosen)
    n_arms, filled = view.counts.shape[0], 0
    for arm in range(n_arms):
        if filled < params.k and (state.accepted[row, arm] or chosen[arm]):
            out[filled] = arm
            filled += 1
    for arm in range(n_arms):
        if filled < params.k and not (state.accepted[row, arm] or chosen[arm]):
            out[filled] = arm
            filled += 1
    out.sort()


register_policy("kl-elimination", KLElimination)
