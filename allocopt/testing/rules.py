r"""Conformance checks for sampling rules, built-in or a user's: :func:`check_rule`.

The checks are those the package's own test suite runs on every registered rule:

* **compiled equals specification.** A rule with a compiled step (``compiled_step``) runs its replications in the
  engine's compiled loop; the same runs with the compiled kernels switched off run the rule's Python ``select``.
  Both must give the same stopping times, recommendations and final counts (bit for bit where only arithmetic
  enters; where ``log`` or ``exp`` enter, a decision could differ only at a near tie decided by the last bits of a
  transcendental function, which these small runs do not meet).
* **batched equals scalar.** ``batched=True`` (``select_batch`` or the compiled loop) and ``batched=False`` (the
  rule's ``select``, one replication at a time) give the same outcomes.
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

__all__ = ["check_rule", "run_rule", "RULE_PROBLEMS"]

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
_BUDGETS = (30, 120, 400)


def _runner(rule, problem: TopKProblem) -> tuple[Callable[..., Any], Any] | None:
    """The runner that accepts the rule on this problem (fixed confidence, fixed budget or PAC) and its result with
    one worker, or None."""
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
            result = attempt(n_jobs=1)
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


def check_rule(rule, problems: Sequence[TopKProblem] | None = None) -> None:
    """Run the conformance checks (module docstring) on ``rule``; AssertionError names the first difference.

    Parameters
    ----------
    rule : sampling rule
        An object following :mod:`allocopt.algorithms.engine.protocol` (a registered rule's instance, or a user's).
    problems : sequence of TopKProblem, optional
        The problems to run it on (default: :data:`RULE_PROBLEMS`, those the rule's traits allow). Keep them small:
        every check runs a few replications several times.

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
        _same(reference, _outcomes(run(n_jobs=1, batched=False)), f"{label}: batched and scalar")
        with compiled_kernels(False):
            _same(reference, _outcomes(run(n_jobs=1)), f"{label}: compiled and specification")
        _same(reference, _outcomes(run(n_jobs=1, chunk_size=1)), f"{label}: chunks of 1")
        from joblib import parallel_config

        with parallel_config(backend="threading"):
            _same(reference, _outcomes(run(n_jobs=2, chunk_size=2)), f"{label}: two threads")
        checked += 1
    if not checked:
        raise AssertionError("no problem could run the rule: give problems of a family and k it accepts")
