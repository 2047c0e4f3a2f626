r"""Conformance checks for sampling rules, built-in or a user's: :func:`check_rule`.

The checks are those the package's own test suite runs on every registered rule:

* **compiled equals specification.** A rule with a compiled step (``compiled_step``) runs its replications in the
  engine's compiled loop; the same runs with the compiled kernels switched off run the rule's Python ``select``.
  On Gaussian problems (``exact=True``, the default) both must give the same stopping times, recommendations and
  final counts, bit for bit: where only IEEE arithmetic enters (and scipy.special's functions, which both paths
  call) nothing else can differ. Where ``log``, ``exp`` or their relatives enter (the other families' pair costs,
  posteriors and bounds; ``exact=False`` for a Gaussian path that calls them), numpy's results may differ from the
  C library's, which compiled code calls, in the last bit (numpy's AVX-512 code does), and a whole run may part at a
  near tie. There the check is stepwise: along the specification's own runs, at every :data:`STEP_STRIDE`-th step
  (:data:`STEP_STATES` states at most), the compiled step is called on the same view, a copy of the same state and
  the same uniforms, and must pull the same arms wherever the state is *decisive*: the specification pulls the
  same arms with every arm's sum moved by the relative :data:`STEP_TOLERANCE` up and down. Moving the sums by
  :math:`10^{-12}` (about 4500 ulps) moves the deciding values by far more than the few ulps by which numpy's and
  the C library's transcendental functions differ, so a decision that survives it is not decided by their last
  bits; the check asserts that most states (:data:`DECISIVE_SHARE`) are decisive.
* **batched equals scalar.** ``batched=True`` (``select_batch`` or the compiled loop) and ``batched=False`` (the
  rule's ``select``, one replication at a time) give the same outcomes: on the compiled loop where the check is
  exact, with the compiled kernels off (``select_batch`` against ``select``, both numpy) where it is stepwise.
* **invariance under chunking and workers.** Chunk sizes 1 and the whole batch, one worker and two threads, give
  the same outcomes (replication i reads the same rewards and policy uniforms whatever the chunking).
* **declared traits honoured.** The runners refuse the families the rule does not declare and a k above its
  ``max_k`` with an allocopt error naming the argument, before any work.

Each check raises :class:`AssertionError` with the first difference it finds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from .._numba import compiled_kernels
from ..exceptions import AllocoptError
from ..topk.problem import TopKProblem

__all__ = ["check_rule", "run_rule", "RULE_PROBLEMS", "compare_step", "STEP_TOLERANCE", "STEP_STRIDE", "STEP_STATES",
           "DECISIVE_SHARE"]

RULE_PROBLEMS: dict[str, TopKProblem] = {
    # ties among the bottom arms, per-arm variances
    "gaussian": TopKProblem([1.0, 0.9, 0.5, 0.5, 0.0], 2, variance=[0.25, 1.0, 0.5, 0.3, 2.0]),
    # best-arm identification on close means
    "gaussian k = 1": TopKProblem([1.0, 0.8, 0.7, 0.2], 1, variance=0.5),
    # Bernoulli arms, k = K - 1, empirical means that tie often
    "bernoulli k = K - 1": TopKProblem([0.8, 0.7, 0.6, 0.3], 3, family="bernoulli"),
    "poisson": TopKProblem([2.0, 1.5, 1.0, 0.8], 1, family="poisson"),
}
"""The problems :func:`check_rule` runs a rule on by default (those its traits allow)."""

_RUNS, _SEED, _MAX_SAMPLES = 6, 20261128, 4000

STEP_TOLERANCE = 1e-12
"""Relative move of the sums that a decision of the specification must survive for the stepwise check to compare it
(module docstring)."""
STEP_STRIDE, STEP_STATES = 7, 300
"""The stepwise check compares every ``STEP_STRIDE``-th step of the specification's runs, ``STEP_STATES`` at most."""
DECISIVE_SHARE = 0.5
"""Share of the compared states that must be decisive (a check that skips most states compares little)."""
_BUDGETS = (30, 120, 400)


def _runner(rule, problem: TopKProblem, **first: Any) -> tuple[Callable[..., Any], Any] | None:
    """The runner that accepts the rule on this problem (fixed confidence, fixed budget or PAC) and its result with
    one worker (and the options ``first``), or None."""
    from ..algorithms import identify, identify_fixed_budget, pac_identify

    attempts = (
        lambda **options: identify(problem, rule, delta=(0.1, 0.01), n_runs=_RUNS, rng=_SEED, max_samples=_MAX_SAMPLES,
                                   **options),
        lambda **options: identify_fixed_budget(problem, rule, _BUDGETS, n_runs=_RUNS, rng=_SEED, **options),
        lambda **options: pac_identify(problem, rule, epsilon=0.1, delta=0.1, n_runs=_RUNS, rng=_SEED,
                                       max_samples=_MAX_SAMPLES, **options),
    )
    for attempt in attempts:
        try:
            result = attempt(n_jobs=1, **first)
        except AllocoptError as error:
            if any(name in str(error) for name in ("'policy'", "'epsilon'", "'budget'", "'problem'")):
                continue
            raise
        return attempt, result
    return None


def run_rule(rule, problem: TopKProblem) -> Any:
    """The result of ``rule`` (a registered name or a rule object) on ``problem`` with the runner that accepts it
    (the first run of :func:`check_rule`: a few replications, one worker), or None when no runner does.

    Examples
    --------
    >>> run_rule("uniform", RULE_PROBLEMS["gaussian k = 1"]).stopping_times.shape
    (6, 2)
    """
    from ..algorithms.engine.protocol import get_policy

    found = _runner(get_policy(rule, "run_rule"), problem)
    return None if found is None else found[1]


def _outcomes(result) -> dict[str, np.ndarray]:
    names = ("stopping_times", "recommendations", "pulls", "stopped", "samples")
    return {name: np.asarray(getattr(result, name)) for name in names if hasattr(result, name)}


def _same(first: dict, second: dict, what: str) -> None:
    for name, values in first.items():
        other = second[name]
        if values.shape != other.shape or not np.array_equal(values, other):
            rows: Any = np.flatnonzero(np.any((values != other).reshape(values.shape[0], -1), axis=1)) \
                if values.shape == other.shape else []
            raise AssertionError(f"{what}: {name} differ (replications {list(rows)[:5]})")


class _StepProbe:
    """The rule's ``select`` (the specification) with, at every :data:`STEP_STRIDE`-th call, the compiled step on the
    same view, a copy of the same state and the same uniforms: the stepwise check of the module docstring."""

    def __init__(self, rule, label: str):
        self.select, self.rule, self.label = rule.select, rule, label
        self.calls = self.compared = self.decisive = 0

    def __call__(self, context, view, state, uniforms):
        self.calls += 1
        if self.calls % STEP_STRIDE == 0 and self.compared < STEP_STATES:
            self._compare(context, view, state, uniforms)
        return self.select(context, view, state, uniforms)

    def _compare(self, context, view, state, uniforms) -> None:
        decisive = compare_step(self.rule, context, view, state, uniforms, self.label)[0]
        if decisive is not None:
            self.compared += 1
            self.decisive += int(decisive)


def _specification_step(rule, context, view, state, uniforms, factor: float) -> tuple[np.ndarray, dict]:
    """The specification's pulls per arm and its state after the step at ``view`` with the means (and sums) moved by
    ``factor``, within the family's range of means (``state``: one run's arrays, left unchanged)."""
    from ..algorithms.engine.run import _as_each, _select_scalar

    if factor != 1.0:
        means = np.clip(view.means * factor, context.family.lower, context.family.upper)
        view = view._replace(means=means, sums=means * view.counts)
    batch = view._replace(**{name: np.asarray(value)[None] for name, value in view._asdict().items()})
    copied = {name: np.array(values, copy=True)[None] for name, values in state.items()}
    with compiled_kernels(False):
        actions = _select_scalar(rule, context, batch, copied, np.asarray(uniforms)[None], context.n_arms,
                                 "check_rule")
    return _as_each(actions, context.n_arms)[0], {name: values[0] for name, values in copied.items()}


def compare_step(rule, context, view, state, uniforms, label: str = "") -> tuple[bool | None, dict, dict]:
    """The stepwise check (module docstring) at one state: the rule's compiled step against its ``select`` on
    ``view``, a copy of ``state`` (one run's arrays) and ``uniforms``.

    Returns whether the state is decisive (None where the compiled loop would hand the step to Python or the rule
    has no compiled step here) and the states after the step, the specification's and the compiled step's.
    Raises AssertionError where the state is decisive and the two pull different arms.

    Examples
    --------
    >>> from allocopt.algorithms import RuleContext, RunView, Uniform
    >>> from allocopt.families import get_family
    >>> context = RuleContext(3, 1, get_family("bernoulli"), np.ones(3))
    >>> counts, sums = np.array([4, 3, 3]), np.array([2.0, 1.0, 3.0])
    >>> view = RunView(10, counts, sums, sums / counts, np.nan, None, None, None, None)
    >>> compare_step(Uniform(), context, view, {}, np.array([0.5]))[0]
    True
    """
    from ..algorithms.engine.protocol import DEFER, EACH, GROW, NO_UNIFORMS
    from ..algorithms.engine.run import compiled_step_applies
    from .kernels import compiled_select

    with compiled_kernels(True):
        if not compiled_step_applies(rule) or rule.compiled_step(context) is None:
            return None, {}, {}  # no compiled step here: the specification is the only path
        kernel_state = {name: np.array(values, copy=True)[None] for name, values in state.items()}
        arm, times, each = compiled_select(rule, context, view, kernel_state, uniforms)
    if arm in (DEFER, GROW, NO_UNIFORMS):  # the compiled loop hands this step to Python: nothing to compare
        return None, {}, {}
    if arm != EACH:
        each[:] = 0
        each[arm] = times
    specification, after = _specification_step(rule, context, view, state, uniforms, 1.0)
    compiled_after = {name: values[0] for name, values in kernel_state.items()}
    moved = (_specification_step(rule, context, view, state, uniforms, 1.0 + sign * STEP_TOLERANCE)[0]
             for sign in (1.0, -1.0))
    if not all(np.array_equal(specification, pulls) for pulls in moved):
        return False, after, compiled_after  # a near tie: the last bits of a transcendental function may decide it
    if not np.array_equal(each, specification):
        raise AssertionError(f"{label}: compiled and specification pull {each.tolist()} and {specification.tolist()} "
                             f"at the decisive state t = {view.t}, counts {np.asarray(view.counts).tolist()}, sums "
                             f"{np.asarray(view.sums).tolist()}")
    return True, after, compiled_after


def _stepwise(rule, problem: TopKProblem, label: str) -> None:
    """The stepwise comparison of the compiled step with ``select`` along the specification's runs."""
    import copy

    probe = copy.copy(rule)
    recorder = _StepProbe(rule, label)
    object.__setattr__(probe, "select", recorder)  # the instance's select: the engine calls rule.select(...)
    with compiled_kernels(False):
        _runner(probe, problem, batched=False)
    if recorder.compared and recorder.decisive < DECISIVE_SHARE * recorder.compared:
        raise AssertionError(f"{label}: only {recorder.decisive} of {recorder.compared} compared states decisive")


def _traits_refused(rule, problems) -> None:
    from ..algorithms import identify
    from ..algorithms.engine.protocol import rule_traits

    traits = rule_traits(rule)
    for problem in problems:
        refused = ((traits.families is not None and problem.family.name not in traits.families)
                   or (traits.max_k is not None and problem.k > traits.max_k))
        if not refused:
            continue
        try:
            identify(problem, rule, delta=0.1, n_runs=1, rng=0)
        except AllocoptError as error:
            if "policy" not in str(error) and "problem" not in str(error):
                raise AssertionError(f"the error refusing a {problem.family.name} problem with k = {problem.k} does "
                                     f"not name the rule or the problem: {error}") from error
            continue
        raise AssertionError(f"a {problem.family.name} problem with k = {problem.k} is run, though the rule's traits "
                             f"exclude it (families {traits.families}, max_k {traits.max_k})")


def check_rule(rule, problems: Sequence[TopKProblem] | None = None, *, exact: bool = True) -> None:
    """Run the conformance checks (module docstring) on ``rule``; AssertionError names the first difference.

    Parameters
    ----------
    rule : sampling rule
        An object following :mod:`allocopt.algorithms.engine.protocol` (a registered rule's instance, or a user's).
    problems : sequence of TopKProblem, optional
        The problems to run it on (default: :data:`RULE_PROBLEMS`, those the rule's traits allow). Keep them small:
        every check runs a few replications several times.
    exact : bool, default True
        Compare the compiled loop with the specification bit for bit on Gaussian problems (False: stepwise there
        too, for a rule whose Gaussian path calls ``log`` or ``exp``); the other families are compared stepwise.

    Examples
    --------
    >>> from allocopt.algorithms import Uniform
    >>> check_rule(Uniform(), [RULE_PROBLEMS["gaussian k = 1"]])
    """
    from ..algorithms.engine.protocol import get_policy

    rule = get_policy(rule, "check_rule")
    problems = list(RULE_PROBLEMS.values()) if problems is None else list(problems)
    _traits_refused(rule, problems)
    checked = 0
    for problem in problems:
        found = _runner(rule, problem)
        if found is None:
            continue
        run, first = found
        label = f"{getattr(rule, 'name', type(rule).__name__)} on {problem!r}"
        reference = _outcomes(first)
        if exact and problem.family.name == "gaussian":
            _same(reference, _outcomes(run(n_jobs=1, batched=False)), f"{label}: batched and scalar")
            with compiled_kernels(False):
                _same(reference, _outcomes(run(n_jobs=1)), f"{label}: compiled and specification")
        else:
            with compiled_kernels(False):
                _same(_outcomes(run(n_jobs=1)), _outcomes(run(n_jobs=1, batched=False)),
                      f"{label}: batched and scalar (specification)")
            _stepwise(rule, problem, label)
        _same(reference, _outcomes(run(n_jobs=1, chunk_size=1)), f"{label}: chunks of 1")
        from joblib import parallel_config

        with parallel_config(backend="threading"):
            _same(reference, _outcomes(run(n_jobs=2, chunk_size=2)), f"{label}: two threads")
        checked += 1
    if not checked:
        raise AssertionError("no problem could run the rule: give problems of a family and k it accepts")
