r"""The sequential engine: runs a sampling rule on a batch of replications, vectorised over replications.

One step of the loop, for all active replications at once:

1. statistics (means) and the Chernoff statistic with the empirical top-k (:mod:`.stopping`), or another
   stopping statistic given by the caller, or only the empirical top-k when nothing reads the statistic;
2. fixed confidence: every confidence level whose threshold is crossed for the first time (or, for a rule
   with its own stopping rule, whose ``stop`` says so) records its stopping time and recommendation; fixed
   budget: every budget reached records the recommendation (the rule's ``recommend``, by default the
   empirical top-k);
3. replications that are done (every delta stopped, the sample cap or the last budget reached) drop out;
4. the rule chooses an action for every remaining replication - ``select_batch`` once, or ``select`` per
   replication when ``batched=False`` or the rule has no batched form - and the engine pulls it: one arm,
   one arm several times, or several arms several times each. Blocks are cut so that no budget and no sample
   cap is exceeded, in arm order or, for a rule that declares ``block_cut = "water-fill"``, lowest count first
   (:func:`cut_blocks`).

A rule whose ``compiled_step`` gives a :class:`~allocopt.algorithms.engine.protocol.StepKernel` runs a batched run (when the
compiled kernels are enabled and the caller gives no statistic of its own) in the engine's one compiled loop
(:mod:`allocopt.algorithms.engine.loop`) instead: the same four steps, one replication at a time, with the same records;
the driver :func:`_run_compiled` refills its buffers and runs the steps the kernel defers in the rule's ``select``.

Before the rule's first step every arm is pulled ``rule.initial_pulls`` times (default once), in arm order.
Rewards and policy uniforms come from the common-random-number streams of :mod:`.rewards`, so the outcome
of replication ``i`` depends only on the entropy and ``i``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..._validation import fail
from ...topk.problem import TopKProblem
from ..._numba import compiled_enabled
from .protocol import BatchPull, BatchPullEach, Pull, PullEach, RuleContext, RunView, rule_traits
from .rewards import PolicyStreams, RewardStreams
from .statistics import empirical_means, top_k_order
from .stopping import GLRStatistic, glr_statistic, statistic_code

__all__ = ["RunRecords", "run_replications", "empirical_split", "cut_blocks"]


@dataclass
class RunRecords:
    """Per-replication outcomes of one batch (rows in the order of the replication indices given).

    ``checkpoints`` are the confidence levels (fixed confidence) or the budgets (fixed budget);
    ``times[r, c]`` is the stopping time (or the budget) and ``recommendations[r, c]`` the empirical top-k
    recorded there; ``stopped[r, c]`` is False where the sample cap was reached first; ``pulls[r]`` are the
    counts when the replication finished.
    """

    times: np.ndarray
    recommendations: np.ndarray
    stopped: np.ndarray
    pulls: np.ndarray
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)
    steps: int = 0
    replication_steps: int = 0


def _row_state(state: dict[str, np.ndarray], row: int) -> dict[str, np.ndarray]:
    return {name: values[row] for name, values in state.items()}


def _row_view(view: RunView, row: int) -> RunView:
    return RunView(*(value[row] for value in view))


def _subset_view(view: RunView, rows: np.ndarray) -> RunView:
    return RunView(*(value[rows] for value in view))


def empirical_split(family, dispersion, counts: np.ndarray, sums: np.ndarray, means: np.ndarray,
                    k: int) -> GLRStatistic:
    """The empirical top-k without the Chernoff statistic (``value`` NaN, pair arms -1): what the engine
    hands to rules that neither stop on the statistic nor read it."""
    top, bottom = top_k_order(means, k)
    shape = means.shape[:-1]
    return GLRStatistic(np.full(shape, np.nan), top, bottom, np.full(shape, -1), np.full(shape, -1))


def _no_split(family, dispersion, counts, sums, means, k) -> GLRStatistic:
    """Nothing per step (rules that read neither the statistic nor the empirical top-k): ``top`` and ``bottom``
    are empty; the engine computes the empirical top-k only where it records a recommendation."""
    shape = means.shape[:-1]
    empty = np.zeros(shape + (0,), dtype=np.int64)
    return GLRStatistic(np.full(shape, np.nan), empty, empty, np.full(shape, -1), np.full(shape, -1))


def _chernoff(family, dispersion, counts, sums, means, k) -> GLRStatistic:
    return glr_statistic(family, dispersion, counts, means, k)


class _Actions:
    """The actions of one step: one arm and a block length per run, or (``each``) a count per arm and run."""

    __slots__ = ("arms", "blocks", "each")

    def __init__(self, arms: np.ndarray, blocks: np.ndarray, each: np.ndarray | None):
        self.arms, self.blocks, self.each = arms, blocks, each


def _bad_action(func: str, action) -> None:
    fail(func, "policy", "a rule whose select returns an arm, a Pull with times >= 1 or a PullEach of "
         "non-negative counts (at least one positive) per run", action)


def _normalise_batch(action, n_rows: int, n_arms: int, func: str) -> _Actions:
    if isinstance(action, BatchPullEach):
        each = np.asarray(action.counts)
        if (each.shape != (n_rows, n_arms) or not np.issubdtype(each.dtype, np.integer) or np.any(each < 0)
                or np.any(each.sum(axis=1) < 1)):
            _bad_action(func, action)
        return _Actions(np.zeros(n_rows, dtype=np.int64), np.zeros(n_rows, dtype=np.int64), each.astype(np.int64))
    if isinstance(action, BatchPull):
        arms, counts = np.asarray(action.arms, dtype=np.int64), np.asarray(action.counts, dtype=np.int64)
    else:
        arms = np.asarray(action, dtype=np.int64)
        counts = np.ones(n_rows, dtype=np.int64)
    if arms.shape != (n_rows,) or counts.shape != (n_rows,) or np.any(counts < 1):
        _bad_action(func, action)
    return _Actions(arms, counts, None)


def _select_scalar(rule, context, view: RunView, state, uniforms, n_arms: int, func: str) -> _Actions:
    n_rows = view.counts.shape[0]
    arms = np.zeros(n_rows, dtype=np.int64)
    counts = np.ones(n_rows, dtype=np.int64)
    each: np.ndarray | None = None
    for row in range(n_rows):
        action = rule.select(context, _row_view(view, row), _row_state(state, row), uniforms[row])
        if isinstance(action, PullEach):
            row_counts = np.asarray(action.counts)
            if (row_counts.shape != (n_arms,) or not np.issubdtype(row_counts.dtype, np.integer)
                    or np.any(row_counts < 0) or row_counts.sum() < 1):
                _bad_action(func, action)
            if each is None:
                each = np.zeros((n_rows, n_arms), dtype=np.int64)
            each[row] = row_counts
            counts[row] = 0
        elif isinstance(action, Pull):
            arms[row], counts[row] = int(action.arm), int(action.times)
            if counts[row] < 1:
                _bad_action(func, action)
        else:
            arms[row] = int(action)
    return _Actions(arms, counts, each)


def _as_each(actions: _Actions, n_arms: int) -> np.ndarray:
    """Every action as a count per arm (single-arm actions placed at their arm)."""
    each = np.zeros((actions.arms.shape[0], n_arms), dtype=np.int64) if actions.each is None else actions.each.copy()
    single = actions.blocks > 0
    each[np.flatnonzero(single), actions.arms[single]] += actions.blocks[single]
    return each


def cut_blocks(each: np.ndarray, counts: np.ndarray, remaining: np.ndarray, how: str = "arm-order") -> np.ndarray:
    r"""The pulls of a step's blocks that fit in ``remaining`` pulls, per run: the blocks are a prefix of one
    sequential order of single pulls, cut where the pulls run out.

    * ``"arm-order"``: arm 0's whole block, then arm 1's, and so on;
    * ``"water-fill"``: always the arm of smallest count (``counts`` plus the pulls made so far) among those
      whose block is not spent, ties to the smaller index. After :math:`R` pulls every arm :math:`i` has the
      count :math:`\min(c_i + e_i, \max(c_i, L))`, with :math:`L` the largest level such that
      :math:`\sum_i \min(e_i, (L - c_i)^+) \le R`, and the pulls left go one each to the arms at level
      :math:`L` whose block is not spent, in index order. When the arms start at equal counts this pulls the blocks in
      passes, one pull per arm per pass, round robin, so that the cut leaves counts that differ by at most one.

    Either way the cut is a prefix of one order, so cutting a block and asking for the rest at the next step
    pulls the same arms as one uncut block.

    Parameters
    ----------
    each : ndarray of int, shape (n_runs, n_arms)
        The pulls asked for per arm.
    counts : ndarray of int, shape (n_runs, n_arms)
        The counts before the step.
    remaining : ndarray of int, shape (n_runs,)
        The pulls allowed per run (>= 1).
    how : {"arm-order", "water-fill"}

    Examples
    --------
    >>> each = np.array([[5, 5, 5]])
    >>> cut_blocks(each, np.array([[1, 1, 1]]), np.array([7])).tolist()
    [[5, 2, 0]]
    >>> cut_blocks(each, np.array([[1, 1, 1]]), np.array([7]), "water-fill").tolist()
    [[3, 2, 2]]
    """
    if how == "arm-order":
        before = np.cumsum(each, axis=1) - each
        return np.clip(remaining[:, None] - before, 0, each)
    cut = each.copy()
    rows = np.flatnonzero(each.sum(axis=1) > remaining)
    if not rows.size:
        return cut
    start, asked, allowed = counts[rows], each[rows], remaining[rows]
    # bisection on the level L, invariant: S(low) <= allowed < S(high), S(L) = sum_i clip(L - c_i, 0, e_i)
    low, high = start.min(axis=1), (start + asked).max(axis=1)
    while np.any(high - low > 1):
        middle = (low + high) // 2
        fits = np.clip(middle[:, None] - start, 0, asked).sum(axis=1) <= allowed
        low, high = np.where(fits, middle, low), np.where(fits, high, middle)
    filled = np.clip(low[:, None] - start, 0, asked)
    at_level = (start + filled == low[:, None]) & (filled < asked)
    extra = at_level & (np.cumsum(at_level, axis=1) <= (allowed - filled.sum(axis=1))[:, None])
    cut[rows] = filled + extra
    return cut


def _stop_mask(rule, context, view: RunView, state, use_batch: bool) -> np.ndarray:
    if use_batch and hasattr(rule, "stop_batch"):
        return np.asarray(rule.stop_batch(context, view, state), dtype=bool).reshape(view.counts.shape[0])
    return np.array([bool(rule.stop(context, _row_view(view, row), _row_state(state, row)))
                     for row in range(view.counts.shape[0])], dtype=bool)


def _recommend(rule, context, view: RunView, state, local: np.ndarray, use_batch: bool, k: int,
               func: str) -> np.ndarray:
    """The recommendations of the rows ``local`` (the rule's ``recommend``, else the empirical top-k)."""
    if not hasattr(rule, "recommend"):
        return view.top[local]
    sub_view = _subset_view(view, local)
    sub_state = {name: values[local] for name, values in state.items()}
    if use_batch and hasattr(rule, "recommend_batch"):
        out = np.asarray(rule.recommend_batch(context, sub_view, sub_state), dtype=np.int64)
    else:
        out = np.array([np.asarray(rule.recommend(context, _row_view(sub_view, row), _row_state(sub_state, row)),
                                   dtype=np.int64).reshape(-1) for row in range(local.size)],
                       dtype=np.int64).reshape(local.size, -1)
    if out.shape != (local.size, k) or np.any((out < 0) | (out >= context.n_arms)):
        fail(func, "policy", f"a rule whose recommend returns k = {k} arms in 0..{context.n_arms - 1}", out)
    return out


UNIFORM_STEPS = 256
"""Steps of policy uniforms drawn per refill of a row in the compiled loop (changes speed, never values)."""


def _threshold_table(threshold, checkpoints: np.ndarray, largest: int) -> np.ndarray:
    r""":math:`\beta(t, \delta_c)` for :math:`t = 0, \dots, T - 1` (row 0 NaN), :math:`T` a power of two above
    ``largest``: the threshold called on the float pull counts and the levels, elementwise, as the numpy loop calls
    it, so the compiled loop compares the same numbers."""
    size = max(1 << 12, 1 << int(largest).bit_length())
    pulls = np.arange(1, size, dtype=np.int64)[:, None].astype(float)
    values = np.broadcast_to(np.asarray(threshold(pulls, checkpoints[None, :]), dtype=float),
                             (size - 1, checkpoints.shape[0]))
    return np.concatenate([np.full((1, checkpoints.shape[0]), np.nan), values])


def _refill_uniforms(row: int, buffers, generators) -> None:
    """The row's unread policy uniforms to the front of its buffer, the next draws of its stream behind them."""
    from .rewards import _HALF_ULP

    uniforms, position = buffers.uniforms, buffers.uniform_position
    start = int(position[row])
    unread = uniforms.shape[1] - start
    uniforms[row, :unread] = uniforms[row, start:].copy()
    uniforms[row, unread:] = generators[row].random(uniforms.shape[1] - unread) + _HALF_ULP
    position[row] = 0


def _python_step(rule, context, step_kernel, loop_config, loop_rows, buffers, row: int, state, statistic,
                 n_arms: int, k: int, func: str) -> None:
    """One step of row ``row`` by the rule's Python ``select`` (the kernel deferred it): its action, cut as the
    loop cuts, becomes the row's pending pulls."""
    from .loop import remaining_pulls

    counts, sums = loop_rows.counts[row:row + 1], loop_rows.sums[row:row + 1]
    means = empirical_means(counts, sums)
    stat = statistic(context.family, context.dispersion, counts, sums, means, k)
    view = RunView(loop_rows.t[row], counts[0], sums[0], means[0], stat.value[0], stat.top[0], stat.bottom[0],
                   stat.pair_top[0], stat.pair_bottom[0])
    position = int(buffers.uniform_position[row])
    uniforms = buffers.uniforms[row, position:position + loop_config.per_step]
    actions = _select_scalar(rule, context, RunView(*(np.asarray(value)[None] for value in view)),
                             {name: values[row:row + 1] for name, values in state.items()}, uniforms[None, :],
                             n_arms, func)
    each = _as_each(actions, n_arms)[0]
    remaining = remaining_pulls(row, loop_config, loop_rows)
    how = "water-fill" if loop_config.water_fill else "arm-order"
    loop_rows.pending[row] = cut_blocks(each[None, :], counts, np.array([remaining]), how)[0]
    loop_rows.pending_total[row] = int(loop_rows.pending[row].sum())
    buffers.uniform_position[row] = position + loop_config.per_step
    loop_rows.steps[row] += 1


def _run_compiled(step_kernel, rule, context, records: RunRecords, *, mode: str, own_stopping: bool,
                  checkpoints: np.ndarray, threshold, max_samples: int, counts, sums, t, rewards, uniform_streams,
                  state, statistic, needs_glr: bool, needs_split: bool, func: str) -> None:
    """Run every row in the compiled loop of the rule's step kernel, filling ``records``."""
    from . import loop as _loop
    from .stopping import statistic_code

    n_rows, n_arms = counts.shape
    k = records.recommendations.shape[2]
    code = statistic_code(context.family)
    if code is None:  # a family without a compiled pair kernel, in a run that never reads the statistic
        code = _loop.GAUSSIAN_STATISTIC
    loop_mode = _loop.MODE_BUDGET if mode == "budget" else (_loop.MODE_RULE if own_stopping else _loop.MODE_GLR)
    per_step = int(rule.uniforms_per_step(context))
    loop_config = _loop.LoopConfig(k, loop_mode, bool(needs_glr), bool(needs_split), int(code),
                                   np.ascontiguousarray(np.broadcast_to(context.dispersion, (n_arms,)), dtype=float),
                                   np.asarray(checkpoints, dtype=float), int(max_samples), per_step,
                                   rule_traits(rule).block_cut == "water-fill")
    n_check = checkpoints.shape[0]
    loop_rows = _loop.LoopRows(counts, sums, t, np.zeros(n_rows, dtype=np.int64), np.zeros((n_rows, n_check), bool),
                               records.times, records.recommendations, records.stopped,
                               np.zeros(n_rows, dtype=np.int64), np.zeros(n_rows, dtype=np.int64),
                               np.zeros((n_rows, n_arms), dtype=np.int64), np.zeros(n_rows, dtype=np.int64),
                               np.zeros((n_rows, n_arms)))
    thresholds = (_threshold_table(threshold, checkpoints, int(t.max(initial=1)) + 1) if loop_mode == _loop.MODE_GLR
                  else np.zeros((1, n_check)))
    buffers = _loop.LoopBuffers(rewards.buffer, rewards.position, np.empty((n_rows, max(1, per_step) * UNIFORM_STEPS)),
                                np.full(n_rows, max(1, per_step) * UNIFORM_STEPS, dtype=np.int64), thresholds)
    arrays = dict(state)
    if step_kernel.work_state is not None:
        for name, values in step_kernel.work_state(n_rows, n_arms).items():  # what init_state lacks
            arrays.setdefault(name, values)
    kernel_state = () if step_kernel.state is None else step_kernel.state(
        **{name: arrays[name] for name in step_kernel.state._fields})
    params = step_kernel.params
    loop = _loop.build_loop(step_kernel.select, step_kernel.stop or _loop.never_stop,
                            step_kernel.recommend or _loop.empirical_top)
    generators = uniform_streams.generators
    pending = np.arange(n_rows, dtype=np.int64)
    while pending.size:
        loop(pending, loop_config, loop_rows, buffers, kernel_state, params)
        status = loop_rows.status[pending]
        for row in pending[status == _loop.NEED_REWARD].tolist():
            rewards._refill(row, int(loop_rows.need[row]))
        for row in pending[status == _loop.NEED_UNIFORMS].tolist():
            _refill_uniforms(row, buffers, generators)
        if (status == _loop.NEED_TABLE).any():
            largest = int(loop_rows.need[pending[status == _loop.NEED_TABLE]].max()) + 1
            buffers = buffers._replace(thresholds=_threshold_table(threshold, checkpoints, largest))
        if (status == _loop.NEED_GROW).any():
            params = step_kernel.grow(params, int(loop_rows.need[pending[status == _loop.NEED_GROW]].max()))
        for row in pending[status == _loop.NEED_PYTHON].tolist():
            _python_step(rule, context, step_kernel, loop_config, loop_rows, buffers, row, state, statistic, n_arms, k,
                         func)
        pending = pending[(status != _loop.STOPPED) & (status != _loop.CAPPED)]
    records.pulls[:] = counts
    records.steps = int(loop_rows.steps.max(initial=0))
    records.replication_steps = int(loop_rows.steps.sum())


_STEP_METHODS = ("select", "stop", "recommend", "init_state", "uniforms_per_step")
_WARNED: set[type] = set()


def compiled_step_applies(rule) -> bool:
    """Whether the rule's ``compiled_step`` is its step: the class that defines ``compiled_step`` also defines (or
    inherits) every method of the step. A subclass that overrides ``select``, ``stop``, ``recommend``,
    ``init_state`` or ``uniforms_per_step`` without a ``compiled_step`` of its own runs its Python step, with one
    :class:`~allocopt.exceptions.PerformanceWarning` per class (never silently)."""
    cls = type(rule)
    owner = next((klass for klass in cls.__mro__ if "compiled_step" in vars(klass)), None)
    if owner is None or getattr(rule, "compiled_step", None) is None:
        return False
    overridden = [name for name in _STEP_METHODS
                  if (definer := next((klass for klass in cls.__mro__ if name in vars(klass)), owner)) is not owner
                  and issubclass(definer, owner)]
    if overridden:
        if cls not in _WARNED:
            _WARNED.add(cls)
            import warnings

            from ...exceptions import PerformanceWarning

            warnings.warn(f"{cls.__name__} overrides {', '.join(overridden)} of {owner.__name__} without a "
                          f"compiled_step of its own: its steps run in Python (define compiled_step, or set it to "
                          f"None to silence this)", PerformanceWarning, stacklevel=4)
        return False
    return True


def run_replications(problem: TopKProblem, rule, entropy: int, replications, *, checkpoints: np.ndarray,
                     mode: str = "confidence", threshold=None, max_samples: int, context: RuleContext,
                     batched: bool = True, func: str = "identify", statistic=None) -> RunRecords:
    """Run ``rule`` on the replications ``replications`` (global indices) and record every checkpoint.

    Parameters
    ----------
    problem : TopKProblem
        True means, k and family (the rule sees only ``context``).
    checkpoints : ndarray
        Confidence levels (``mode="confidence"``) or increasing budgets (``mode="budget"``).
    threshold : callable
        ``beta(t, checkpoints)`` (fixed confidence with a stopping statistic): a checkpoint is reached when
        the statistic exceeds it.
    max_samples : int
        Sample cap (fixed confidence); the last budget in fixed budget.
    batched : bool
        Use the rule's ``select_batch`` (and ``stop_batch``, ``recommend_batch``) when it has one.
    statistic : callable, optional
        ``statistic(family, dispersion, counts, sums, means, k)`` returning a
        :class:`~allocopt.algorithms.engine.stopping.GLRStatistic` (value, empirical top-k, pair) that replaces
        the Chernoff statistic, e.g. a posterior probability compared against levels. Default: the Chernoff
        statistic when the run stops on it or the rule may read it (``uses_glr``, True unless the rule says
        otherwise), else only the empirical top-k, and not even that for a rule that never reads it
        (``uses_empirical_top = False``): then it is computed at the steps that record a recommendation.
    """
    replications = np.asarray(replications, dtype=np.int64)
    n_rows, n_arms, k = replications.shape[0], problem.n_arms, problem.k
    records = RunRecords(times=np.zeros((n_rows, checkpoints.shape[0]), dtype=np.int64),
                         recommendations=np.zeros((n_rows, checkpoints.shape[0], k), dtype=np.int64),
                         stopped=np.zeros((n_rows, checkpoints.shape[0]), dtype=bool),
                         pulls=np.zeros((n_rows, n_arms), dtype=np.int64))
    rewards = RewardStreams(problem.family, problem.theta, problem.dispersion, entropy, replications)
    uniform_streams = PolicyStreams(entropy, replications, int(rule.uniforms_per_step(context)))
    state = _initial_state(rule, context, n_rows, func)
    traits = rule_traits(rule)
    own_stopping = mode == "confidence" and traits.stopping == "rule"
    caller_statistic = statistic
    if statistic is None:
        needs_glr = (mode == "confidence" and not own_stopping) or traits.uses_glr
        statistic = _chernoff if needs_glr else (empirical_split if traits.uses_empirical_top else _no_split)
    counts, sums, t = _initial_pulls(rewards, n_rows, n_arms, int(traits.initial_pulls))
    step_kernel = (rule.compiled_step(context) if batched and caller_statistic is None and compiled_enabled()
                   and compiled_step_applies(rule) else None)
    if step_kernel is not None and statistic is _chernoff and statistic_code(problem.family) is None:
        step_kernel = None  # the statistic of a family without a compiled pair kernel: the Python loop
    if step_kernel is not None:  # the rule's compiled step in the engine's one compiled loop
        _run_compiled(step_kernel, rule, context, records, mode=mode, own_stopping=own_stopping,
                      checkpoints=checkpoints, threshold=threshold, max_samples=max_samples, counts=counts, sums=sums,
                      t=t, rewards=rewards, uniform_streams=uniform_streams, state=state, statistic=statistic,
                      needs_glr=statistic is _chernoff, needs_split=statistic is not _no_split, func=func)
        if hasattr(rule, "diagnostics"):
            records.diagnostics = {name: np.asarray(values) for name, values in rule.diagnostics(state).items()}
        return records
    run = _PythonRun(rule, context, problem, records, mode, own_stopping, checkpoints, threshold, max_samples,
                     batched and hasattr(rule, "select_batch"), statistic, traits.block_cut, func)
    run.loop(_LiveRows(np.arange(n_rows), counts, sums, t, np.zeros((n_rows, checkpoints.shape[0]), dtype=bool),
                       state), rewards, uniform_streams)
    return records


def _initial_state(rule, context: RuleContext, n_rows: int, func: str) -> dict[str, np.ndarray]:
    """The rule's ``init_state``, checked: arrays with a leading replication axis."""
    state = dict(rule.init_state(context, n_rows))
    for name, values in state.items():
        if not isinstance(values, np.ndarray) or values.ndim < 2 or values.shape[0] != n_rows:
            fail(func, "policy", f"a rule whose init_state returns arrays of shape ({n_rows}, ...) with at least two "
                 f"dimensions (state {name!r})", values)
    return state


def _initial_pulls(rewards, n_rows: int, n_arms: int, initial: int):
    """Every arm pulled ``initial`` times, in arm order: the counts, sums and pulls so far."""
    counts = np.zeros((n_rows, n_arms), dtype=np.int64)
    sums = np.zeros((n_rows, n_arms))
    rows = np.arange(n_rows)
    for arm in range(n_arms):
        arm_column = np.full(n_rows, arm)
        for _ in range(initial):
            sums[:, arm] += rewards.next(rows, arm_column)
            counts[:, arm] += 1
    return counts, sums, np.full(n_rows, initial * n_arms, dtype=np.int64)


@dataclass
class _LiveRows:
    """The replications still running in the Python loop (local row i is replication ``rows[i]`` of the batch)."""

    rows: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    t: np.ndarray
    done: np.ndarray
    state: dict

    def keep(self, keep: np.ndarray) -> None:
        self.rows, self.counts, self.sums = self.rows[keep], self.counts[keep], self.sums[keep]
        self.t, self.done = self.t[keep], self.done[keep]
        self.state = {name: values[keep] for name, values in self.state.items()}


@dataclass
class _PythonRun:
    """The engine's vectorised loop (module docstring, steps 1-4) for a run without a compiled step."""

    rule: Any
    context: RuleContext
    problem: TopKProblem
    records: RunRecords
    mode: str
    own_stopping: bool
    checkpoints: np.ndarray
    threshold: Any
    max_samples: int
    use_batch: bool
    statistic: Callable
    block_cut: str
    func: str
    diagnostics: dict = field(default_factory=dict)

    def loop(self, live: _LiveRows, rewards, uniform_streams) -> None:
        steps = replication_steps = 0
        while live.rows.size:
            view = self._view(live)
            view = self._record(live, view)
            if not live.rows.size:
                break
            self._pull(live, view, uniform_streams.next(live.rows), rewards)
            steps += 1
            replication_steps += live.rows.size
        self.records.diagnostics = self.diagnostics
        self.records.steps = steps
        self.records.replication_steps = replication_steps

    def _view(self, live: _LiveRows) -> RunView:
        """Step 1: the means and the statistic of every live replication."""
        problem = self.problem
        means = empirical_means(live.counts, live.sums)
        stat = self.statistic(problem.family, problem.dispersion, live.counts, live.sums, means, problem.k)
        return RunView(live.t, live.counts, live.sums, means, stat.value, stat.top, stat.bottom, stat.pair_top,
                       stat.pair_bottom)

    def _reached(self, live: _LiveRows, view: RunView):
        """The checkpoints reached for the first time at this step, and the replications capped."""
        t, done = live.t, live.done
        if self.own_stopping:
            newly = _stop_mask(self.rule, self.context, view, live.state, self.use_batch)[:, None] & ~done
            return newly, t >= self.max_samples
        if self.mode == "confidence":
            beta = self.threshold(t[:, None].astype(float), self.checkpoints[None, :])
            return (view.glr[:, None] > beta) & ~done, t >= self.max_samples
        return (t[:, None] >= self.checkpoints[None, :]) & ~done, np.zeros(live.rows.size, dtype=bool)

    def _record(self, live: _LiveRows, view: RunView) -> RunView:
        """Step 2-3: record the checkpoints reached, drop the replications that are done."""
        k, records = self.problem.k, self.records
        newly, capped = self._reached(live, view)
        finished = (live.done | newly).all(axis=1) | capped
        recording = newly.any(axis=1) | finished
        rows, t = live.rows, live.t
        if recording.any():
            if view.top.shape[-1] != k:  # a rule that never reads the empirical top-k: computed for the records
                top, bottom = top_k_order(view.means, k)
                view = view._replace(top=top, bottom=bottom)
            local_all = np.flatnonzero(recording)
            recommended = np.zeros((rows.size, k), dtype=np.int64)
            recommended[local_all] = _recommend(self.rule, self.context, view, live.state, local_all, self.use_batch,
                                                k, self.func)
            if newly.any():
                local, check = np.nonzero(newly)
                records.times[rows[local], check] = t[local]
                records.recommendations[rows[local], check] = recommended[local]
                records.stopped[rows[local], check] = True
                live.done |= newly
        if finished.any():
            local = np.flatnonzero(finished)
            open_rows, open_checks = np.nonzero(~live.done[local])
            records.times[rows[local[open_rows]], open_checks] = t[local[open_rows]]
            records.recommendations[rows[local[open_rows]], open_checks] = recommended[local[open_rows]]
            records.pulls[rows[local]] = live.counts[local]
            self._collect_diagnostics(live, local)
            keep = ~finished
            live.keep(keep)
            view = _subset_view(view, np.flatnonzero(keep))
        return view

    def _collect_diagnostics(self, live: _LiveRows, local: np.ndarray) -> None:
        if hasattr(self.rule, "diagnostics"):
            n_rows = self.records.pulls.shape[0]
            for name, values in self.rule.diagnostics({name: v[local] for name, v in live.state.items()}).items():
                target = self.diagnostics.setdefault(name, np.zeros(n_rows, dtype=np.asarray(values).dtype))
                target[live.rows[local]] = values

    def _pull(self, live: _LiveRows, view: RunView, uniforms: np.ndarray, rewards) -> None:
        """Step 4: the rule's actions, cut at the cap or the next budget, and their rewards."""
        n_arms, rows = self.problem.n_arms, live.rows
        if self.use_batch:
            actions = _normalise_batch(self.rule.select_batch(self.context, view, live.state, uniforms), rows.size,
                                       n_arms, self.func)
        else:
            actions = _select_scalar(self.rule, self.context, view, live.state, uniforms, n_arms, self.func)
        if np.any((actions.arms < 0) | (actions.arms >= n_arms)):
            fail(self.func, "policy", f"a rule that returns arms in 0..{n_arms - 1}", actions.arms)
        if actions.each is None and np.all(actions.blocks == 1):
            active = np.arange(rows.size)
            live.sums[active, actions.arms] += rewards.next(rows, actions.arms)
            live.counts[active, actions.arms] += 1
            live.t += 1
            return
        limit = (np.full(rows.size, self.max_samples) if self.mode == "confidence"
                 else np.where(live.done, np.iinfo(np.int64).max, self.checkpoints[None, :]).min(axis=1))
        remaining = np.maximum(limit - live.t, 1)
        each = cut_blocks(_as_each(actions, n_arms), live.counts, remaining, self.block_cut)
        # single pulls (LUCB's two arms, a round's last pulls) read one reward per (run, arm) in one call;
        # a block of c >= 2 adds its sequential sum (a single reward is its own sum, so both are the same)
        single_rows, single_arms = np.nonzero(each == 1)
        if single_rows.size:
            live.sums[single_rows, single_arms] += rewards.next(rows[single_rows], single_arms)
        for block_arm in np.flatnonzero((each > 1).any(axis=0)).tolist():
            local = np.flatnonzero(each[:, block_arm] > 1)
            live.sums[local, block_arm] += rewards.next_sums(rows[local], block_arm, each[local, block_arm])
        live.counts += each
        live.t += each.sum(axis=1)
