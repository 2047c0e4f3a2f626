r"""Compiled (numba) run loop of KL-Elimination and KL-Racing (Kaufmann and Kalyanakrishnan 2013) on Gaussian and
Bernoulli arms, the twin of the engine's numpy step loop for them.

In Figure 1 of Wang, Yang, You (2022) KL-Elimination runs one confidence level at a time, with a few thousand rounds
per run, and each round is a step of the engine in which :func:`~allocopt.algorithms.kl_racing.racing_decision`
makes about thirty numpy calls. :func:`run_racing_rows` runs the same rounds replication by replication in a
compiled loop and hands back only what the engine records, so the records are bit-identical to the numpy loop's:

* **the same numbers.** The means are ``sums / counts``; the Gaussian KL bounds are
  :math:`\hat\mu_a \pm \sqrt{(2\sigma_a^2)(\beta_t/N_a)}` in the order of
  :func:`~allocopt.algorithms.confidence_bounds.kl_bound`, the Bernoulli ones its bisection (the same midpoints,
  the same divergence :math:`H - \hat\mu\log q - (1 - \hat\mu)\log(1 - q)` with ``xlogy``'s convention at 0, the
  domain's end where the mean is on it), with :math:`\beta_t` read from the table of
  :func:`~allocopt.algorithms._compiled_lucb.rate_table` (numpy's logarithm). A round computes only the bounds its
  decisions read (numpy computes all of them): :math:`U_{a_W}`, the :math:`L_l` of :math:`J` until one is below it,
  and for KL-Racing :math:`L_{a_B}` and the :math:`U_u` of :math:`R \setminus J` until one is above it; a bound
  that the mean alone places on the deciding side (:math:`L_a \le \hat\mu_a \le U_a` holds exactly for the
  computed bounds) is not computed. On Bernoulli arms this is most of the saving: about 6 against 100 CPU us per
  round on Figure 4's instance of Wang, Yang, You (2022) (theta = 0.9, ..., 0.1, k = 3).
* **the same decisions.** At each pull count the round's decision of
  :func:`~allocopt.algorithms.kl_racing.racing_decision` (with the two tie-break uniforms the previous round drew,
  1/2 before the first): :math:`J` the :math:`k - |S|` survivors of largest mean (ties to the smaller arm),
  :math:`a_B`, :math:`a_W`, :math:`u`, :math:`l` with ties broken as :func:`allocopt._rng.random_candidate`,
  one acceptance (KL-Racing) and one elimination; then the stop (:math:`|S| = k` or :math:`|S| + |R| = k`, the
  recommendation :math:`S` with the best survivors), the sample cap, and a round that pulls every survivor once
  (cut in arm order at the cap, as the engine cuts blocks).
* **the same randomness.** Rewards are read from the engine's :class:`~allocopt.algorithms.rewards.RewardStreams`
  buffers and each round's two uniforms from the row's policy stream; the loop leaves the compiled code, before
  changing a row's state, when the row needs a reward buffer, more uniforms or a longer rate table
  (:func:`allocopt.algorithms._compiled_loop.drive_rows` supplies them).

The tests run the engine with this loop and with the numpy loop (``compiled_kernels(False)``) and compare the
records.
"""

from __future__ import annotations

import numpy as np

from .._numba import compile_once
from . import _compiled_loop
from ._compiled_loop import CAPPED, NEED_TABLE, NEED_UNIFORMS, RUNNING, STOPPED, RowRecords, drive_rows, \
    empty_records
from ._compiled_lucb import rate_table
from . import _compiled_kl_bounds as _bounds

__all__ = ["run_racing_rows", "RACING_FAMILIES"]

UNIFORM_STEPS = 4096
"""Rounds of policy uniforms drawn per refill of a row (changes speed, never values)."""

# the compiled row functions of _compiled_loop once _kernel() has run
table_missing = _compiled_loop.table_missing
reward_missing = _compiled_loop.reward_missing
add_reward = _compiled_loop.add_reward


def _extreme_arm(values, members, largest, uniform):
    """The arm of largest (``largest``) or smallest value among ``members``, ties as
    :func:`allocopt._rng.random_candidate` (the floor(u c)-th of the c tied members in arm order); arm 0 when there
    is no member."""
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


def _rank_members(values, members, count, chosen):
    """``chosen`` := the ``count`` members of largest value, ties to the smaller arm (``_ranked_in``)."""
    n_arms = values.shape[0]
    for arm in range(n_arms):
        chosen[arm] = False
    for _ in range(count):
        best = -1
        for arm in range(n_arms):
            if members[arm] and not chosen[arm] and (best < 0 or values[arm] > values[best]):
                best = arm
        if best < 0:
            return
        chosen[best] = True


def _race_sets(row, accepted, eliminated, remaining):
    """``remaining`` := the row's survivors R (neither accepted nor eliminated); returns :math:`|S|` and :math:`|R|`."""
    n_accepted = 0
    n_remaining = 0
    for arm in range(accepted.shape[1]):
        remaining[arm] = not (accepted[row, arm] or eliminated[row, arm])
        n_accepted += accepted[row, arm]
        n_remaining += remaining[arm]
    return n_accepted, n_remaining


def _racing_rows(rows, k, accept, max_samples, family_code, twice_variance, counts, sums, t, selects, buffer, position,
                 uniforms, uniform_position, tie_uniforms, accepted, eliminated, rates, times, recommendations, stopped,
                 status, need):
    n_arms = counts.shape[1]
    n_uniforms = uniforms.shape[1]
    means = np.empty(n_arms)
    remaining, leaders = np.empty(n_arms, np.bool_), np.empty(n_arms, np.bool_)
    chosen = np.empty(n_arms, np.bool_)
    for row in rows:
        status[row] = RUNNING
        while True:
            if table_missing(row, t, rates, need):
                status[row] = NEED_TABLE
                break
            # the round's decision at t (racing_decision), with the tie-break uniforms of the previous round
            n_accepted, n_remaining = _race_sets(row, accepted, eliminated, remaining)
            still_open = n_accepted < k and n_accepted + n_remaining > k
            beta = rates[t[row]]
            for arm in range(n_arms):
                means[arm] = sums[row, arm] / counts[row, arm]
            if still_open:
                # only the bounds a decision reads, each as kl_bound computes it: u = argmax U over R \ J enters
                # as max U, l = argmin L over J as min L (the tie-breaks choose among equal values), and a bound
                # on the wrong side of a mean (L_a <= mu_a <= U_a exactly) settles a comparison without it
                _rank_members(means, remaining, k - n_accepted, leaders)
                u_first, u_second = tie_uniforms[row, 0], tie_uniforms[row, 1]
                best = _extreme_arm(means, remaining, True, u_first)
                worst = _extreme_arm(means, remaining, False, u_second)
                accept_now = False
                if accept:  # L_{a_B} >= U_u
                    lower_best = _bounds.kl_bound(family_code, means[best], beta / counts[row, best], False,
                                           twice_variance[best])
                    accept_now = True
                    n_others = 0
                    for arm in range(n_arms):
                        if remaining[arm] and not leaders[arm]:
                            n_others += 1
                            if (means[arm] > lower_best or _bounds.kl_bound(family_code, means[arm],
                                                                     beta / counts[row, arm], True,
                                                                     twice_variance[arm]) > lower_best):
                                accept_now = False
                                break
                    if n_others == 0:  # u is arm 0 when R \ J is empty (as _extreme_arm picks)
                        accept_now = lower_best >= _bounds.kl_bound(family_code, means[0], beta / counts[row, 0],
                                                                    True, twice_variance[0])
                if not (accept_now and best == worst):  # U_{a_W} <= L_l
                    upper_worst = _bounds.kl_bound(family_code, means[worst], beta / counts[row, worst], True,
                                            twice_variance[worst])
                    eliminate = True
                    for arm in range(n_arms):
                        if leaders[arm] and (means[arm] < upper_worst or _bounds.kl_bound(
                                family_code, means[arm], beta / counts[row, arm], False,
                                twice_variance[arm]) < upper_worst):
                            eliminate = False
                            break
                    if eliminate:
                        eliminated[row, worst] = True
                if accept_now:
                    accepted[row, best] = True
            # the stop (|S| = k or |S| + |R| = k), then the cap: S and the best survivors are recorded either way
            n_accepted, n_remaining = _race_sets(row, accepted, eliminated, remaining)
            finished = n_accepted == k or n_accepted + n_remaining == k
            if finished or t[row] >= max_samples:
                _rank_members(means, remaining, k - n_accepted, chosen)
                filled = 0
                for arm in range(n_arms):  # the chosen arms in arm order, then (if fewer than k) the others
                    if filled < k and (accepted[row, arm] or chosen[arm]):
                        recommendations[row, 0, filled] = arm
                        filled += 1
                for arm in range(n_arms):
                    if filled < k and not (accepted[row, arm] or chosen[arm]):
                        recommendations[row, 0, filled] = arm
                        filled += 1
                recommendations[row, 0, :].sort()
                times[row, 0] = t[row]
                stopped[row, 0] = finished
                status[row] = STOPPED if finished else CAPPED
                break
            # the round: every survivor once, cut in arm order at the cap; its two uniforms break the next ties
            if uniform_position[row] + 2 > n_uniforms:
                status[row] = NEED_UNIFORMS
                break
            allowed = max(max_samples - t[row], 1)
            short = False
            pulls = 0
            for arm in range(n_arms):
                if remaining[arm] and pulls < allowed:
                    pulls += 1
                    if reward_missing(row, arm, buffer, position, status, need):
                        short = True
                        break
            if short:
                break
            tie_uniforms[row, 0] = uniforms[row, uniform_position[row]]
            tie_uniforms[row, 1] = uniforms[row, uniform_position[row] + 1]
            uniform_position[row] += 2
            pulls = 0
            for arm in range(n_arms):
                if remaining[arm] and pulls < allowed:
                    pulls += 1
                    add_reward(row, arm, buffer, position, sums, counts)
            t[row] += pulls
            selects[row] += 1


# kl_bound compiled first (called by its module attribute), and _compiled_loop's row functions (shared); the helpers
# before the loop that calls them by name
_COMPILED = compile_once(globals(), needs=(_bounds.compile_bounds, _compiled_loop.compiled_row_functions),
                         shared=((_compiled_loop, _compiled_loop.ROW_FUNCTIONS),),
                         rebind=("_extreme_arm", "_rank_members", "_race_sets"),
                         kernels={"rows": "_racing_rows"})


def _kernel():
    return _COMPILED()["rows"]


RACING_FAMILIES = _bounds.KL_BOUND_FAMILIES
"""The families whose KL bounds the compiled loop computes (:mod:`._compiled_kl_bounds`)."""


def run_racing_rows(k: int, accept: bool, exploration: str, delta: float, variance: np.ndarray, max_samples: int,
                    counts: np.ndarray, sums: np.ndarray, t: np.ndarray, rewards, policy_generators,
                    family: str = "gaussian") -> RowRecords:
    r"""Run every row of a batch of Gaussian or Bernoulli KL-Elimination (``accept=False``) or KL-Racing runs, from
    the engine's state after the initial pulls, until the race is decided or the sample cap; ``counts``, ``sums`` and
    ``t`` are updated in place.

    Parameters
    ----------
    k : int
    accept : bool
        KL-Racing (accept arms) or KL-Elimination.
    exploration : str
        The exploration rate's name (:func:`~allocopt.algorithms.confidence_bounds.exploration_rate`).
    delta : float
        The confidence level.
    variance : ndarray, shape (K,)
        The arms' variances (Gaussian arms; unused for Bernoulli arms).
    max_samples, counts, sums, t, rewards, policy_generators
        The sample cap and the batch's state and streams, as every compiled run loop takes them
        (:mod:`allocopt.algorithms._compiled_loop`).
    family : {"gaussian", "bernoulli"}
        The arms' family (:data:`RACING_FAMILIES`).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> from allocopt.algorithms._compiled import compiled_kernels
    >>> problem = TopKProblem([1.0, 0.6, 0.5, 0.0], k=2, variance=0.25)
    >>> fast = identify(problem, "kl-elimination", delta=0.01, n_runs=5, rng=3)  # through run_racing_rows
    >>> with compiled_kernels(False):  # the engine's numpy loop
    ...     slow = identify(problem, "kl-elimination", delta=0.01, n_runs=5, rng=3)
    >>> bool(np.array_equal(fast.stopping_times, slow.stopping_times))
    True
    """
    kernel = _kernel()
    n_rows, n_arms = counts.shape
    records = empty_records(n_rows, 1, k)
    tie_uniforms = np.full((n_rows, 2), 0.5)
    accepted = np.zeros((n_rows, n_arms), dtype=np.bool_)
    eliminated = np.zeros((n_rows, n_arms), dtype=np.bool_)
    twice_variance = 2.0 * np.ascontiguousarray(variance, dtype=float)
    family_code = RACING_FAMILIES.index(family)

    def run(pending, uniforms, uniform_position, rates, status, need):
        kernel(pending, k, bool(accept), max_samples, family_code, twice_variance, counts, sums, t, records.selects,
               rewards.buffer, rewards.position, uniforms, uniform_position, tie_uniforms, accepted, eliminated, rates,
               records.times, records.recommendations, records.stopped, status, need)

    drive_rows(run, rate_table(exploration, delta, n_arms, int(t.max(initial=1)) + 1),
               lambda largest: rate_table(exploration, delta, n_arms, largest), n_rows, UNIFORM_STEPS * 2, rewards,
               policy_generators)
    return records
