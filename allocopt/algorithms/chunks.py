r"""Replications ``[start, stop)`` of one identification experiment: the unit that every runner is made of.

An experiment cell is one problem, one sampling rule and one setting:

* ``"confidence"`` - fixed confidence at the levels :math:`\delta_1, \dots, \delta_C` with the Chernoff stopping
  rule (or the rule's own), as :func:`~allocopt.algorithms.identify` runs it;
* ``"budget"`` - fixed budget at the budgets :math:`T_1 < \dots < T_C`, as
  :func:`~allocopt.algorithms.identify_fixed_budget` runs it;
* ``"pac"`` - :math:`(\epsilon, \delta)`-PAC identification by the aggregate regret, as
  :func:`~allocopt.algorithms.pac_identify` runs it.

Each replication is made of one or more engine runs (:func:`~allocopt.algorithms.engine.run.run_replications`): one
run serves every checkpoint, except for a rule whose sampling reads the confidence level (``delta_dependent``, or
its own stopping rule), which runs once per :math:`\delta`, and a fixed-budget rule that is not anytime, which
runs once per budget. Replication ``i`` reads the common-random-number streams of
:mod:`allocopt.algorithms.engine.rewards` built from the root entropy and ``i``, so its records depend only on the
entropy and ``i``: not on ``start``, ``stop``, the chunking, the process or the machine (given the same versions
of allocopt and numpy). :func:`run_chunk` runs one range; the runners split ``0 .. n_runs - 1`` into ranges and
run them through :func:`allocopt.simulate.monte_carlo`, and :mod:`allocopt.experiments` stores one range per file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._result import Result, omit_from_dict
from .._rng import RandomLike, root_entropy
from .._validation import as_bool, as_float, as_float_vector, as_int, as_positive_float, fail
from ..exceptions import AllocoptError
from ..topk.problem import TopKProblem
from .engine.protocol import RuleContext, get_policy, policy_name, rule_traits
from .engine.run import run_replications
from .engine.stopping import get_threshold

__all__ = ["ChunkRecords", "run_chunk", "CHUNK_SETTINGS", "DEFAULT_MAX_SAMPLES"]

CHUNK_SETTINGS = ("confidence", "budget", "pac")
DEFAULT_MAX_SAMPLES = 10**6


def check_problem(problem, func: str) -> TopKProblem:
    """``problem`` if it is a :class:`~allocopt.TopKProblem`, else a clear error."""
    if not isinstance(problem, TopKProblem):
        fail(func, "problem", "a TopKProblem (true means, k and family)", problem)
    return problem


def check_rule(rule, problem: TopKProblem, func: str) -> None:
    """Refuse a rule that does not support the problem's k or family."""
    max_k = rule_traits(rule).max_k
    if max_k is not None and problem.k > max_k:
        fail(func, "policy", f"a rule that supports k = {problem.k} ({policy_name(rule)} needs k <= {max_k})", rule)
    families = rule_traits(rule).families
    if families is not None and problem.family.name not in families:
        fail(func, "policy", f"a rule defined for the {problem.family.name} family ({policy_name(rule)} is defined "
             f"for {', '.join(families)} arms only)", rule)


def check_max_samples(rule, problem: TopKProblem, max_samples: int | None, func: str) -> int:
    """The sample cap: at least the rule's initial pulls of every arm (default :data:`DEFAULT_MAX_SAMPLES`)."""
    initial = int(rule_traits(rule).initial_pulls) * problem.n_arms
    if max_samples is None:
        max_samples = max(DEFAULT_MAX_SAMPLES, initial)
    return as_int(max_samples, func, "max_samples", low=initial,
                  requirement=f"an integer >= {initial} (the initial pulls of the K = {problem.n_arms} arms)")


@dataclass(frozen=True)
class EngineRun:
    """One engine run of every replication: its context, checkpoints, threshold and sample cap."""

    context: RuleContext
    checkpoints: np.ndarray
    threshold: Any
    max_samples: int


@dataclass(frozen=True)
class ChunkPlan:
    """A validated experiment cell: what :func:`run_plan` runs for any range of replications.

    ``runs`` are the engine runs of one replication, in checkpoint order; ``statistic`` replaces the engine's
    stopping statistic (see :func:`~allocopt.algorithms.engine.run.run_replications`).
    """

    problem: TopKProblem
    rule: Any
    setting: str
    mode: str
    runs: tuple[EngineRun, ...]
    batched: bool
    func: str
    statistic: Any = None
    epsilon: float | None = None

    @property
    def checkpoints(self) -> np.ndarray:
        """Every checkpoint (deltas or budgets), in order."""
        return np.concatenate([run.checkpoints for run in self.runs])

    @property
    def checkpoint_run(self) -> np.ndarray:
        """For every checkpoint, the index of the engine run that records it."""
        return np.concatenate([np.full(run.checkpoints.shape[0], index, dtype=np.int64)
                               for index, run in enumerate(self.runs)])

    @property
    def diagnostic_names(self) -> tuple[str, ...]:
        return tuple(rule_traits(self.rule).diagnostic_names)


def _base_context(problem: TopKProblem, **settings: Any) -> RuleContext:
    return RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion), **settings)


def confidence_plan(problem: Any, policy: Any, *, delta: Any, threshold: Any = "heuristic",
                    max_samples: int | None = None, batched: Any = True, func: str = "identify") -> ChunkPlan:
    """The validated fixed-confidence cell of :func:`~allocopt.algorithms.identify`."""
    problem = check_problem(problem, func)
    rule = get_policy(policy, func)
    check_rule(rule, problem, func)
    deltas = as_float_vector(delta, func, "delta") if np.ndim(delta) else as_float_vector([delta], func, "delta")
    if np.any((deltas <= 0) | (deltas >= 1)):
        fail(func, "delta", "a confidence level or a sequence of confidence levels in the open interval (0, 1)",
             delta)
    max_samples = check_max_samples(rule, problem, max_samples, func)
    beta = get_threshold(threshold, func, problem.k, problem.n_arms, deltas)
    batched = as_bool(batched, func, "batched")
    runs: tuple[EngineRun, ...]
    if rule_traits(rule).delta_dependent or rule_traits(rule).stopping == "rule":
        runs = tuple(EngineRun(_base_context(problem, delta=float(level)), np.array([level]), beta, max_samples)
                     for level in deltas)
    else:
        runs = (EngineRun(_base_context(problem), deltas, beta, max_samples),)
    return ChunkPlan(problem, rule, "confidence", "confidence", runs, batched, func)


def check_budgets(budgets: Any, rule: Any, problem: TopKProblem, func: str) -> np.ndarray:
    """The budgets as increasing distinct integers, each at least the rule's initial pulls of every arm."""
    initial = int(rule_traits(rule).initial_pulls) * problem.n_arms
    requirement = f"an integer or a sequence of integers >= {initial} (the initial pulls of the K = {problem.n_arms} arms)"
    values = np.atleast_1d(np.asarray(budgets, dtype=object))
    try:
        checked = [as_int(value, func, "budgets", low=initial, requirement=requirement) for value in values]
    except AllocoptError:
        fail(func, "budgets", requirement, budgets)
    if not checked:
        fail(func, "budgets", requirement, budgets)
    return np.unique(np.asarray(checked, dtype=np.int64))


def budget_plan(problem: Any, policy: Any, *, budgets: Any, batched: Any = True, epsilon: Any = None,
                func: str = "identify_fixed_budget") -> ChunkPlan:
    """The validated fixed-budget cell of :func:`~allocopt.algorithms.identify_fixed_budget` (with ``epsilon``, a
    recommendation is judged by its aggregate regret instead of by the exact top-k)."""
    problem = check_problem(problem, func)
    rule = get_policy(policy, func)
    check_rule(rule, problem, func)
    budget_array = check_budgets(budgets, rule, problem, func)
    batched = as_bool(batched, func, "batched")
    if epsilon is not None:
        epsilon = as_positive_float(epsilon, func, "epsilon")
    runs: tuple[EngineRun, ...]
    if rule_traits(rule).anytime:
        runs = (EngineRun(_base_context(problem), budget_array, None, int(budget_array[-1])),)
    else:
        runs = tuple(EngineRun(_base_context(problem, budget=int(budget)), np.array([budget]), None, int(budget))
                     for budget in budget_array)
    return ChunkPlan(problem, rule, "budget", "budget", runs, batched, func, epsilon=epsilon)


def pac_plan(problem: Any, policy: Any, *, epsilon: Any, delta: Any, max_samples: int | None = None,
             batched: Any = True, func: str = "pac_identify") -> ChunkPlan:
    """The validated PAC cell of :func:`~allocopt.algorithms.pac_identify`."""
    problem = check_problem(problem, func)
    rule = get_policy(policy, func)
    check_rule(rule, problem, func)
    if rule_traits(rule).stopping != "rule":
        fail(func, "policy", "a PAC rule with its own stopping rule (stopping = 'rule'), such as 'adaptive-topk'",
             policy_name(rule))
    epsilon = as_positive_float(epsilon, func, "epsilon")
    delta = as_float(delta, func, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                     requirement="a confidence parameter in the open interval (0, 1)")
    max_samples = check_max_samples(rule, problem, max_samples, func)
    batched = as_bool(batched, func, "batched")
    runs = (EngineRun(_base_context(problem, delta=delta, epsilon=epsilon), np.array([delta]), None, max_samples),)
    return ChunkPlan(problem, rule, "pac", "confidence", runs, batched, func, epsilon=epsilon)


def probe_plan(plan: ChunkPlan) -> None:
    """Let the rule check every context of the plan before any replication runs: ``uniforms_per_step`` and
    ``init_state`` for one run (a fixed-budget rule refuses a budget too small for its rounds there)."""
    for run in plan.runs:
        plan.rule.uniforms_per_step(run.context)
        plan.rule.init_state(run.context, 1)


def correct_recommendations(recommendations: np.ndarray, problem: TopKProblem) -> np.ndarray:
    """Whether each recommended set (last axis) is the true top-k."""
    truth = np.sort(problem.top)
    return np.all(np.sort(recommendations, axis=-1) == truth, axis=-1)


@dataclass(frozen=True, kw_only=True)
class ChunkRecords(Result):
    r"""The records of replications ``start .. stop - 1`` of one cell (:func:`run_chunk`).

    Statuses: ``"completed"`` (every run stopped, or reached its budget) and ``"sample_cap_reached"`` (some run hit
    ``max_samples`` before stopping; its stopping time is the cap and ``stopped`` is False there).

    Attributes
    ----------
    setting : {"confidence", "budget", "pac"}
    start, stop : int
        The replications ``start .. stop - 1``, in order (row ``r`` is replication ``start + r``).
    checkpoints : ndarray, shape (C,)
        The confidence levels (``"confidence"``; ``"pac"``: the one delta) or the budgets (``"budget"``).
    epsilon : float or None
        The tolerance on the aggregate regret (PAC; fixed budget when given).
    stopping_times : ndarray of int, shape (n, C)
        Samples at the stop (the budget in the fixed-budget setting; the cap where a run did not stop).
    recommendations : ndarray of int, shape (n, C, k)
        The recommended arms, in increasing arm order.
    correct : ndarray of bool, shape (n, C)
        The recommendation is the true top-k (with ``epsilon``: its aggregate regret is at most epsilon).
    stopped : ndarray of bool, shape (n, C)
    aggregate_regret : ndarray, shape (n, C), or None
        With ``epsilon`` only: :math:`(\sum_{i \le k}\theta_{[i]} - \sum_{i \in T}\theta_i)/k`
        (:func:`allocopt.complexity.aggregate_regret`).
    run_pulls : ndarray of int, shape (n, R, K)
        The counts of every arm when each of the replication's R engine runs finished.
    checkpoint_run : ndarray of int, shape (C,)
        The engine run that recorded each checkpoint (R = 1 unless the rule runs once per delta or budget).
    diagnostics : dict of str to ndarray, shape (n, R)
        Per-run numbers reported by the rule, for every engine run.
    entropy, max_samples, replication_steps : int
        The root entropy, the sample cap (the last budget in the fixed-budget setting) and the engine's
        replication-steps summed over the range.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    setting: str
    start: int
    stop: int
    checkpoints: np.ndarray
    epsilon: float | None = None
    stopping_times: np.ndarray
    recommendations: np.ndarray
    correct: np.ndarray
    stopped: np.ndarray
    aggregate_regret: np.ndarray | None = None
    run_pulls: np.ndarray
    checkpoint_run: np.ndarray
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)
    entropy: int
    max_samples: int
    replication_steps: int
    problem: TopKProblem | None = omit_from_dict(default=None)

    @property
    def pulls(self) -> np.ndarray:
        """The counts of the run that recorded each checkpoint, shape (n, C, K)."""
        return self.run_pulls[:, self.checkpoint_run]


def _records_dtype(plan: ChunkPlan) -> np.dtype:
    """One replication's records in one structured row (what a monte_carlo chunk returns)."""
    n_check, n_runs, k, n_arms = plan.checkpoints.shape[0], len(plan.runs), plan.problem.k, plan.problem.n_arms
    fields = [("times", np.int64, (n_check,)), ("recommendations", np.int64, (n_check, k)),
              ("stopped", np.bool_, (n_check,)), ("pulls", np.int64, (n_runs, n_arms)), ("steps", np.int64)]
    fields += [(f"diagnostic_{name}", np.float64, (n_runs,)) for name in plan.diagnostic_names]
    return np.dtype(fields)


def run_plan(plan: ChunkPlan, entropy: int, replications: Any) -> np.ndarray:
    """Every engine run of ``plan`` on the replications ``replications`` (global indices), one structured row
    each; the replication-steps of the range are in the first row's ``steps`` (the others hold 0)."""
    replications = np.asarray(replications, dtype=np.int64)
    out = np.zeros(replications.shape[0], dtype=_records_dtype(plan))
    if not out.shape[0]:
        return out
    column = 0
    for index, run in enumerate(plan.runs):
        records = run_replications(plan.problem, plan.rule, entropy, replications, checkpoints=run.checkpoints,
                                   mode=plan.mode, threshold=run.threshold, max_samples=run.max_samples,
                                   context=run.context, batched=plan.batched, func=plan.func,
                                   statistic=plan.statistic)
        width = run.checkpoints.shape[0]
        out["times"][:, column:column + width] = records.times
        out["recommendations"][:, column:column + width] = records.recommendations
        out["stopped"][:, column:column + width] = records.stopped
        out["pulls"][:, index] = records.pulls
        if out.shape[0]:
            out["steps"][0] += records.replication_steps
        for name in plan.diagnostic_names:
            if name in records.diagnostics:
                out[f"diagnostic_{name}"][:, index] = records.diagnostics[name]
        column += width
    return out


def plan_chunk(generators, plan: ChunkPlan) -> np.ndarray:
    """A :func:`~allocopt.simulate.monte_carlo` chunk (``vectorized=True``): the replication indices and the root
    entropy come from the generators' seed sequences."""
    seeds = [generator.bit_generator.seed_seq for generator in generators]
    return run_plan(plan, int(seeds[0].entropy), [int(seed.spawn_key[0]) for seed in seeds])


def records_from_rows(plan: ChunkPlan, rows: np.ndarray, *, start: int, entropy: int,
                      started: float) -> ChunkRecords:
    """The :class:`ChunkRecords` of structured rows of :func:`run_plan` for replications ``start ..``."""
    problem = plan.problem
    recommendations = rows["recommendations"]
    regret = None
    if plan.epsilon is not None:
        from ..complexity.eps_top_k import aggregate_regret

        regret = np.asarray(aggregate_regret(problem.theta, recommendations), dtype=float).reshape(
            recommendations.shape[:2])
        correct = regret <= plan.epsilon
    else:
        correct = correct_recommendations(recommendations, problem)
    stopped = rows["stopped"]
    name = policy_name(plan.rule)
    n_rows = rows.shape[0]
    capped = int((~stopped).any(axis=1).sum())
    status = "completed" if not capped else "sample_cap_reached"
    message = (f"replications {start} to {start + n_rows - 1} of {name}" if n_rows else f"no replication of {name}")
    if capped:
        message += (f": {capped} reached max_samples = {plan.runs[-1].max_samples} before stopping at every "
                    "checkpoint")
    return ChunkRecords(
        status=status, message=message, method=name, time=time.perf_counter() - started, setting=plan.setting,
        start=start, stop=start + n_rows, checkpoints=plan.checkpoints, epsilon=plan.epsilon,
        stopping_times=rows["times"], recommendations=recommendations, correct=correct, stopped=stopped,
        aggregate_regret=regret, run_pulls=rows["pulls"], checkpoint_run=plan.checkpoint_run,
        diagnostics={name: rows[f"diagnostic_{name}"] for name in plan.diagnostic_names}, entropy=entropy,
        max_samples=int(plan.runs[-1].max_samples), replication_steps=int(rows["steps"].sum()), problem=problem)


def run_chunk(problem: TopKProblem, policy: Any, *, setting: str, start: int, stop: int, rng: RandomLike,
              delta: Any = None, budgets: Any = None, epsilon: Any = None, max_samples: int | None = None,
              threshold: Any = "heuristic", batched: bool = True) -> ChunkRecords:
    r"""Run replications ``start .. stop - 1`` of one (problem, rule, setting) cell and return their records.

    The records of replication ``i`` are those that :func:`~allocopt.algorithms.identify` (``setting =
    "confidence"``), :func:`~allocopt.algorithms.identify_fixed_budget` (``"budget"``) or
    :func:`~allocopt.algorithms.pac_identify` (``"pac"``) give for row ``i`` with the same ``rng`` and options,
    whatever the range: those runners are made of these ranges.

    Parameters
    ----------
    problem : TopKProblem
    policy : str or sampling rule
    setting : {"confidence", "budget", "pac"}
    start, stop : int
        The replications ``start .. stop - 1`` (``0 <= start <= stop``). An empty range runs nothing: it checks the
        cell (the problem, the rule, the setting and the rule's own checks of its context) and returns empty
        records.
    rng : int or SeedSequence
        The root of the replications' streams; a Generator or None would give records no other call can
        reproduce, so they are refused.
    delta : float or sequence of float
        ``"confidence"``: the confidence levels; ``"pac"``: the confidence parameter (one number).
    budgets : int or sequence of int
        ``"budget"``: the budgets (each at least the initial pulls of every arm).
    epsilon : float
        ``"pac"``: the tolerance on the aggregate regret; ``"budget"`` (optional): judge each recommendation by its
        aggregate regret (correct when at most ``epsilon``) instead of by the exact top-k.
    max_samples : int, optional
        Sample cap per run (``"confidence"``, ``"pac"``); default
        :data:`~allocopt.algorithms.chunks.DEFAULT_MAX_SAMPLES`.
    threshold : {"heuristic", "theoretical"} or callable
        ``"confidence"``: :math:`\beta(t, \delta)`.
    batched : bool, default True
        Use the rule's batched steps (the same records).

    Returns
    -------
    ChunkRecords

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.8, 0.2, 0.0], k=2, variance=0.25)
    >>> chunk = run_chunk(problem, "kkt-ts", setting="confidence", delta=(0.1, 0.01), start=20, stop=30, rng=0)
    >>> chunk.stopping_times.shape, chunk.pulls.shape, chunk.status
    ((10, 2), (10, 2, 4), 'completed')
    >>> whole = identify(problem, "kkt-ts", delta=(0.1, 0.01), n_runs=30, rng=0)
    >>> bool((whole.stopping_times[20:30] == chunk.stopping_times).all())
    True
    >>> run_chunk(problem, "sar", setting="budget", budgets=[4], start=0, stop=0, rng=0)
    Traceback (most recent call last):
    ...
    allocopt.exceptions.InvalidArgumentError: The 'budget' parameter of NSAR must be an integer >= K + 1 = 5 (so that every arm gets at least one pull in the first round). Got 4 instead.
    """
    func = "run_chunk"
    started = time.perf_counter()
    if setting not in CHUNK_SETTINGS:
        fail(func, "setting", "one of " + ", ".join(repr(name) for name in CHUNK_SETTINGS), setting)
    if rng is None or isinstance(rng, np.random.Generator):
        fail(func, "rng", "a nonnegative integer or a numpy SeedSequence (records of a range must be reproducible "
             "by any other range)", rng)
    entropy = root_entropy(rng, func)
    start = as_int(start, func, "start", low=0)
    stop = as_int(stop, func, "stop", low=start, requirement=f"an integer >= start = {start}")
    given = {"delta": delta, "budgets": budgets, "epsilon": epsilon}
    needed = {"confidence": ("delta",), "budget": ("budgets",), "pac": ("epsilon", "delta")}[setting]
    optional = ("epsilon",) if setting == "budget" else ()
    for name, value in given.items():
        if name not in optional and (value is None) == (name in needed):
            fail(func, name, f"{'given' if name in needed else 'left out'} with setting = {setting!r}", value)
    if setting == "confidence":
        plan = confidence_plan(problem, policy, delta=delta, threshold=threshold, max_samples=max_samples,
                               batched=batched, func=func)
    elif setting == "budget":
        if max_samples is not None:
            fail(func, "max_samples", "left out with setting = 'budget' (the last budget caps the runs)", max_samples)
        plan = budget_plan(problem, policy, budgets=budgets, batched=batched, epsilon=epsilon, func=func)
    else:
        plan = pac_plan(problem, policy, epsilon=epsilon, delta=delta, max_samples=max_samples, batched=batched,
                        func=func)
    probe_plan(plan)
    rows = run_plan(plan, entropy, np.arange(start, stop))
    return records_from_rows(plan, rows, start=start, entropy=entropy, started=started)
