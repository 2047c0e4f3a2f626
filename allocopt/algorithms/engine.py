r"""The sequential engine: runs a sampling rule on a batch of replications, vectorised over replications.

One step of the loop, for all active replications at once:

1. statistics (means) and the Chernoff statistic with the empirical top-k (:mod:`.stopping`);
2. fixed confidence: every confidence level whose threshold is crossed for the first time records its
   stopping time and recommendation; fixed budget: every budget reached records the empirical top-k;
3. replications that are done (every delta stopped, the sample cap or the last budget reached) drop out;
4. the rule chooses an action for every remaining replication - ``select_batch`` once, or ``select`` per
   replication when ``batched=False`` or the rule has no batched form - and the engine pulls it.

Before the rule's first step every arm is pulled ``rule.initial_pulls`` times (default once), in arm order.
Rewards and policy uniforms come from the common-random-number streams of :mod:`.rewards`, so the outcome
of replication ``i`` depends only on the entropy and ``i``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import fail
from ..topk.problem import TopKProblem
from .protocol import BatchPull, Pull, RuleContext, RunView
from .rewards import PolicyStreams, RewardStreams
from .statistics import empirical_means
from .stopping import glr_statistic

__all__ = ["RunRecords", "run_replications"]


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


def _normalise_action(action, n_rows: int, func: str) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(action, BatchPull):
        arms, counts = np.asarray(action.arms, dtype=np.int64), np.asarray(action.counts, dtype=np.int64)
    else:
        arms = np.asarray(action, dtype=np.int64)
        counts = np.ones(n_rows, dtype=np.int64)
    if arms.shape != (n_rows,) or counts.shape != (n_rows,) or np.any(counts < 1):
        fail(func, "policy", "a rule whose select_batch returns one arm (and one count >= 1) per active run",
             action)
    return arms, counts


def _select_scalar(rule, context, view: RunView, state, uniforms, func: str):
    n_rows = view.counts.shape[0]
    arms = np.empty(n_rows, dtype=np.int64)
    counts = np.ones(n_rows, dtype=np.int64)
    for row in range(n_rows):
        row_view = RunView(*(value[row] for value in view))
        action = rule.select(context, row_view, _row_state(state, row), uniforms[row])
        if isinstance(action, Pull):
            arms[row], counts[row] = int(action.arm), int(action.times)
        else:
            arms[row] = int(action)
    if np.any(counts < 1):
        fail(func, "policy", "a rule whose select returns an arm or a Pull with count >= 1", counts)
    return arms, counts


def run_replications(problem: TopKProblem, rule, entropy: int, replications, *, checkpoints: np.ndarray,
                     mode: str = "confidence", threshold=None, max_samples: int, context: RuleContext,
                     batched: bool = True, func: str = "identify") -> RunRecords:
    """Run ``rule`` on the replications ``replications`` (global indices) and record every checkpoint.

    Parameters
    ----------
    problem : TopKProblem
        True means, k and family (the rule sees only ``context``).
    checkpoints : ndarray
        Confidence levels (``mode="confidence"``) or increasing budgets (``mode="budget"``).
    threshold : callable
        ``beta(t, delta)`` (fixed confidence).
    max_samples : int
        Sample cap (fixed confidence); the last budget in fixed budget.
    batched : bool
        Use the rule's ``select_batch`` when it has one.
    """
    replications = np.asarray(replications, dtype=np.int64)
    n_rows, n_arms, k = replications.shape[0], problem.n_arms, problem.k
    n_check = checkpoints.shape[0]
    family, dispersion = problem.family, problem.dispersion
    records = RunRecords(times=np.zeros((n_rows, n_check), dtype=np.int64),
                         recommendations=np.zeros((n_rows, n_check, k), dtype=np.int64),
                         stopped=np.zeros((n_rows, n_check), dtype=bool),
                         pulls=np.zeros((n_rows, n_arms), dtype=np.int64))
    diagnostics: dict[str, np.ndarray] = {}
    rewards = RewardStreams(family, problem.theta, dispersion, entropy, replications)
    uniform_streams = PolicyStreams(entropy, replications, int(rule.uniforms_per_step(context)))
    state = dict(rule.init_state(context, n_rows))
    for name, values in state.items():
        if not isinstance(values, np.ndarray) or values.ndim < 2 or values.shape[0] != n_rows:
            fail(func, "policy", f"a rule whose init_state returns arrays of shape ({n_rows}, ...) with at least two "
                 f"dimensions (state {name!r})", values)
    use_batch = batched and hasattr(rule, "select_batch")
    counts = np.zeros((n_rows, n_arms), dtype=np.int64)
    sums = np.zeros((n_rows, n_arms))
    rows = np.arange(n_rows)
    initial = int(getattr(rule, "initial_pulls", 1))
    for arm in range(n_arms):
        arm_column = np.full(n_rows, arm)
        for _ in range(initial):
            sums[:, arm] += rewards.next(rows, arm_column)
            counts[:, arm] += 1
    t = np.full(n_rows, initial * n_arms, dtype=np.int64)
    done = np.zeros((n_rows, n_check), dtype=bool)
    steps = 0
    replication_steps = 0
    while rows.size:
        means = empirical_means(counts, sums)
        glr = glr_statistic(family, dispersion, counts, means, k)
        if mode == "confidence":
            beta = threshold(t[:, None].astype(float), checkpoints[None, :])
            newly = (glr.value[:, None] > beta) & ~done
            capped = t >= max_samples
        else:
            newly = (t[:, None] >= checkpoints[None, :]) & ~done
            capped = np.zeros(rows.size, dtype=bool)
        if newly.any():
            local, check = np.nonzero(newly)
            records.times[rows[local], check] = t[local]
            records.recommendations[rows[local], check] = glr.top[local]
            records.stopped[rows[local], check] = True
            done |= newly
        finished = done.all(axis=1) | capped
        if finished.any():
            local = np.flatnonzero(finished)
            open_rows, open_checks = np.nonzero(~done[local])
            records.times[rows[local[open_rows]], open_checks] = t[local[open_rows]]
            records.recommendations[rows[local[open_rows]], open_checks] = glr.top[local[open_rows]]
            records.pulls[rows[local]] = counts[local]
            if hasattr(rule, "diagnostics"):
                for name, values in rule.diagnostics({name: v[local] for name, v in state.items()}).items():
                    target = diagnostics.setdefault(name, np.zeros(n_rows, dtype=np.asarray(values).dtype))
                    target[rows[local]] = values
            keep = ~finished
            rows, counts, sums, t, done, means = rows[keep], counts[keep], sums[keep], t[keep], done[keep], means[keep]
            glr = type(glr)(*(value[keep] for value in glr))
            state = {name: values[keep] for name, values in state.items()}
            if not rows.size:
                break
        uniforms = uniform_streams.next(rows)
        view = RunView(t, counts, sums, means, glr.value, glr.top, glr.bottom, glr.pair_top, glr.pair_bottom)
        if use_batch:
            arms, blocks = _normalise_action(rule.select_batch(context, view, state, uniforms), rows.size, func)
        else:
            arms, blocks = _select_scalar(rule, context, view, state, uniforms, func)
        if np.any((arms < 0) | (arms >= n_arms)):
            fail(func, "policy", f"a rule that returns arms in 0..{n_arms - 1}", arms)
        single = blocks == 1
        if not single.all():
            limit = (np.full(rows.size, max_samples) if mode == "confidence"
                     else np.where(done, np.iinfo(np.int64).max, checkpoints[None, :]).min(axis=1))
            blocks = np.minimum(blocks, np.maximum(limit - t, 1))
            single = blocks == 1
        local = np.flatnonzero(single)
        if local.size == rows.size:
            sums[local, arms] += rewards.next(rows, arms)
            counts[local, arms] += 1
        else:
            if local.size:
                sums[local, arms[local]] += rewards.next(rows[local], arms[local])
                counts[local, arms[local]] += 1
            for row in np.flatnonzero(~single):
                sums[row, arms[row]] += rewards.next_block(int(rows[row]), int(arms[row]), int(blocks[row])).sum()
                counts[row, arms[row]] += blocks[row]
        t += blocks
        steps += 1
        replication_steps += rows.size
    records.diagnostics = diagnostics
    records.steps = steps
    records.replication_steps = replication_steps
    return records
