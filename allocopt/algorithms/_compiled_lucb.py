r"""Compiled (numba) run loop of the LUCB-family rules, the twin of the engine's numpy step loop for them.

The rules of :mod:`allocopt.algorithms.lucb` with LIL or Hoeffding radii (LUCB, lil'LUCB, LUCB++, lil'RandLUCB,
lil'CLUCB) read, at every step, every arm's empirical mean and count, split the arms into the empirical top-k
:math:`\hat I_t` and the others, and pull one or two arms. With :math:`K` = 1024 arms and the 20 replications of an
experiment's point, the engine's numpy loop spends about 100 microseconds of Python and numpy calls per
replication-step, for a few microseconds of arithmetic. :func:`run_lucb_rows` runs the same steps replication by
replication in a compiled loop and hands back only what the engine records (stopping time, stop or cap, the
counts and sums, the number of steps), so the outcomes are bit-identical to the numpy loop's:

* **the same numbers.** The means are ``sums / counts``; the LIL radius is ``table[count] * sigma`` from the
  tables of :func:`allocopt.algorithms.confidence_bounds.lil_radii_of_counts` (the same entries); the Hoeffding
  radius is :math:`\sqrt{((2\sigma_a^2)\beta_t)/N_a}` in the order of
  :func:`~allocopt.algorithms.confidence_bounds.subgaussian_radius`, with :math:`\beta_t` read from a table of
  :func:`~allocopt.algorithms.confidence_bounds.exploration_rate` over :math:`t` (numpy's logarithm, not the
  compiled one, which may differ in the last bit). Only IEEE additions, multiplications, divisions and square
  roots are done in the loop (no fast-math), in the numpy twin's order.
* **the same sets.** The empirical top-k is the first k arms of the order by decreasing mean with ties to the
  smaller index (a stable sort, as :func:`allocopt.algorithms.statistics.top_k_order`). The loop keeps that order
  and moves only the pulled arm (one insertion step per position it moves: a pull changes one mean by
  :math:`O(1/N_a)`), so the order is always the unique sorted one. lil'CLUCB keeps a second such order of the
  revised means for :math:`\tilde M_t`.
* **the same extremes, in O(log K).** :math:`\min_{\hat I_t} L_a` and :math:`\max_{\text{Low}} U_a` (and
  lil'CLUCB's largest radius over :math:`M_t \triangle \tilde M_t`) are the roots of minimum trees over the arms
  (leaves :math:`L_a`, :math:`-U_a`, :math:`-u_a`, or :math:`+\infty` outside the set) that also count the leaves
  attaining the minimum; the tie-break descends to the :math:`\lfloor uc \rfloor`-th of them in arm order. A LIL
  radius depends only on the arm's count and side, so a pull updates at most four leaves; the Hoeffding radius
  moves with :math:`\beta(t)`, so LUCB recomputes every radius (in a loop the compiler vectorises) and finds
  the extremes and their ties in one scan at each step.
* **the same randomness.** Rewards are read from the engine's :class:`~allocopt.algorithms.rewards.RewardStreams`
  buffers (refilled by the streams themselves when a row reaches the end of one); the policy uniforms of each
  replication are its stream of :class:`~allocopt.algorithms.rewards.PolicyStreams`, drawn by the same generator
  in longer blocks (numpy draws the same sequence in blocks of any size). Ties are broken as
  :func:`allocopt._rng.random_candidate`: the :math:`\lfloor uc \rfloor`-th of the :math:`c` candidates in
  increasing arm order.
* **the same steps.** Each step checks the rule's stopping condition, then the sample cap, then pulls; a block of
  two pulls at one sample from the cap pulls only the arm of smaller index, as the engine clips blocks.

The loop leaves the compiled code whenever a row needs something only Python can give (a reward buffer, more
uniforms, a longer radius or rate table), before changing that row's state; the driver supplies it and resumes.
The tests run the engine with the compiled loop and with the numpy loop (``compiled_kernels(False)``) on random
problems with ties (Bernoulli rewards), :math:`k = 1` and :math:`k = K - 1`, every rule and both LIL versions,
and compare the records.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._numba import compile_once
from .._validation import fail
from . import _compiled_kl_bounds as _bounds
from ..complexity.lil import lil_radius
from .confidence_bounds import _lil_table, exploration_rate

__all__ = ["LucbPlan", "LucbRun", "run_lucb_rows", "PAIR", "RANDOMISED", "CHANGE", "LIL", "HOEFFDING",
           "GAUSSIAN_KL", "BERNOULLI_KL"]

# how the rule pulls (lucb.py: _BoundCrossing.select, LilRandLUCB.select, LilCLUCB.select)
PAIR, RANDOMISED, CHANGE = 0, 1, 2
# its radius: LIL tables over the counts, Hoeffding with a rate over t, the Gaussian KL bound (the same radius
# computed as sqrt(2 sigma^2 (beta / N)), in the order of confidence_bounds.kl_bound) or the Bernoulli KL bound
# (confidence_bounds.kl_bound's bisection, _compiled_kl_bounds.kl_bound)
LIL, HOEFFDING, GAUSSIAN_KL, BERNOULLI_KL = 0, 1, 2, 3
# the state of a row when the loop hands back
_RUNNING, _STOPPED, _CAPPED, _NEED_REWARD, _NEED_UNIFORMS, _NEED_TABLE, _NEED_RATE = range(7)

UNIFORM_STEPS = 4096
"""Steps of policy uniforms drawn per refill of a row (changes speed, never values)."""

FIRST_TABLE_SIZE = 1024
"""Entries of a new rate table, or of a radius table beyond the shared LIL tables (doubled as needed)."""


class LucbPlan(NamedTuple):
    r"""What the compiled loop needs to know of a rule (built by the rule's ``compiled_plan``).

    ``kind`` is :data:`PAIR` (pull :math:`h_t` and :math:`l_t`), :data:`RANDOMISED` (lil'RandLUCB's coin) or
    :data:`CHANGE` (lil'CLUCB); ``radius`` is :data:`LIL` (``omega_top`` on the empirical top-k, ``omega_bottom``
    elsewhere, ``eps``, ``form``, ``sigma`` per arm), :data:`HOEFFDING` (``exploration`` at ``delta``,
    ``variance`` per arm: :math:`\sqrt{2\sigma_a^2\beta/N_a}`) or :data:`GAUSSIAN_KL` (the same radius as the
    Gaussian KL bound computes it, :math:`\sqrt{2\sigma_a^2(\beta/N_a)}`: KL-LUCB on Gaussian arms) or
    :data:`BERNOULLI_KL` (the Bernoulli KL bounds at level :math:`\beta/N_a`, by the bisection of
    :func:`~allocopt.algorithms.confidence_bounds.kl_bound`: KL-LUCB on Bernoulli arms);
    ``uniforms_per_step`` as the rule's.
    """

    kind: int
    radius: int
    uniforms_per_step: int
    sigma: np.ndarray
    omega_top: float = np.nan
    omega_bottom: float = np.nan
    eps: float = 0.0
    form: str = "experiments"
    exploration: str = "heuristic"
    delta: float = np.nan
    variance: np.ndarray | None = None


class LucbRun(NamedTuple):
    """Per-row outcome of :func:`run_lucb_rows`: ``stopped`` (by the rule; False where the cap came first) and
    ``selects`` (the steps at which the row chose an action); ``counts``, ``sums`` and ``t`` are updated in place."""

    stopped: np.ndarray
    selects: np.ndarray


# ------------------------------------------------------------------------------------ row kernel (numba)
def _before(values, first, second):
    """Whether arm ``first`` comes before ``second`` in the order by decreasing value, ties to the smaller index."""
    return values[first] > values[second] or (values[first] == values[second] and first < second)


def _sort_order(values, order, rank):
    """Insertion sort of the arms into ``order`` (and ``rank``, its inverse) by :func:`_before`."""
    n_arms = values.shape[0]
    for arm in range(n_arms):
        position = arm
        while position > 0 and _before(values, arm, order[position - 1]):
            order[position] = order[position - 1]
            position -= 1
        order[position] = arm
    for position in range(n_arms):
        rank[order[position]] = position


def _reposition(values, order, rank, arm):
    """Move ``arm`` (whose value changed; the others are in order) to its place; returns its old position."""
    start = rank[arm]
    position = start
    n_arms = values.shape[0]
    while position > 0 and _before(values, arm, order[position - 1]):
        other = order[position - 1]
        order[position] = other
        rank[other] = position
        position -= 1
    while position < n_arms - 1 and _before(values, order[position + 1], arm):
        other = order[position + 1]
        order[position] = other
        rank[other] = position
        position += 1
    order[position] = arm
    rank[arm] = position
    return start


def _radius(arm, count, in_top, top_table, bottom_table, sigma):
    """The arm's LIL radius, ``table[count] * sigma`` from the top or the bottom table."""
    if in_top:
        return top_table[count] * sigma[arm]
    return bottom_table[count] * sigma[arm]


def _revised_value(mean, radius, in_top):
    """The LCB in the empirical top-k, the UCB elsewhere."""
    if in_top:
        return mean - radius
    return mean + radius


def _tree_combine(values, counts, node):
    """Node ``node`` of a minimum tree from its children: the smaller value and how many leaves attain it."""
    left = 2 * node
    right = left + 1
    if values[left] < values[right]:
        values[node], counts[node] = values[left], counts[left]
    elif values[right] < values[left]:
        values[node], counts[node] = values[right], counts[right]
    else:
        values[node], counts[node] = values[left], counts[left] + counts[right]


def _tree_set(values, counts, size, arm, value):
    """Set leaf ``arm`` of a minimum tree over ``size`` leaves (a power of two) and update its ancestors."""
    node = size + arm
    values[node] = value
    counts[node] = 1
    node //= 2
    while node >= 1:
        _tree_combine(values, counts, node)
        node //= 2


def _tree_pick(values, counts, size, uniform):
    """Of the leaves attaining the minimum (``counts[1]`` of them), the ``floor(u c)``-th in leaf order, as
    :func:`allocopt._rng.random_candidate` picks among candidates in increasing arm order."""
    target = values[1]
    total = counts[1]
    pick = 0 if total == 1 else min(int(uniform * total), total - 1)
    node = 1
    while node < size:
        left = 2 * node
        if values[left] == target:
            if pick < counts[left]:
                node = left
                continue
            pick -= counts[left]
        node = left + 1
    return node - size


def _scan_pick(values, in_top, side, extreme, total, first, uniform):
    """The ``floor(u c)``-th arm, in increasing order, of the ``total`` arms on ``side`` (in the top-k or not)
    whose value is ``extreme``; ``first`` is the first of them."""
    if total == 1:
        return first
    pick = min(int(uniform * total), total - 1)
    for arm in range(values.shape[0]):
        if in_top[arm] == side and values[arm] == extreme:
            if pick == 0:
                return arm
            pick -= 1
    return first  # not reached: ``total`` arms attain the extreme


def _lucb_rows(rows, kind, radius_kind, k, max_samples, per_step, counts, sums, means, count_values, t, selects,
               initialised, order, rank, in_top, revised, revised_order, revised_rank, radii, low_values, low_counts,
               high_values, high_counts, mismatches, buffer, position, uniforms, uniform_position, top_table,
               bottom_table, sigma, twice_variance, rates, status, need):
    n_arms = counts.shape[1]
    size = low_values.shape[1] // 2  # leaves of the trees: a power of two >= K
    n_block = buffer.shape[2]
    n_uniforms = uniforms.shape[1]
    table_size = min(top_table.shape[0], bottom_table.shape[0])
    changed = np.empty(8, dtype=np.int64)
    for row in rows:
        row_counts, row_means, row_revised, row_in_top = counts[row], means[row], revised[row], in_top[row]
        row_radii, row_count_values = radii[row], count_values[row]
        row_low, row_low_counts = low_values[row], low_counts[row]
        row_high, row_high_counts = high_values[row], high_counts[row]
        row_order, row_rank = order[row], rank[row]
        row_revised_order, row_revised_rank = revised_order[row], revised_rank[row]
        status[row] = _RUNNING
        if radius_kind == 0:
            largest = 0
            for arm in range(n_arms):
                largest = max(largest, row_counts[arm])
            if largest + 2 >= table_size:
                status[row], need[row] = _NEED_TABLE, largest + 2
                continue
        if not initialised[row]:
            for arm in range(n_arms):
                row_means[arm] = sums[row, arm] / row_counts[arm]
                row_count_values[arm] = row_counts[arm]
            _sort_order(row_means, row_order, row_rank)
            for arm in range(n_arms):
                row_in_top[arm] = row_rank[arm] < k
            for node in range(2 * size):  # padding leaves never attain a minimum
                row_low[node], row_low_counts[node] = np.inf, 1
                row_high[node], row_high_counts[node] = np.inf, 1
            if kind == 2:  # lil'CLUCB: the revised means' order; a tree of -radius over M_t (+) M~_t
                for arm in range(n_arms):
                    row_radii[arm] = top_table[row_counts[arm]] * sigma[arm]
                    row_revised[arm] = _revised_value(row_means[arm], row_radii[arm], row_in_top[arm])
                _sort_order(row_revised, row_revised_order, row_revised_rank)
                mismatches[row] = 0
                for arm in range(n_arms):
                    if row_in_top[arm] != (row_revised_rank[arm] < k):
                        row_low[size + arm] = -row_radii[arm]
                        mismatches[row] += 1
            elif radius_kind == 0:  # LIL radii: trees of the LCB over the top and of -UCB over the others
                for arm in range(n_arms):
                    member = row_in_top[arm]
                    row_revised[arm] = _revised_value(
                        row_means[arm], _radius(arm, row_counts[arm], member, top_table, bottom_table, sigma), member)
                    if member:
                        row_low[size + arm] = row_revised[arm]
                    else:
                        row_high[size + arm] = -row_revised[arm]
            if radius_kind == 0:
                for node in range(size - 1, 0, -1):
                    _tree_combine(row_low, row_low_counts, node)
                    _tree_combine(row_high, row_high_counts, node)
            initialised[row] = True
        while True:
            now = t[row]
            lowest, n_lowest, h_arm = np.inf, 0, -1
            highest, n_highest, l_arm = -np.inf, 0, -1
            # 1. the stopping rule
            if kind == 2:  # lil'CLUCB: M~_t = M_t
                stop = mismatches[row] == 0
            else:  # min over the top of the LCB >= max over the others of the UCB
                if radius_kind != 0:  # Hoeffding or Gaussian KL: every radius moves with beta(t)
                    if now >= rates.shape[0]:
                        status[row], need[row] = _NEED_RATE, now
                        break
                    rate = rates[now]
                    if radius_kind == 1:
                        for arm in range(n_arms):
                            row_radii[arm] = np.sqrt(twice_variance[arm] * rate / row_count_values[arm])
                    elif radius_kind == 2:
                        for arm in range(n_arms):
                            row_radii[arm] = np.sqrt(twice_variance[arm] * (rate / row_count_values[arm]))
                    for arm in range(n_arms):  # one scan instead of the trees
                        if radius_kind == 3:  # the lower bound on the top-k, the upper bound elsewhere
                            value = _bounds.kl_bound(1, row_means[arm], rate / row_count_values[arm],
                                                     not row_in_top[arm], 0.0)
                        else:
                            value = _revised_value(row_means[arm], row_radii[arm], row_in_top[arm])
                        row_revised[arm] = value
                        if row_in_top[arm]:
                            if value < lowest:
                                lowest, n_lowest, h_arm = value, 1, arm
                            elif value == lowest:
                                n_lowest += 1
                        elif value > highest:
                            highest, n_highest, l_arm = value, 1, arm
                        elif value == highest:
                            n_highest += 1
                    stop = lowest >= highest
                else:
                    stop = row_low[1] >= -row_high[1]
            if stop:
                status[row] = _STOPPED
                break
            if now >= max_samples:
                status[row] = _CAPPED
                break
            start = uniform_position[row]
            if start + per_step > n_uniforms:
                status[row] = _NEED_UNIFORMS
                break
            # 2. the arms to pull
            second = -1
            if kind == 2:  # the arm of largest radius in M_t (+) M~_t
                first = _tree_pick(row_low, row_low_counts, size, uniforms[row, start])
            else:
                if radius_kind != 0:
                    h_arm = _scan_pick(row_revised, row_in_top, True, lowest, n_lowest, h_arm, uniforms[row, start])
                    l_arm = _scan_pick(row_revised, row_in_top, False, highest, n_highest, l_arm,
                                       uniforms[row, start + 1])
                else:
                    h_arm = _tree_pick(row_low, row_low_counts, size, uniforms[row, start])
                    l_arm = _tree_pick(row_high, row_high_counts, size, uniforms[row, start + 1])
                if kind == 1:  # h with probability N_l / (N_h + N_l)
                    probability_h = row_counts[l_arm] / (row_counts[h_arm] + row_counts[l_arm])
                    first = h_arm if uniforms[row, start + 2] < probability_h else l_arm
                else:  # both, in arm order; one sample before the cap only the first
                    first, second = min(h_arm, l_arm), max(h_arm, l_arm)
                    if max_samples - now <= 1:
                        second = -1
            # 3. the row's state changes only once everything the pulls read is there
            if position[row, first] >= n_block:
                status[row], need[row] = _NEED_REWARD, first
                break
            if second >= 0 and position[row, second] >= n_block:
                status[row], need[row] = _NEED_REWARD, second
                break
            if radius_kind == 0 and (row_counts[first] + 2 >= table_size
                                     or (second >= 0 and row_counts[second] + 2 >= table_size)):
                status[row], need[row] = _NEED_TABLE, max(row_counts[first], row_counts[max(second, 0)]) + 2
                break
            uniform_position[row] = start + per_step
            selects[row] += 1
            for arm in (first, second):
                if arm < 0:
                    continue
                place = position[row, arm]
                sums[row, arm] += buffer[row, arm, place]
                position[row, arm] = place + 1
                row_counts[arm] += 1
                row_count_values[arm] = row_counts[arm]
                t[row] += 1
                row_means[arm] = sums[row, arm] / row_counts[arm]
                old = _reposition(row_means, row_order, row_rank, arm)
                new = row_rank[arm]
                n_changed = 1
                changed[0] = arm
                if old >= k > new:  # the arm entered the top-k; the one now at place k left it
                    changed[1] = row_order[k]
                    n_changed = 2
                elif new >= k > old:  # it left; the one now at place k - 1 entered
                    changed[1] = row_order[k - 1]
                    n_changed = 2
                for index in range(n_changed):
                    row_in_top[changed[index]] = row_rank[changed[index]] < k
                if kind == 2:
                    n_moved = n_changed
                    row_radii[arm] = top_table[row_counts[arm]] * sigma[arm]
                    for index in range(n_moved):
                        moved = changed[index]
                        row_revised[moved] = _revised_value(row_means[moved], row_radii[moved], row_in_top[moved])
                        old = _reposition(row_revised, row_revised_order, row_revised_rank, moved)
                        new = row_revised_rank[moved]
                        if old >= k > new:  # M~_t changed: these two arms may now (mis)match M_t
                            changed[n_changed] = row_revised_order[k]
                            n_changed += 1
                        elif new >= k > old:
                            changed[n_changed] = row_revised_order[k - 1]
                            n_changed += 1
                    for index in range(n_changed):  # M_t (+) M~_t and the tree over it, at the arms touched
                        moved = changed[index]
                        was = row_low[size + moved] != np.inf
                        mismatched = row_in_top[moved] != (row_revised_rank[moved] < k)
                        mismatches[row] += int(mismatched) - int(was)
                        _tree_set(row_low, row_low_counts, size, moved, -row_radii[moved] if mismatched else np.inf)
                elif radius_kind == 0:
                    for index in range(n_changed):
                        moved = changed[index]
                        member = row_in_top[moved]
                        value = _revised_value(row_means[moved], _radius(moved, row_counts[moved], member, top_table,
                                                                         bottom_table, sigma), member)
                        row_revised[moved] = value
                        _tree_set(row_low, row_low_counts, size, moved, value if member else np.inf)
                        _tree_set(row_high, row_high_counts, size, moved, np.inf if member else -value)


# kl_bound compiled first (called by its module attribute); the kernel calls the helpers by their global names
_COMPILED = compile_once(globals(), needs=(_bounds.compile_bounds,),
                         rebind=("_before", "_sort_order", "_reposition", "_radius", "_revised_value", "_tree_combine",
                                 "_tree_set", "_tree_pick", "_scan_pick"),
                         kernels={"rows": "_lucb_rows"})


def _kernel():
    """The compiled row kernel, built on first use (numba's cache keeps the machine code between processes)."""
    return _COMPILED()["rows"]


# ----------------------------------------------------------------------------------------- tables
_TABLES: dict[tuple, np.ndarray] = {}
_TABLE_KEYS = 64


def _cached(key: tuple, table: np.ndarray) -> np.ndarray:
    if len(_TABLES) >= _TABLE_KEYS:
        _TABLES.clear()
    _TABLES[key] = table
    return table


def radius_table(omega: float, eps: float, form: str, largest: int) -> np.ndarray:
    r""":math:`U(n, \omega)` with :math:`\sigma = 1` for :math:`n = 0, 1, \dots` (entry 0 NaN) beyond ``largest``.

    The table of :func:`~allocopt.algorithms.confidence_bounds.lil_radii_of_counts` up to its size limit, then
    :func:`allocopt.complexity.lil_radius` on the counts directly (the numbers ``lil_radii_of_counts`` computes
    there). Raises :class:`~allocopt.exceptions.InvalidArgumentError` where the radius is not real.

    Examples
    --------
    >>> from allocopt.complexity import lil_radius
    >>> table = radius_table(0.005, 0.0, "experiments", 10)
    >>> bool(table[7] == lil_radius(np.array([7]), 0.005, 0.0, 1.0, form="experiments")[0])
    True
    """
    table = _lil_table(omega, eps, form, largest)
    if table is not None:
        return table
    key = ("lil", float(omega), float(eps), form)
    table = _TABLES.get(key)
    if table is None or table.shape[0] <= largest:
        size = max(FIRST_TABLE_SIZE, 1 << int(largest).bit_length())
        values = lil_radius(np.arange(1, size), omega, eps, 1.0, form=form)  # type: ignore[arg-type]
        table = _cached(key, np.concatenate([[np.nan], np.asarray(values, dtype=float)]))
    return table


def rate_table(exploration: str, delta: float, n_arms: int, largest: int) -> np.ndarray:
    r""":math:`\beta(t, \delta)` of :func:`~allocopt.algorithms.confidence_bounds.exploration_rate` for
    :math:`t = 0, 1, \dots` (entry 0 NaN) beyond ``largest``, evaluated by that function on the whole range.

    Examples
    --------
    >>> table = rate_table("kalyanakrishnan", 0.01, 4, 100)
    >>> bool(table[37] == exploration_rate("kalyanakrishnan", np.array([37]), 0.01, 4)[0])
    True
    """
    key = ("rate", exploration, float(delta), int(n_arms))
    table = _TABLES.get(key)
    if table is None or table.shape[0] <= largest:
        size = max(FIRST_TABLE_SIZE, 1 << int(largest).bit_length())
        values = exploration_rate(exploration, np.arange(1, size), delta, n_arms)
        table = _cached(key, np.concatenate([[np.nan], np.asarray(values, dtype=float)]))
    return table


# ----------------------------------------------------------------------------------------- driver
def refill_rows(rows: np.ndarray, need_reward: np.ndarray, need_uniforms: np.ndarray, need: np.ndarray, rewards,
                uniforms: np.ndarray, uniform_position: np.ndarray, policy_generators) -> None:
    """What a compiled run loop's rows handed back for: the reward stream of each row of ``rows`` where
    ``need_reward`` (refilled from pull ``need[row]`` on), and the policy uniforms where ``need_uniforms`` (the
    unread ones move to the front of the row's block, the next draws of its generator behind them)."""
    from .rewards import _HALF_ULP

    for row in rows[need_reward].tolist():
        rewards._refill(row, int(need[row]))
    size = uniforms.shape[1]
    for row in rows[need_uniforms].tolist():
        start = int(uniform_position[row])
        unread = size - start
        uniforms[row, :unread] = uniforms[row, start:].copy()
        uniforms[row, unread:] = policy_generators[row].random(size - unread) + _HALF_ULP
        uniform_position[row] = 0


def run_lucb_rows(plan: LucbPlan, k: int, max_samples: int, counts: np.ndarray, sums: np.ndarray, t: np.ndarray,
                  rewards, policy_generators) -> LucbRun:
    r"""Run every row of a batch, from the engine's state after the initial pulls, until its rule stops or the
    sample cap; ``counts``, ``sums`` and ``t`` are updated in place.

    Parameters
    ----------
    plan : LucbPlan
        The rule (its ``compiled_plan``).
    k, max_samples : int
    counts, sums : ndarray, shape (R, K)
        int64 counts and float64 sums of the rewards.
    t : ndarray, shape (R,)
        int64 pulls so far.
    rewards : RewardStreams
        The batch's reward streams (read from their buffers; refilled by them).
    policy_generators : list of numpy.random.Generator
        Each row's policy stream (:class:`~allocopt.algorithms.rewards.PolicyStreams`' generators, not yet drawn
        from).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify, LilRandLUCB
    >>> from allocopt.algorithms._compiled import compiled_kernels
    >>> problem = TopKProblem([0.5, 0.5, 0.0, 0.0, 0.0], k=2, variance=0.25)
    >>> fast = identify(problem, LilRandLUCB(), delta=0.01, n_runs=6, rng=3)  # through run_lucb_rows
    >>> with compiled_kernels(False):  # the engine's numpy loop
    ...     slow = identify(problem, LilRandLUCB(), delta=0.01, n_runs=6, rng=3)
    >>> bool(np.array_equal(fast.stopping_times, slow.stopping_times))
    True
    """
    n_rows, n_arms = counts.shape
    if sums.shape != (n_rows, n_arms) or t.shape != (n_rows,) or counts.dtype != np.int64 or t.dtype != np.int64:
        fail("run_lucb_rows", "counts", "int64 counts (R, K), float64 sums (R, K) and int64 t (R,)", counts.shape)
    kernel = _kernel()
    per_step = plan.uniforms_per_step
    means = np.empty((n_rows, n_arms))
    revised = np.empty((n_rows, n_arms))
    radii = np.empty((n_rows, n_arms))
    order = np.empty((n_rows, n_arms), dtype=np.int64)
    rank = np.empty((n_rows, n_arms), dtype=np.int64)
    revised_order = np.empty((n_rows, n_arms), dtype=np.int64)
    revised_rank = np.empty((n_rows, n_arms), dtype=np.int64)
    in_top = np.zeros((n_rows, n_arms), dtype=np.bool_)
    count_values = np.empty((n_rows, n_arms))
    leaves = 1 << max(0, n_arms - 1).bit_length()  # a power of two >= K
    low_values, high_values = np.empty((n_rows, 2 * leaves)), np.empty((n_rows, 2 * leaves))
    low_counts = np.empty((n_rows, 2 * leaves), dtype=np.int64)
    high_counts = np.empty((n_rows, 2 * leaves), dtype=np.int64)
    mismatches = np.zeros(n_rows, dtype=np.int64)
    initialised = np.zeros(n_rows, dtype=np.bool_)
    selects = np.zeros(n_rows, dtype=np.int64)
    status = np.zeros(n_rows, dtype=np.int64)
    need = np.zeros(n_rows, dtype=np.int64)
    uniforms = np.empty((n_rows, UNIFORM_STEPS * per_step))
    uniform_position = np.full(n_rows, uniforms.shape[1], dtype=np.int64)
    sigma = np.ascontiguousarray(plan.sigma, dtype=float)
    largest = int(counts.max(initial=1)) + 1
    if plan.radius == LIL:
        top_table = radius_table(plan.omega_top, plan.eps, plan.form, largest)
        bottom_table = radius_table(plan.omega_bottom, plan.eps, plan.form, largest)
        twice_variance, rates = np.zeros(n_arms), np.zeros(1)
    else:
        top_table = bottom_table = np.zeros(1)
        assert plan.variance is not None
        twice_variance = 2.0 * np.asarray(plan.variance, dtype=float)
        rates = rate_table(plan.exploration, plan.delta, n_arms, int(t.max(initial=1)) + 1)
    pending = np.arange(n_rows, dtype=np.int64)
    while pending.size:
        kernel(pending, plan.kind, plan.radius, k, max_samples, per_step, counts, sums, means, count_values, t,
               selects, initialised, order, rank, in_top, revised, revised_order, revised_rank, radii, low_values,
               low_counts, high_values, high_counts, mismatches, rewards.buffer, rewards.position, uniforms,
               uniform_position, top_table, bottom_table, sigma, twice_variance, rates, status, need)
        refill_rows(pending, status[pending] == _NEED_REWARD, status[pending] == _NEED_UNIFORMS, need, rewards,
                    uniforms, uniform_position, policy_generators)
        grow = status[pending] == _NEED_TABLE
        if grow.any():
            largest = int(need[pending[grow]].max()) + 1
            top_table = radius_table(plan.omega_top, plan.eps, plan.form, largest)
            bottom_table = radius_table(plan.omega_bottom, plan.eps, plan.form, largest)
        grow = status[pending] == _NEED_RATE
        if grow.any():
            rates = rate_table(plan.exploration, plan.delta, n_arms, int(need[pending[grow]].max()) + 1)
        pending = pending[(status[pending] != _STOPPED) & (status[pending] != _CAPPED)]
    return LucbRun(stopped=status == _STOPPED, selects=selects)
