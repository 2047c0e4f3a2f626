r"""The engine's one compiled run loop, built once per step kernel (a loop factory).

A rule with a compiled step (:class:`~allocopt.algorithms.engine.protocol.StepKernel`) runs its replications here, one
replication at a time, each until it stops, reaches the sample cap or its last budget. One iteration of a row:

1. the statistics: the means, the empirical top-k (stable: the first k of a stable sort by decreasing mean) and,
   where the run stops on it or the rule reads it, the Chernoff statistic :math:`Z_t` with its pair (the
   families' compiled pair kernels, through the statistic's row functions);
2. the records, as the engine's numpy loop makes them: a confidence level whose threshold :math:`Z_t` exceeds for
   the first time (read from a table of :math:`\beta(t, \delta)`), the rule's own ``stop``, or a budget reached,
   records :math:`t` and the recommendation (the rule's ``recommend`` or the empirical top-k); at the sample cap the
   open levels are recorded, not stopped;
3. the rule's step ``select(row, view, state, params, uniforms, each)`` with the row's next ``per_step`` policy
   uniforms; it returns ``(arm, times)``: pull ``arm`` ``times`` times, or (``arm`` = :data:`EACH`) pull arm ``a``
   ``each[a]`` times for every ``a``;
4. the pulls, cut (in arm order or lowest count first) so that no budget and no sample cap is passed; a block adds
   the sequential sum of its rewards, left to right.

A row leaves the compiled code when it needs what only Python gives, before any state changes: rewards (its arm's
buffer is read to its end), policy uniforms, a longer threshold table, a longer table of the rule's, or Python
itself for one step (the rule's step returned :data:`DEFER`: the engine runs the rule's ``select`` on that row
and hands its action back). The driver (:mod:`allocopt.algorithms.engine.run`) supplies it and calls the loop again on
the rows that are still running. A block cut short by a refill is finished first when the row comes back.

:func:`build_loop` makes the loop of a step kernel: a copy of :func:`_run_rows` whose globals name the rule's
``select``, ``stop`` and ``recommend``, compiled with numba's cache under a name that carries a digest of the
kernels' source (so that a changed rule never reuses a stale loop from the cache).
"""

from __future__ import annotations

import hashlib
import inspect
import threading
import types
from typing import Callable, NamedTuple

import numpy as np

from ...families import kernels as _families
from ..._numba import compile_kernels, kernel, numba_njit
from .protocol import DEFER, EACH, GROW, NO_UNIFORMS, RunView

__all__ = ["RUNNING", "STOPPED", "CAPPED", "NEED_REWARD", "NEED_UNIFORMS", "NEED_TABLE", "NEED_PYTHON", "NEED_GROW",
           "EACH", "DEFER", "GROW", "NO_UNIFORMS", "MODE_GLR", "MODE_RULE", "MODE_BUDGET", "LoopConfig",
           "LoopRows", "LoopBuffers", "build_loop", "never_stop", "empirical_top", "split_top_k", "pick_among"]

# row statuses (what the loop hands back)
RUNNING, STOPPED, CAPPED, NEED_REWARD, NEED_UNIFORMS, NEED_TABLE, NEED_PYTHON, NEED_GROW = range(8)
# what a step returns as its arm when it does not pull one arm: EACH, DEFER, GROW, NO_UNIFORMS (protocol)
# how a run stops
MODE_GLR, MODE_RULE, MODE_BUDGET = 0, 1, 2
GAUSSIAN_STATISTIC = -1  # LoopConfig.family: the closed-form Gaussian statistic (else a pair-kernel number)


class LoopConfig(NamedTuple):
    """What the loop reads and never changes (one run of the engine)."""

    k: int
    mode: int
    needs_glr: bool  # compute Z_t at every step (the run stops on it, or the rule reads it)
    needs_split: bool  # compute the empirical top-k at every step (else only where a record is made)
    family: int  # GAUSSIAN_STATISTIC or the family's pair-kernel number
    dispersion: np.ndarray  # (K,)
    checkpoints: np.ndarray  # (C,) confidence levels or budgets
    max_samples: int
    per_step: int  # policy uniforms per step
    water_fill: bool  # blocks cut lowest count first (else in arm order)


class LoopRows(NamedTuple):
    """The engine's state of every row of the batch, changed in place."""

    counts: np.ndarray  # (R, K) int64
    sums: np.ndarray  # (R, K)
    t: np.ndarray  # (R,) int64 pulls so far
    steps: np.ndarray  # (R,) int64 steps of the rule
    done: np.ndarray  # (R, C) bool
    times: np.ndarray  # (R, C) int64
    recommendations: np.ndarray  # (R, C, k) int64
    stopped: np.ndarray  # (R, C) bool
    status: np.ndarray  # (R,) int64
    need: np.ndarray  # (R,) int64: the arm, table index or rule table index a row needs
    pending: np.ndarray  # (R, K) int64: pulls of the current block still to make
    pending_total: np.ndarray  # (R,) int64: their sum
    pending_sum: np.ndarray  # (R, K): the sums of the blocks started


class LoopBuffers(NamedTuple):
    """Rewards, policy uniforms and the threshold table (refilled and grown by the driver)."""

    rewards: np.ndarray  # (R, K, B)
    reward_position: np.ndarray  # (R, K) int64
    uniforms: np.ndarray  # (R, U)
    uniform_position: np.ndarray  # (R,) int64
    thresholds: np.ndarray  # (T, C): beta(t, delta_c); row t for t < T


# --------------------------------------------------------------------------------------- row functions
@kernel
def split_top_k(values, k, top, bottom, best_values, best_arms, member):
    """The first k arms of a stable sort of ``values`` by decreasing value into ``top`` and the others into
    ``bottom``, each in increasing arm order (an insertion top-k: O(K k) at worst, O(K) on a settled run)."""
    n_arms = values.shape[0]
    size = 0
    for arm in range(n_arms):
        value = values[arm]
        if size == k:
            if not value > best_values[k - 1]:
                continue
            position = k - 1
        else:
            position = size
            size += 1
        while position > 0 and best_values[position - 1] < value:
            best_values[position] = best_values[position - 1]
            best_arms[position] = best_arms[position - 1]
            position -= 1
        best_values[position] = value
        best_arms[position] = arm
    member[:] = False
    for position in range(k):
        member[best_arms[position]] = True
    n_top = 0
    n_bottom = 0
    for arm in range(n_arms):
        if member[arm]:
            top[n_top] = arm
            n_top += 1
        else:
            bottom[n_bottom] = arm
            n_bottom += 1


@kernel
def copy_into(destination, source):
    """``destination[:] = source`` for 1-d arrays of one length, element by element: a slice assignment from an
    array makes numba compile its shape-mismatch message (string formatting) into the kernel, seconds of first
    use."""
    for index in range(destination.shape[0]):
        destination[index] = source[index]


@kernel
def pick_among(arms, values, largest, uniform):
    """The arm of ``arms`` of largest (or smallest) value, ties broken as :func:`allocopt._rng.random_candidate`
    breaks them: the floor(u c)-th of the c tied arms in the order of ``arms``. ``arms[0]`` when a value is NaN
    (numpy's comparison with a NaN extreme finds no candidate, and random_candidate then returns the first)."""
    extreme = values[arms[0]]
    tied = 0
    for position in range(arms.shape[0]):
        value = values[arms[position]]
        if value != value:
            return arms[0]
        if (value > extreme) if largest else (value < extreme):
            extreme, tied = value, 1
        elif value == extreme:
            tied += 1
    pick = min(int(uniform * tied), tied - 1)
    for position in range(arms.shape[0]):
        if values[arms[position]] == extreme:
            if pick == 0:
                return arms[position]
            pick -= 1
    return arms[0]


@kernel
def chernoff_statistic(family, counts, means, dispersion, top, bottom, work):
    r""":math:`Z_t = \min_{i \in \text{top}, j \in \text{bottom}} t\,C_{ij}(N/t)` and the first pair attaining it in
    row-major order: the Gaussian closed form :math:`(\hat\mu_i - \hat\mu_j)^2 / (2(\sigma_i^2/N_i +
    \sigma_j^2/N_j))` for ``family`` :data:`GAUSSIAN_STATISTIC`, else the family's pair kernel at the effective
    weights :math:`N_a/\phi_a` (a tie across the boundary, or a NaN at the edge of the domain, costs 0).
    ``work`` is a (4, K) work array (the bottom arms' means and weights are copied to contiguous rows, so that a
    top arm's costs are computed in one vectorisable pass)."""
    k, n_bottom = top.shape[0], bottom.shape[0]
    gaussian = family == GAUSSIAN_STATISTIC
    weights, mean_bottom, weight_bottom, cost = work[0], work[1], work[2], work[3]
    for arm in range(counts.shape[0]):  # 1/w for the closed form, w for the pair kernels
        weights[arm] = 1.0 / (counts[arm] / dispersion[arm]) if gaussian else counts[arm] / dispersion[arm]
    for j in range(n_bottom):
        mean_bottom[j] = means[bottom[j]]
        weight_bottom[j] = weights[bottom[j]]
    best = np.inf
    best_top, best_bottom = top[0], 0
    for i in range(k):
        arm_top = top[i]
        mean_top, weight_top = means[arm_top], weights[arm_top]
        if gaussian:
            for j in range(n_bottom):  # the stable split gives mean_top >= mean_bottom: a tie costs 0
                gap = mean_top - mean_bottom[j]
                cost[j] = 0.5 * (gap * gap) / (weight_top + weight_bottom[j])
        else:
            for j in range(n_bottom):
                value = 0.0
                if mean_top > mean_bottom[j]:
                    value = family_pair_cost(family, mean_top, mean_bottom[j], weight_top, weight_bottom[j])
                    if value != value:
                        value = 0.0
                cost[j] = value
        for j in range(n_bottom):  # the first minimum in row-major order, as numpy's argmin
            if cost[j] < best:
                best, best_top, best_bottom = cost[j], arm_top, j
    return best, best_top, bottom[best_bottom]


@kernel
def cut_pulls(each, counts, remaining, water_fill, out):
    """The pulls of a step's blocks ``each`` that fit in ``remaining`` pulls into ``out``: a prefix of one order of
    single pulls (arm 0's block, then arm 1's, ...; or with ``water_fill`` always an arm of smallest count whose
    block is not spent, ties to the smaller arm), as :func:`allocopt.algorithms.engine.run.cut_blocks`."""
    n_arms = each.shape[0]
    total = 0
    for arm in range(n_arms):
        total += each[arm]
    if total <= remaining:
        copy_into(out, each)
        return total
    out[:] = 0
    if not water_fill:
        left = remaining
        for arm in range(n_arms):
            take = min(each[arm], left)
            out[arm] = take
            left -= take
        return remaining
    for _ in range(remaining):
        chosen = -1
        for arm in range(n_arms):
            if out[arm] < each[arm] and (chosen < 0 or counts[arm] + out[arm] < counts[chosen] + out[chosen]):
                chosen = arm
        out[chosen] += 1
    return remaining


@kernel
def continue_pulls(row, rows, buffers):
    """Make the pulls left in ``rows.pending[row]``, arm by arm: each pull adds its reward to the block's running
    sum, which is added to the arm's sum when the block ends (a block's sequential sum, as the engine adds it).
    Returns False, with the row handed back for a refill (:data:`NEED_REWARD`, the arm in ``need``), when an arm's
    buffer is read to its end; the pulls made so far are kept and the rest follows when the row comes back."""
    if rows.pending_total[row] == 0:
        return True
    n_arms = rows.counts.shape[1]
    block = buffers.rewards.shape[2]
    for arm in range(n_arms):
        while rows.pending[row, arm] > 0:
            position = buffers.reward_position[row, arm]
            if position >= block:
                rows.status[row] = NEED_REWARD
                rows.need[row] = arm
                return False
            rows.pending_sum[row, arm] += buffers.rewards[row, arm, position]
            buffers.reward_position[row, arm] = position + 1
            rows.counts[row, arm] += 1
            rows.t[row] += 1
            rows.pending[row, arm] -= 1
            rows.pending_total[row] -= 1
            if rows.pending[row, arm] == 0:
                rows.sums[row, arm] += rows.pending_sum[row, arm]
                rows.pending_sum[row, arm] = 0.0
    return True


@kernel
def pull_once(row, arm, rows, buffers):
    """One pull of ``arm``: its next reward added to the arm's sum; when the arm's buffer is read to its end the pull
    is left pending (made when the row comes back from its refill) and False is returned."""
    position = buffers.reward_position[row, arm]
    if position >= buffers.rewards.shape[2]:
        rows.pending[row, arm] = 1
        rows.pending_total[row] = 1
        rows.status[row] = NEED_REWARD
        rows.need[row] = arm
        return False
    rows.sums[row, arm] += buffers.rewards[row, arm, position]
    buffers.reward_position[row, arm] = position + 1
    rows.counts[row, arm] += 1
    rows.t[row] += 1
    return True


@kernel
def remaining_pulls(row, config, rows):
    """The pulls the next step may make: up to the sample cap, or up to the next budget not yet recorded."""
    if config.mode != MODE_BUDGET:
        return max(config.max_samples - rows.t[row], 1)
    for check in range(config.checkpoints.shape[0]):
        if not rows.done[row, check]:
            return max(int(config.checkpoints[check]) - rows.t[row], 1)
    return 1


@kernel
def split_rows(values, k, top, bottom):
    """:func:`split_top_k` of every row of ``values`` (R, K) into ``top`` (R, k) and ``bottom`` (R, K - k)."""
    n_rows, n_arms = values.shape
    best_values, best_arms = np.empty(k), np.empty(k, dtype=np.int64)
    member = np.empty(n_arms, dtype=np.bool_)
    for row in range(n_rows):
        split_top_k(values[row], k, top[row], bottom[row], best_values, best_arms, member)


@kernel
def chernoff_rows(family, counts, means, dispersion, k, value, top, bottom, pair_top, pair_bottom):
    """:func:`chernoff_statistic` of every row (R, K), with its stable top-k: what the engine's Python loop reads."""
    n_rows, n_arms = means.shape
    work = np.empty((4, n_arms))
    split_rows(means, k, top, bottom)
    for row in range(n_rows):
        value[row], pair_top[row], pair_bottom[row] = chernoff_statistic(family, counts[row], means[row], dispersion,
                                                                         top[row], bottom[row], work)


@kernel
def checkpoint_reached(config, buffers, t, check, value, crossed):
    """Whether level or budget ``check`` is reached at ``t``: the statistic ``value`` above its threshold, the rule's
    own stop (``crossed``), or the budget."""
    if config.mode == MODE_GLR:
        return value > buffers.thresholds[t, check]
    if config.mode == MODE_RULE:
        return crossed
    return t >= config.checkpoints[check]


def never_stop(row, view, state, params):
    """The ``stop`` of a rule stopped by the engine (never called in a run stopped by the statistic)."""
    return False


def empirical_top(row, view, state, params, out):
    """The default recommendation: the empirical top-k."""
    copy_into(out, view.top)


# ---------------------------------------------------------------------------------------------- the loop
def _run_rows(rows_to_run, config, rows, buffers, state, params):  # pragma: no cover - compiled (build_loop)
    n_arms = rows.counts.shape[1]
    k = config.k
    n_check = config.checkpoints.shape[0]
    means, statistic_work = np.empty(n_arms), np.empty((4, n_arms))
    top, bottom = np.empty(k, dtype=np.int64), np.empty(n_arms - k, dtype=np.int64)
    best_values, best_arms = np.empty(k), np.empty(k, dtype=np.int64)
    member = np.empty(n_arms, dtype=np.bool_)
    each, cut = np.zeros(n_arms, dtype=np.int64), np.zeros(n_arms, dtype=np.int64)
    recommended = np.empty(k, dtype=np.int64)
    no_split = np.empty(0, dtype=np.int64)
    for row in rows_to_run:
        rows.status[row] = RUNNING
        while True:
            if not continue_pulls(row, rows, buffers):  # a block cut short by a refill first
                break
            t = rows.t[row]
            for arm in range(n_arms):
                means[arm] = rows.sums[row, arm] / rows.counts[row, arm]
            value, pair_top, pair_bottom = np.nan, -1, -1
            if config.needs_glr or config.needs_split:
                split_top_k(means, k, top, bottom, best_values, best_arms, member)
            if config.needs_glr:
                value, pair_top, pair_bottom = chernoff_statistic(config.family, rows.counts[row], means,
                                                                  config.dispersion, top, bottom, statistic_work)
            view = RunView(t, rows.counts[row], rows.sums[row], means, value, top, bottom, pair_top, pair_bottom)
            if not (config.needs_glr or config.needs_split):
                view = RunView(t, rows.counts[row], rows.sums[row], means, value, no_split, no_split, pair_top,
                               pair_bottom)
            # 2. the records
            if config.mode == MODE_GLR and t >= buffers.thresholds.shape[0]:
                rows.status[row] = NEED_TABLE
                rows.need[row] = t
                break
            crossed = False
            if config.mode == MODE_RULE:
                crossed = rule_stop(row, view, state, params)  # noqa: F821 - bound by build_loop
            finished = True
            capped = config.mode != MODE_BUDGET and t >= config.max_samples
            recording = capped
            for check in range(n_check):
                if not rows.done[row, check]:
                    if checkpoint_reached(config, buffers, t, check, value, crossed):
                        recording = True
                    else:
                        finished = False
            if recording:
                if not (config.needs_glr or config.needs_split):
                    split_top_k(means, k, top, bottom, best_values, best_arms, member)
                    view = RunView(t, rows.counts[row], rows.sums[row], means, value, top, bottom, pair_top,
                                   pair_bottom)
                rule_recommend(row, view, state, params, recommended)  # noqa: F821 - bound by build_loop
                for check in range(n_check):
                    if rows.done[row, check]:
                        continue
                    reached = checkpoint_reached(config, buffers, t, check, value, crossed)
                    if reached or capped:
                        rows.times[row, check] = t
                        copy_into(rows.recommendations[row, check], recommended)
                    if reached:
                        rows.done[row, check] = True
                        rows.stopped[row, check] = True
            if finished:
                rows.status[row] = STOPPED
                break
            if capped:
                rows.status[row] = CAPPED
                break
            # 3. the rule's step
            position = buffers.uniform_position[row]
            if position + config.per_step > buffers.uniforms.shape[1]:
                rows.status[row] = NEED_UNIFORMS
                break
            arm, times = rule_select(row, view, state, params,  # noqa: F821 - bound by build_loop
                                     buffers.uniforms[row, position:position + config.per_step], each)
            if arm == DEFER or arm == GROW or arm == NO_UNIFORMS:
                rows.status[row] = NEED_PYTHON if arm == DEFER else (NEED_GROW if arm == GROW else NEED_UNIFORMS)
                rows.need[row] = each[0]
                break
            buffers.uniform_position[row] = position + config.per_step
            rows.steps[row] += 1
            # 4. the pulls, cut at the cap or the next budget
            if arm != EACH and times == 1:
                if not pull_once(row, arm, rows, buffers):
                    break
                continue
            if arm != EACH:
                each[:] = 0
                each[arm] = times
            rows.pending_total[row] = cut_pulls(each, rows.counts[row], remaining_pulls(row, config, rows),
                                                config.water_fill, cut)
            copy_into(rows.pending[row], cut)


def prepare_kernels() -> None:
    """Compile what the kernels call by name: the families' kernel table, then every function marked as a kernel
    (numba compiles each at its first call, or loads it from its cache)."""
    _families._kernels()
    compile_kernels()


_BUILD_LOCK = threading.Lock()
_LOOPS: dict[tuple, Callable] = {}


def _source_digest(functions) -> str:
    """A digest of the source files that define ``functions`` and of this module (a changed kernel gets a new loop
    name, so that numba's cache, which checks only this file's time stamp, never serves a stale loop)."""
    digest = hashlib.sha1()
    files = sorted({inspect.getsourcefile(function) or "" for function in functions} | {__file__})
    for path in files:
        try:
            with open(path, "rb") as handle:
                digest.update(handle.read())
        except OSError:
            digest.update(path.encode())
    return digest.hexdigest()[:12]


def build_loop(select: Callable, stop: Callable = never_stop, recommend: Callable = empirical_top) -> Callable:
    """The compiled loop of a step kernel (built once per process and kernel; numba's disk cache keeps its machine
    code between processes). ``select``, ``stop`` and ``recommend`` are plain functions that numba can compile;
    the kernels they call by global name are marked with :func:`allocopt._numba.kernel`."""
    key = (select, stop, recommend)
    loop = _LOOPS.get(key)
    if loop is not None:
        return loop
    with _BUILD_LOCK:
        loop = _LOOPS.get(key)
        if loop is None:
            prepare_kernels()
            njit = numba_njit()
            namespace = dict(globals())
            namespace.update(rule_select=njit(select), rule_stop=njit(stop), rule_recommend=njit(recommend))
            template = types.FunctionType(_run_rows.__code__, namespace, "_run_rows")
            name = f"{select.__module__.rpartition('.')[2]}_{select.__name__}"
            template.__qualname__ = f"run_rows__{name}__{_source_digest((select, stop, recommend))}"
            template.__module__ = __name__
            loop = _LOOPS[key] = njit(template)
    return loop


@kernel
def family_pair_cost(family, theta_top, theta_bottom, weight_top, weight_bottom):
    """The pair cost of effective weights ``weight_*`` by the families' compiled kernel number ``family``."""
    return _families.weighted_pair(family, theta_top, theta_bottom, weight_top, weight_bottom)[0]
