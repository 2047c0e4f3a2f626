r"""Compiled (numba) run loop of CLUCB-PAC and its fixed-budget form, the twin of the engine's numpy step loop for
them (:mod:`allocopt.algorithms.clucb_pac`).

CLUCB-PAC (Chen, Lin, King, Lyu, Chen 2014) pulls one arm per step and, at every step, recomputes the radius of
every arm (it grows with :math:`t` through :math:`\log(4 n t^3/\delta)`), the adjusted weights and their top-k
:math:`\tilde M_t`. With the :math:`n = 1000` arms of Chen, Chen, Zhang, Zhou (2017, Section 5) the numpy loop spends
about 150-220 microseconds per replication-step on Python and numpy calls over (R, n) temporaries.
:func:`run_clucb_rows` runs the same steps replication by replication in a compiled loop, and hands back only what
the engine records, so the outcomes are bit-identical to the numpy loop's; most steps only touch the arms near the
boundary of the adjusted top-k (the certified step below):

* **the same numbers.** The means are ``sums / counts``; the radius is
  :math:`\sqrt{((2\sigma_a^2)\ell_t)/N_a}` in the order of
  :func:`~allocopt.algorithms.confidence_bounds.subgaussian_radius`, with :math:`\ell_t = \log(4 n t^3/\delta)`
  read from a table that :func:`~allocopt.algorithms.clucb_pac.clucb_level` computes over :math:`t` (numpy's
  logarithm); the adjusted weight is :math:`\hat\mu_a \mp \mathrm{rad}_t(a)`; the two sums of the adjusted gap
  add their terms in increasing arm order, as the numpy step does. Only IEEE operations, no fast-math.
* **the same sets.** The empirical top-k :math:`M_t` is kept as the order by decreasing mean, ties to the smaller
  index, by the insertion steps of :mod:`allocopt.algorithms._compiled_lucb` (one implementation). The adjusted
  top-k :math:`\tilde M_t` is kept from step to step as a set and checked at every step: it is the top-k (ties to
  the smaller index) exactly when its smallest adjusted weight is larger than the largest outside it; otherwise
  (a crossing, or a tie across the boundary) its last member and the first non-member, in that order, are
  exchanged while the first comes after the second. Both are computed in one pass with the radii.
* **a certified step.** Where every arm has the same proxy variance (the Bernoulli arms of Chen, Chen, Zhang, Zhou
  2017, :math:`\sigma = 1/2`), a full step (every arm's radius and adjusted weight) is followed by steps that
  evaluate only the arms of a band around the boundary of :math:`\tilde M_t` and the arms changed since (the
  pulled arm, and the arm it pushed across the boundary of :math:`M_t`). An arm outside the band, with its mean,
  count and side of :math:`M_t` unchanged since the full step at :math:`t_0`, has an adjusted weight that moved by
  at most :math:`\sqrt{2\sigma^2/N_{\min}}\,(\sqrt{\ell_t} - \sqrt{\ell_{t_0}})` (:math:`N_{\min}` the
  smallest count at :math:`t_0`; the radius grows with :math:`t` and falls with :math:`N_a`), plus a rounding slack
  of :math:`10^{-12}(1 + \max|\hat\mu| + \mathrm{rad})`, about :math:`10^4` times the rounding it covers. Where
  this bound keeps every member above the band's first non-member and every non-member below the band's last
  member (strictly), :math:`\tilde M_t` is the band's top part with the members above it, exactly the set a full
  step finds; otherwise the step is a full step, and so is every step once the changed arms have piled up. The
  adjusted gap is bounded by running sums
  :math:`\sum_{\tilde M_t \setminus M_t}\hat\mu_a - \sum_{M_t \setminus \tilde M_t}\hat\mu_a +
  \sqrt{2\sigma^2\ell_t}\sum_{\tilde M_t \triangle M_t} N_a^{-1/2}` kept as arms change, with a rounding bound
  of :math:`10^{-13}` per operation and term (u = 1.1e-16, so about 900 times the rounding); where the bound does
  not clear :math:`k\epsilon`, the exact sums in increasing arm order decide, as in a full step. With one
  proxy variance the radius is a decreasing function of the count alone, strictly in floating point for counts
  below :math:`2^{31}` (consecutive counts give quotients and square roots many ulps apart), so the arms of largest
  radius in the symmetric difference are those of its smallest count: a tree over the arms (at each node the
  smallest count below it and how many arms attain it) gives them in increasing arm order, and the
  :math:`\lfloor uc \rfloor`-th of them, in :math:`O(\log n)`. Each decision is the full step's; the records are
  the same bit for bit.
* **the same randomness.** Rewards are read from the engine's :class:`~allocopt.algorithms.rewards.RewardStreams`
  buffers (refilled by the streams); each replication's policy uniforms (one per step) are drawn by its own
  generator of :class:`~allocopt.algorithms.rewards.PolicyStreams` in longer blocks (the same sequence); ties of
  the largest radius are broken as :func:`allocopt._rng.random_candidate`: the :math:`\lfloor uc \rfloor`-th of
  the :math:`c` tied arms in increasing arm order.
* **the same steps.** PAC form: the stopping rule, then the sample cap, then a pull. Fixed-budget form: every
  budget reached records the recommendation (the frozen answer once the PAC rule has held, else the empirical
  top-k), then the rule is checked and an arm pulled (after the rule has held, the arm of largest radius among
  all arms).

The loop leaves the compiled code whenever a row needs something only Python can give (a reward buffer, more
uniforms, a longer table), before changing that row's state; the driver supplies it and resumes. The tests run
the engine with this loop and with the numpy loop (``compiled_kernels(False)``) on problems with ties and near
ties, :math:`k = 1` and :math:`k = n - 1`, Gaussian and Bernoulli arms, and compare every record.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from .._numba import compile_once
from .._validation import fail
from . import _compiled_lucb
from ._compiled_lucb import (FIRST_TABLE_SIZE, UNIFORM_STEPS, _cached, _tree_combine, _tree_pick, _tree_set,
                             refill_rows)

__all__ = ["ClucbPlan", "ClucbRun", "run_clucb_rows"]

# the state of a row when the loop hands back
_RUNNING, _STOPPED, _CAPPED, _DONE, _NEED_REWARD, _NEED_UNIFORMS, _NEED_LEVEL = range(7)


class ClucbPlan(NamedTuple):
    """What the compiled loop needs to know of the rule (built by its ``compiled_rows``).

    ``anytime`` is True for the fixed-budget form (the answer freezes where the PAC rule first holds and the run
    goes on to the last budget), False for the PAC form (the run stops there); ``tolerance`` the summed
    tolerance :math:`k\\epsilon`; ``twice_variance`` :math:`2\\sigma_a^2` per arm; ``level`` the function
    :math:`t \\mapsto \\log(4 n t^3/\\delta)` on arrays and ``key`` what identifies it (for the table cache).
    """

    anytime: bool
    tolerance: float
    twice_variance: np.ndarray
    level: Callable[[np.ndarray], np.ndarray]
    key: tuple


class ClucbRun(NamedTuple):
    """Per-row records of :func:`run_clucb_rows`, shapes (R, C) and (R, C, k) for the C checkpoints (the budgets,
    or one confidence level): ``times``, ``recommendations``, ``stopped`` (False where the sample cap came before
    the rule), ``selects`` (R,), the steps at which each row pulled, and ``certified_steps`` (R,), how many of them
    were certified steps (module notes). ``counts`` and ``sums`` are updated in place."""

    times: np.ndarray
    recommendations: np.ndarray
    stopped: np.ndarray
    selects: np.ndarray
    certified_steps: np.ndarray


# ------------------------------------------------------------------------------------ row kernel (numba)
def _write_top(in_top, out):
    """The arms of ``in_top`` into ``out``, in increasing arm order."""
    place = 0
    for arm in range(in_top.shape[0]):
        if in_top[arm]:
            out[place] = arm
            place += 1


def _extremes(values, member):
    """The member that comes last and the non-member that comes first in the order by decreasing value, ties to
    the smaller index (-1 where there is none)."""
    lowest_in, highest_out, last_in, first_out = np.inf, -np.inf, -1, -1
    for arm in range(values.shape[0]):
        value = values[arm]
        if member[arm]:
            if value <= lowest_in:  # of equal values the larger index comes last
                lowest_in, last_in = value, arm
        elif value > highest_out:  # of equal values the smaller index comes first
            highest_out, first_out = value, arm
    return last_in, first_out


def _track(radius, arm, largest, n_largest, arms):
    """One arm of a scan in increasing arm order for the largest radius: ``arms[:n_largest]`` are the arms that
    attain ``largest`` so far; returns the new ``(largest, n_largest)``."""
    if radius > largest:  # rare once the scan has started
        largest, n_largest = radius, 0
    arms[n_largest] = arm  # written always, kept only when it ties (no branch on the tie, which is frequent)
    return largest, n_largest + int(radius == largest)


def _swap_sides(sides, side_place, first, second):
    """Exchange the places of two arms in ``sides`` (``side_place`` its inverse)."""
    first_place, second_place = side_place[first], side_place[second]
    sides[first_place], sides[second_place] = second, first
    side_place[first], side_place[second] = second_place, first_place


def _mark(in_top, adjusted_top, listed, members, size, arm):
    """After ``arm``'s flags changed, keep ``members[:size]`` the arms of the symmetric difference
    :math:`M_t \triangle \tilde M_t` in increasing order (``listed`` their flags); returns the new size."""
    inside = in_top[arm] != adjusted_top[arm]
    if inside == listed[arm]:
        return size
    low, high = 0, size
    while low < high:
        middle = (low + high) // 2
        if members[middle] < arm:
            low = middle + 1
        else:
            high = middle
    if inside:
        for index in range(size, low, -1):
            members[index] = members[index - 1]
        members[low] = arm
        size += 1
    else:
        for index in range(low, size - 1):
            members[index] = members[index + 1]
        size -= 1
    listed[arm] = inside
    return size


def _exchange(in_top, adjusted_top, sides, side_place, listed, members, size, leaver, entrant):
    """``leaver`` leaves the adjusted top-k and ``entrant`` enters it; returns the new size of the symmetric
    difference (:func:`_mark`)."""
    adjusted_top[leaver], adjusted_top[entrant] = False, True
    _swap_sides(sides, side_place, leaver, entrant)
    size = _mark(in_top, adjusted_top, listed, members, size, leaver)
    return _mark(in_top, adjusted_top, listed, members, size, entrant)


# ------------------------------------------------------------------ the certified path (equal proxy variances)
# per-row scalars: fstate[row] and istate[row]
_T_HIGH, _T_LOW, _REF_RADIUS, _SUM_MEANS, _SUM_INVERSE, _MAX_ABS, _N_MIN = range(7)
_BUILT, _N_NEAR, _CORE_IN, _N_OPS, _NEAR_BUILT, _BUILT_AT = range(6)
#: the count of an arm outside the symmetric difference in the tree of counts
_ABSENT = 1 << 62
#: the drift horizon of a rebuild: the band around the boundary is as wide as the largest radius grows in this many
#: steps (a heuristic: it sets how long a rebuild lasts, not what is decided)
DRIFT_STEPS = 256
#: the relative slack added to every bound for rounding (about 10^4 times the rounding errors it covers)
_SLACK = 1e-12
#: per operation, the relative bound on the rounding of the running sums of the adjusted gap (u = 1.1e-16)
_SUM_ROUNDING = 1e-13


def _adjusted_value(mean, twice_variance, level, count_value, in_top):
    """The adjusted weight of one arm, the same operations as the full step's."""
    radius = np.sqrt(twice_variance * level / count_value)
    return mean - radius if in_top else mean + radius


def _segment_build(listed, counts, smallest, multiplicity):
    """The tree of counts of the symmetric difference, the minimum tree of :mod:`allocopt.algorithms._compiled_lucb`
    (one implementation: :func:`_tree_set` and :func:`_tree_pick` keep and read it): a leaf per arm (a power of 2 of
    them), its count in the symmetric difference and ``_ABSENT`` elsewhere, and at each node the smallest count
    below it and how many leaves attain it. It is read only when the symmetric difference is not empty."""
    leaves = smallest.shape[0] // 2
    for place in range(leaves):
        present = place < listed.shape[0] and listed[place]
        smallest[leaves + place] = counts[place] if present else _ABSENT
        multiplicity[leaves + place] = 1
    for node in range(leaves - 1, 0, -1):
        _tree_combine(smallest, multiplicity, node)


def _refresh(arm, listed, adjusted_top, means, count_values, counts, contributes, mean_terms, inverse_terms,
             smallest, multiplicity, fstate, istate):
    """After ``arm``'s mean, count or flags changed: its terms in the running sums of the adjusted gap and its
    leaf in the tree of counts."""
    if contributes[arm]:
        fstate[_SUM_MEANS] -= mean_terms[arm]
        fstate[_SUM_INVERSE] -= inverse_terms[arm]
        contributes[arm] = False
    if listed[arm]:
        mean_terms[arm] = means[arm] if adjusted_top[arm] else -means[arm]
        inverse_terms[arm] = 1.0 / np.sqrt(count_values[arm])
        fstate[_SUM_MEANS] += mean_terms[arm]
        fstate[_SUM_INVERSE] += inverse_terms[arm]
        contributes[arm] = True
    istate[_N_OPS] += 1
    _tree_set(smallest, multiplicity, smallest.shape[0] // 2, arm, counts[arm] if listed[arm] else _ABSENT)


def _exact_sums(listed, adjusted_top, means, count_values, contributes, mean_terms, inverse_terms, fstate, istate):
    """The running sums of the adjusted gap, summed afresh."""
    total_means, total_inverse = 0.0, 0.0
    for arm in range(listed.shape[0]):
        contributes[arm] = listed[arm]
        if listed[arm]:
            mean_terms[arm] = means[arm] if adjusted_top[arm] else -means[arm]
            inverse_terms[arm] = 1.0 / np.sqrt(count_values[arm])
            total_means += mean_terms[arm]
            total_inverse += inverse_terms[arm]
    fstate[_SUM_MEANS], fstate[_SUM_INVERSE], istate[_N_OPS] = total_means, total_inverse, 0


def _touch(arm, near, is_near, adjusted_top, istate):
    """``arm`` changed (mean, count or side of M_t): it joins the arms evaluated exactly at every step."""
    if not is_near[arm]:
        near[istate[_N_NEAR]] = arm
        is_near[arm] = True
        istate[_N_NEAR] += 1
        if adjusted_top[arm]:
            istate[_CORE_IN] -= 1


def _near_extremes(values, member, near, n_near):
    """:func:`_extremes` over ``near[:n_near]`` (in any order)."""
    lowest_in, highest_out, last_in, first_out = np.inf, -np.inf, -1, -1
    for index in range(n_near):
        arm = near[index]
        value = values[arm]
        if member[arm]:
            if value < lowest_in or (value == lowest_in and arm > last_in):
                lowest_in, last_in = value, arm
        elif value > highest_out or (value == highest_out and (first_out < 0 or arm < first_out)):
            highest_out, first_out = value, arm
    return last_in, first_out


def _rebuild_near(values, member, means, count_values, level, ahead, twice_variance, last_in, first_out, near,
                  is_near, fstate, istate, now):
    """After a full step at time t0 (every adjusted weight fresh, ``member`` the adjusted top-k, ``last_in`` its
    last member and ``first_out`` the first non-member): the band of arms evaluated exactly at the next steps.

    An arm outside the band keeps its side while its adjusted weight moves by less than the band's half-width:
    between t0 and t it moves by at most :math:`\\sqrt{2\\sigma^2/N_{\\min}}(\\sqrt{\\ell_t} - \\sqrt{\\ell_{t_0}})`
    (its mean, count and side of :math:`M_t` unchanged; :math:`N_{\\min}` the smallest count at t0), which the
    steps check."""
    n_arms = values.shape[0]
    smallest, max_abs = count_values[0], 0.0
    for arm in range(n_arms):
        smallest = min(smallest, count_values[arm])
        max_abs = max(max_abs, abs(means[arm]))
    reference = np.sqrt(twice_variance * level / smallest)
    width = max(np.sqrt(twice_variance * ahead / smallest) - reference, 1e-9 * (1.0 + max_abs + reference))
    high, low = values[last_in] + width, values[first_out] - width
    n_near, core_in = 0, 0
    for arm in range(n_arms):
        value = values[arm]
        far = value >= high if member[arm] else value <= low
        core_in += 1 if far and member[arm] else 0
        is_near[arm] = not far
        if not far:
            near[n_near] = arm
            n_near += 1
    fstate[_T_HIGH], fstate[_T_LOW], fstate[_REF_RADIUS] = high, low, reference
    fstate[_MAX_ABS], fstate[_N_MIN] = max_abs, smallest
    istate[_BUILT], istate[_N_NEAR], istate[_CORE_IN] = 1, n_near, core_in
    istate[_NEAR_BUILT], istate[_BUILT_AT] = n_near, now


def _clucb_rows(rows, k, max_samples, budgets, anytime, tolerance, counts, sums, means, count_values, t, selects,
                initialised, order, rank, in_top, adjusted, adjusted_top, sides, side_place, listed, differ, n_differ,
                radii, frozen, answer, times, recommendations, stopped, recorded, buffer, position, uniforms,
                uniform_position, twice_variance, levels, status, need, certify, near, is_near, contributes,
                mean_terms, inverse_terms, smallest, multiplicity, fstate, istate, certified_steps):
    n_arms = counts.shape[1]
    n_budgets = budgets.shape[0]
    n_block = buffer.shape[2]
    n_uniforms = uniforms.shape[1]
    arms = np.empty(n_arms, dtype=np.int64)  # scratch: tied arms, or the arms near the adjusted top-k's boundary
    variance = twice_variance[0]  # the common 2 sigma^2 where ``certify``
    for row in rows:
        row_counts, row_means, row_count_values = counts[row], means[row], count_values[row]
        row_order, row_rank, row_in_top = order[row], rank[row], in_top[row]
        row_adjusted, row_adjusted_top, row_radii = adjusted[row], adjusted_top[row], radii[row]
        row_listed, row_differ = listed[row], differ[row]
        row_sides, row_side_place = sides[row], side_place[row]
        row_near, row_is_near, row_contributes = near[row], is_near[row], contributes[row]
        row_mean_terms, row_inverse_terms = mean_terms[row], inverse_terms[row]
        row_smallest, row_multiplicity = smallest[row], multiplicity[row]
        row_fstate, row_istate = fstate[row], istate[row]
        status[row] = _RUNNING
        if not initialised[row]:
            for arm in range(n_arms):
                row_means[arm] = sums[row, arm] / row_counts[arm]
                row_count_values[arm] = row_counts[arm]
            _sort_order(row_means, row_order, row_rank)
            for arm in range(n_arms):
                row_in_top[arm] = row_rank[arm] < k
                row_adjusted_top[arm] = row_in_top[arm]  # a start for the adjusted top-k (corrected below)
                row_listed[arm] = False
            for arm in range(n_arms):  # the adjusted top-k's members first (places 0..k-1), then the others
                row_sides[row_rank[arm]] = arm
                row_side_place[arm] = row_rank[arm]
            n_differ[row] = 0
            row_istate[_BUILT] = 0
            initialised[row] = True
        while True:
            now = t[row]
            # 0. fixed budget: every budget reached records the recommendation
            if n_budgets > 0:
                while recorded[row] < n_budgets and now >= budgets[recorded[row]]:
                    check = recorded[row]
                    times[row, check] = now
                    stopped[row, check] = True
                    if frozen[row]:
                        recommendations[row, check] = answer[row]
                    else:
                        _write_top(row_in_top, recommendations[row, check])
                    recorded[row] += 1
                if recorded[row] == n_budgets:
                    status[row] = _DONE
                    break
            if now >= levels.shape[0]:
                status[row], need[row] = _NEED_LEVEL, now
                break
            level = levels[now]
            fast = certify and not frozen[row] and level > 0.0
            certified = False
            if fast and row_istate[_BUILT] and (
                    row_istate[_N_NEAR] > 2 * row_istate[_NEAR_BUILT] + 32  # the changed arms piled up
                    or (4 * row_istate[_NEAR_BUILT] > n_arms and now - row_istate[_BUILT_AT] >= DRIFT_STEPS)):
                row_istate[_BUILT] = 0  # a full step (and a new band) costs less than the band's arms at every step
            if fast and row_istate[_BUILT]:
                # 1'. the certified step: the arms of the band (and those changed since the full step) exactly, the
                # others within the drift bound of their side
                n_near = row_istate[_N_NEAR]
                for index in range(n_near):
                    arm = row_near[index]
                    row_adjusted[arm] = _adjusted_value(row_means[arm], variance, level, row_count_values[arm],
                                                        row_in_top[arm])
                last_in, first_out = _near_extremes(row_adjusted, row_adjusted_top, row_near, n_near)
                while last_in >= 0 and first_out >= 0 and _before(row_adjusted, first_out, last_in):
                    n_differ[row] = _exchange(row_in_top, row_adjusted_top, row_sides, row_side_place, row_listed,
                                              row_differ, n_differ[row], last_in, first_out)
                    for arm in (last_in, first_out):
                        _refresh(arm, row_listed, row_adjusted_top, row_means, row_count_values, row_counts,
                                 row_contributes, row_mean_terms, row_inverse_terms, row_smallest, row_multiplicity,
                                 row_fstate, row_istate)
                    last_in, first_out = _near_extremes(row_adjusted, row_adjusted_top, row_near, n_near)
                # the arms outside the band moved by at most ``drift`` since the full step
                radius_now = np.sqrt(variance * level / row_fstate[_N_MIN])
                drift = (radius_now - row_fstate[_REF_RADIUS]) + _SLACK * (1.0 + row_fstate[_MAX_ABS] + radius_now)
                high, low = row_fstate[_T_HIGH] - drift, row_fstate[_T_LOW] + drift
                certified = (low < high and (last_in < 0 or row_adjusted[last_in] > low)
                             and (first_out < 0 or row_adjusted[first_out] < high))
                if certified:  # the changed arms far from the boundary leave the band
                    index = 0
                    while index < row_istate[_N_NEAR]:
                        arm = row_near[index]
                        value, member = row_adjusted[arm], row_adjusted_top[arm]
                        if (value >= row_fstate[_T_HIGH]) if member else (value <= row_fstate[_T_LOW]):
                            row_istate[_N_NEAR] -= 1
                            row_near[index] = row_near[row_istate[_N_NEAR]]
                            row_is_near[arm] = False
                            row_istate[_CORE_IN] += 1 if member else 0
                        else:
                            index += 1
                    certified_steps[row] += 1
            if not certified:
                # 1. radii and adjusted weights
                row_istate[_BUILT] = 0
                for arm in range(n_arms):
                    radius = np.sqrt(twice_variance[arm] * level / row_count_values[arm])
                    row_radii[arm] = radius
                    row_adjusted[arm] = row_means[arm] - radius if row_in_top[arm] else row_means[arm] + radius
                # the last two members of the adjusted top-k kept so far and its first two non-members, in the order
                # by decreasing value, ties to the smaller index (over the lists of each side: no branch on the side)
                lowest_in, second_in, last_in, second_last = np.inf, np.inf, -1, -1
                for place in range(k):
                    arm = row_sides[place]
                    value = row_adjusted[arm]
                    if value < second_in or (value == second_in and arm > second_last):
                        if value < lowest_in or (value == lowest_in and arm > last_in):
                            second_in, second_last = lowest_in, last_in
                            lowest_in, last_in = value, arm
                        else:
                            second_in, second_last = value, arm
                highest_out, second_out, first_out, second_first = -np.inf, -np.inf, -1, -1
                for place in range(k, n_arms):
                    arm = row_sides[place]
                    value = row_adjusted[arm]
                    if value > second_out or (value == second_out and arm < second_first):
                        if value > highest_out or (value == highest_out and arm < first_out):
                            second_out, second_first = highest_out, first_out
                            highest_out, first_out = value, arm
                        else:
                            second_out, second_first = value, arm
                exchanged = False
                while last_in >= 0 and first_out >= 0 and _before(row_adjusted, first_out, last_in):
                    # a crossing: exchange the two (once per step at most, usually)
                    n_differ[row] = _exchange(row_in_top, row_adjusted_top, row_sides, row_side_place, row_listed,
                                              row_differ, n_differ[row], last_in, first_out)
                    if exchanged:  # the extremes after a second exchange: a new scan
                        last_in, first_out = _extremes(row_adjusted, row_adjusted_top)
                    else:  # the new last member is the later of the entrant and the former second last; likewise
                        entrant, leaver = first_out, last_in
                        later = second_last < 0 or _before(row_adjusted, second_last, entrant)
                        last_in = entrant if later else second_last
                        earlier = second_first < 0 or _before(row_adjusted, leaver, second_first)
                        first_out = leaver if earlier else second_first
                        exchanged = True
                if fast and last_in >= 0 and first_out >= 0:  # the band for the next steps
                    ahead = levels[min(now + DRIFT_STEPS, levels.shape[0] - 1)]
                    _rebuild_near(row_adjusted, row_adjusted_top, row_means, row_count_values, level, ahead, variance,
                                  last_in, first_out, row_near, row_is_near, row_fstate, row_istate, now)
                    _exact_sums(row_listed, row_adjusted_top, row_means, row_count_values, row_contributes,
                                row_mean_terms, row_inverse_terms, row_fstate, row_istate)
                    _segment_build(row_listed, row_counts, row_smallest, row_multiplicity)
            # 2. the PAC rule (the adjusted gap over the symmetric difference, each sum in increasing arm order) and
            # the arms of largest radius there (among all arms once the rule has held)
            every = frozen[row]
            largest, n_largest = -np.inf, 0
            by_count = fast and row_istate[_BUILT] == 1
            decided = False
            if by_count and not every:
                # the running sums bound the gap: where the bound clears the tolerance, the rule does not hold
                if row_istate[_N_OPS] > 8 * n_arms:
                    _exact_sums(row_listed, row_adjusted_top, row_means, row_count_values, row_contributes,
                                row_mean_terms, row_inverse_terms, row_fstate, row_istate)
                scale = np.sqrt(variance * level)
                estimate = row_fstate[_SUM_MEANS] + scale * row_fstate[_SUM_INVERSE]
                bound = (_SUM_ROUNDING * (row_istate[_N_OPS] + 4 * n_arms + 64) * n_arms
                         * (1.0 + row_fstate[_MAX_ABS] + scale / np.sqrt(row_fstate[_N_MIN])))
                decided = estimate - bound > tolerance
            gained, lost = 0.0, 0.0
            if not every and not decided:
                for index in range(n_differ[row]):
                    arm = row_differ[index]
                    entered = row_adjusted_top[arm]
                    value = _adjusted_value(row_means[arm], twice_variance[arm], level, row_count_values[arm],
                                            row_in_top[arm])
                    gained += value if entered else 0.0  # adding 0.0 changes no sum
                    lost += 0.0 if entered else value
                    if not by_count:
                        largest, n_largest = _track(row_radii[arm], arm, largest, n_largest, arms)
            holds = not every and not decided and gained - lost <= tolerance
            if holds and not anytime:
                status[row] = _STOPPED
                break
            if n_budgets == 0 and now >= max_samples:
                status[row] = _CAPPED
                break
            start = uniform_position[row]
            if start + 1 > n_uniforms:
                status[row] = _NEED_UNIFORMS
                break
            if holds or every or n_differ[row] == 0:  # the rule holds from now on (or nothing differs): every arm
                largest, n_largest = -np.inf, 0
                for arm in range(n_arms):
                    radius = np.sqrt(twice_variance[arm] * level / row_count_values[arm])
                    largest, n_largest = _track(radius, arm, largest, n_largest, arms)
                # 3. of the n_largest tied arms (in increasing order), the floor(u n_largest)-th
                pulled = arms[0] if n_largest == 1 else arms[min(int(uniforms[row, start] * n_largest),
                                                                 n_largest - 1)]
            elif by_count:  # equal proxy variances: the largest radius is the smallest count (exactly; see the notes)
                pulled = _tree_pick(row_smallest, row_multiplicity, row_smallest.shape[0] // 2,
                                    uniforms[row, start])
            else:
                pulled = arms[0] if n_largest == 1 else arms[min(int(uniforms[row, start] * n_largest),
                                                                 n_largest - 1)]
            # 4. the row's state changes only once everything the pull reads is there
            place = position[row, pulled]
            if place >= n_block:
                status[row], need[row] = _NEED_REWARD, pulled
                break
            if holds:  # fixed budget: the answer M_t freezes
                frozen[row] = True
                _write_top(row_in_top, answer[row])
            uniform_position[row] = start + 1
            selects[row] += 1
            sums[row, pulled] += buffer[row, pulled, place]
            position[row, pulled] = place + 1
            row_counts[pulled] += 1
            row_count_values[pulled] = row_counts[pulled]
            t[row] += 1
            row_means[pulled] = sums[row, pulled] / row_counts[pulled]
            old = _reposition(row_means, row_order, row_rank, pulled)
            new = row_rank[pulled]
            row_in_top[pulled] = new < k
            n_differ[row] = _mark(row_in_top, row_adjusted_top, row_listed, row_differ, n_differ[row], pulled)
            displaced = -1
            if old >= k > new:  # it entered the top-k: the arm now at place k left it
                displaced = row_order[k]
            elif new >= k > old:  # it left: the arm now at place k - 1 entered
                displaced = row_order[k - 1]
            if displaced >= 0:
                row_in_top[displaced] = not row_in_top[displaced]
                n_differ[row] = _mark(row_in_top, row_adjusted_top, row_listed, row_differ, n_differ[row], displaced)
            if row_istate[_BUILT]:  # the changed arms: their terms, their leaves, and the band
                row_fstate[_MAX_ABS] = max(row_fstate[_MAX_ABS], abs(row_means[pulled]))
                for arm in (pulled, displaced):
                    if arm >= 0:
                        _refresh(arm, row_listed, row_adjusted_top, row_means, row_count_values, row_counts,
                                 row_contributes, row_mean_terms, row_inverse_terms, row_smallest, row_multiplicity,
                                 row_fstate, row_istate)
                        _touch(arm, row_near, row_is_near, row_adjusted_top, row_istate)
        if status[row] == _STOPPED or status[row] == _CAPPED:
            times[row, 0] = t[row]
            stopped[row, 0] = status[row] == _STOPPED
            _write_top(row_in_top, recommendations[row, 0])


# _compiled_lucb compiles the order's insertion steps first, called here by their global names
_COMPILED = compile_once(globals(), needs=(_compiled_lucb._kernel,),
                         shared=((_compiled_lucb, ("_before", "_sort_order", "_reposition", "_tree_combine",
                                                   "_tree_set", "_tree_pick")),),
                         rebind=("_write_top", "_extremes", "_track", "_swap_sides", "_mark", "_exchange",
                                 "_adjusted_value", "_segment_build", "_refresh", "_exact_sums", "_touch",
                                 "_near_extremes", "_rebuild_near"),
                         kernels={"rows": "_clucb_rows"})


def _kernel():
    """The compiled row kernel, built on first use (numba's cache keeps the machine code between processes)."""
    return _COMPILED()["rows"]


def _level_table(plan: ClucbPlan, largest: int) -> np.ndarray:
    """``plan.level`` at :math:`t = 0, 1, \\dots` (entry 0 NaN) beyond ``largest``, computed on the whole range."""
    key = ("clucb-level",) + plan.key
    table = _compiled_lucb._TABLES.get(key)
    if table is None or table.shape[0] <= largest:
        size = max(FIRST_TABLE_SIZE, 1 << int(largest).bit_length())
        values = plan.level(np.arange(1, size))
        table = _cached(key, np.concatenate([[np.nan], np.asarray(values, dtype=float)]))
    return table


# ----------------------------------------------------------------------------------------- driver
def run_clucb_rows(plan: ClucbPlan, k: int, budgets: np.ndarray, max_samples: int, counts: np.ndarray,
                   sums: np.ndarray, t: np.ndarray, rewards, policy_generators) -> ClucbRun:
    r"""Run every row of a batch, from the engine's state after the initial pulls, to its stop, the sample cap or
    the last budget; ``counts``, ``sums`` and ``t`` are updated in place.

    ``plan`` is the rule's (its ``compiled_rows``); ``budgets`` the increasing budgets of the fixed-budget form
    (one record each), or empty for the PAC form (one record, at the stop or at ``max_samples``); ``k``,
    ``counts``, ``sums``, ``t``, ``rewards`` and ``policy_generators`` as in
    :func:`~allocopt.algorithms._compiled_lucb.run_lucb_rows`.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify_fixed_budget, CLUCBPACFixedBudget
    >>> from allocopt.algorithms._compiled import compiled_kernels
    >>> problem = TopKProblem([0.5, 0.5, 0.4, 0.2, 0.1], k=2, family="bernoulli")
    >>> rule = CLUCBPACFixedBudget(epsilon=0.05, delta=0.1)
    >>> fast = identify_fixed_budget(problem, rule, [20, 200], n_runs=6, rng=3)  # through run_clucb_rows
    >>> with compiled_kernels(False):  # the engine's numpy loop
    ...     slow = identify_fixed_budget(problem, rule, [20, 200], n_runs=6, rng=3)
    >>> bool(np.array_equal(fast.recommendations, slow.recommendations))
    True
    """
    n_rows, n_arms = counts.shape
    if sums.shape != (n_rows, n_arms) or t.shape != (n_rows,) or counts.dtype != np.int64 or t.dtype != np.int64:
        fail("run_clucb_rows", "counts", "int64 counts (R, K), float64 sums (R, K) and int64 t (R,)", counts.shape)
    kernel = _kernel()
    budgets = np.ascontiguousarray(budgets, dtype=np.int64)
    n_check = max(budgets.shape[0], 1)
    means, count_values = np.empty((n_rows, n_arms)), np.empty((n_rows, n_arms))
    adjusted, radii = np.empty((n_rows, n_arms)), np.empty((n_rows, n_arms))
    order = np.empty((n_rows, n_arms), dtype=np.int64)
    rank = np.empty((n_rows, n_arms), dtype=np.int64)
    in_top = np.zeros((n_rows, n_arms), dtype=np.bool_)
    adjusted_top = np.zeros((n_rows, n_arms), dtype=np.bool_)
    listed = np.zeros((n_rows, n_arms), dtype=np.bool_)
    sides = np.zeros((n_rows, n_arms), dtype=np.int64)
    side_place = np.zeros((n_rows, n_arms), dtype=np.int64)
    differ = np.zeros((n_rows, n_arms), dtype=np.int64)
    n_differ = np.zeros(n_rows, dtype=np.int64)
    frozen = np.zeros(n_rows, dtype=np.bool_)
    answer = np.zeros((n_rows, k), dtype=np.int64)
    times = np.zeros((n_rows, n_check), dtype=np.int64)
    recommendations = np.zeros((n_rows, n_check, k), dtype=np.int64)
    stopped = np.zeros((n_rows, n_check), dtype=np.bool_)
    recorded = np.zeros(n_rows, dtype=np.int64)
    initialised = np.zeros(n_rows, dtype=np.bool_)
    selects = np.zeros(n_rows, dtype=np.int64)
    status = np.zeros(n_rows, dtype=np.int64)
    need = np.zeros(n_rows, dtype=np.int64)
    uniforms = np.empty((n_rows, UNIFORM_STEPS))
    uniform_position = np.full(n_rows, UNIFORM_STEPS, dtype=np.int64)
    twice_variance = np.ascontiguousarray(plan.twice_variance, dtype=float)
    levels = _level_table(plan, int(t.max(initial=1)) + 1)
    # the certified path needs one proxy variance for all arms (then the largest radius is the smallest count)
    longest = int(budgets[-1]) if budgets.shape[0] else int(max_samples)
    certify = bool(twice_variance.shape[0] == n_arms and np.all(twice_variance == twice_variance[0])
                   and 0.0 < twice_variance[0] < np.inf and longest < 2**31)
    near = np.zeros((n_rows, n_arms), dtype=np.int64)
    is_near, contributes = np.zeros((n_rows, n_arms), dtype=np.bool_), np.zeros((n_rows, n_arms), dtype=np.bool_)
    mean_terms, inverse_terms = np.zeros((n_rows, n_arms)), np.zeros((n_rows, n_arms))
    leaves = 1 << max(n_arms - 1, 1).bit_length()  # a power of 2, at least n
    smallest = np.zeros((n_rows, 2 * leaves), dtype=np.int64)
    multiplicity = np.zeros((n_rows, 2 * leaves), dtype=np.int64)
    fstate, istate = np.zeros((n_rows, 7)), np.zeros((n_rows, 6), dtype=np.int64)
    certified_steps = np.zeros(n_rows, dtype=np.int64)
    pending = np.arange(n_rows, dtype=np.int64)
    while pending.size:
        kernel(pending, k, max_samples, budgets, plan.anytime, plan.tolerance, counts, sums, means, count_values, t,
               selects, initialised, order, rank, in_top, adjusted, adjusted_top, sides, side_place, listed, differ,
               n_differ, radii, frozen, answer, times, recommendations, stopped, recorded, rewards.buffer,
               rewards.position, uniforms, uniform_position, twice_variance, levels, status, need, certify, near,
               is_near, contributes, mean_terms, inverse_terms, smallest, multiplicity, fstate, istate, certified_steps)
        # a row asks for uniforms once it has read every one of its block: the next block
        refill_rows(pending, status[pending] == _NEED_REWARD, status[pending] == _NEED_UNIFORMS, need, rewards,
                    uniforms, uniform_position, policy_generators)
        grow = status[pending] == _NEED_LEVEL
        if grow.any():
            levels = _level_table(plan, int(need[pending[grow]].max()) + 1)
        pending = pending[(status[pending] == _NEED_REWARD) | (status[pending] == _NEED_UNIFORMS)
                          | (status[pending] == _NEED_LEVEL)]
    return ClucbRun(times=times, recommendations=recommendations, stopped=stopped, selects=selects,
                    certified_steps=certified_steps)
