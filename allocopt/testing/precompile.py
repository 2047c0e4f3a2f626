r"""Fill numba's disk cache ahead of time: :func:`precompile` (``allocopt precompile`` on the command line).

The first call of each compiled path of a process compiles it (seconds; see docs/topk.md) or loads its machine code
from numba's disk cache (``NUMBA_CACHE_DIR`` if set, else ``__pycache__`` beside the package's modules, else the
user's cache folder). :func:`precompile` runs every compiled path once on small instances, so that the cache holds
them all: in a container image or on a cluster's shared install, run it once where the install is made, with the
same ``NUMBA_CACHE_DIR`` as the processes that will use it. numba keys its cache on the source files' time stamps
and on the CPU: the cache serves processes of the same install on the same kind of CPU, and recompiles otherwise.

The paths, for each family chosen:

* the top-k solvers: :func:`allocopt.solve_topk` for both kinds (:math:`C_{ij}` and :math:`B_{ij}`) on an instance
  with tied means (the tied kernels) and on one without;
* the engine's compiled loop of each rule chosen, with its step kernel and the statistics' kernels, on the small
  problems of :data:`allocopt.testing.rules.RULE_PROBLEMS` of that family that the rule accepts (its runner:
  fixed confidence, fixed budget or PAC).
"""

from __future__ import annotations

import functools
import time as _time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .._result import Result
from .._validation import fail

__all__ = ["precompile", "PrecompileResult", "PRECOMPILE_MEANS"]

PRECOMPILE_MEANS: dict[str, tuple[float, ...]] = {
    "ties": (0.8, 0.8, 0.5, 0.3, 0.3),
    "distinct": (0.9, 0.7, 0.5, 0.35, 0.3),
}
"""The means of the solvers' instances (in (0, 1): valid for every family), with k = 2."""

_GAMMA_SHAPE = 2.0


@dataclass(frozen=True, kw_only=True)
class PrecompileResult(Result):
    """What :func:`precompile` compiled. Statuses: ``"optimal"`` (every path ran), ``"not_available"`` (numba is
    not installed: nothing to compile).

    Attributes
    ----------
    steps : list of str
        The paths run, in order (``"solve gaussian confidence"``, ``"rule kkt-ts on gaussian"``, ...).
    functions : int
        The compiled functions (numba dispatchers) of the package made in this process.
    compiled, loaded : int
        The signatures of those called from Python compiled now, and loaded from the cache (compiled by an earlier
        process); a compiled function's callees are compiled into it, and count with it.
    cache_directory : str
        Where numba keeps the machine code (see :func:`allocopt._numba.cache_directory`).
    """

    SUCCESS_STATUSES = frozenset({"optimal"})

    steps: list[str]
    functions: int
    compiled: int
    loaded: int
    cache_directory: str


def _family(name: str) -> Any:
    from ..families import Gamma

    return Gamma(_GAMMA_SHAPE) if name == "gamma" else name


def _solve(family: str, kind: str) -> None:
    from ..topk import TopKProblem, solve_topk

    for means in PRECOMPILE_MEANS.values():
        solve_topk(TopKProblem(means, 2, family=_family(family)), kind=kind)


def _run_rule(name: str, problems: Sequence[Any]) -> None:
    from .rules import run_rule

    for problem in problems:
        run_rule(name, problem)


def _solver_steps(families: Sequence[str]) -> list[tuple[str, Callable[[], object]]]:
    steps: list[tuple[str, Callable[[], object]]] = []
    for name in families:
        for kind in ("confidence", "budget"):
            steps.append((f"solve {name} {kind}", functools.partial(_solve, name, kind)))
    return steps


def _rule_steps(families: Sequence[str], rules: Sequence[str]) -> list[tuple[str, Callable[[], object]]]:
    from ..algorithms.engine.protocol import get_policy, rule_traits
    from .rules import RULE_PROBLEMS

    steps: list[tuple[str, Callable[[], object]]] = []
    for name in rules:
        traits = rule_traits(get_policy(name, "precompile"))
        for family in families:
            problems = [problem for problem in RULE_PROBLEMS.values() if problem.family.name == family
                        and (traits.families is None or family in traits.families)
                        and (traits.max_k is None or problem.k <= traits.max_k)]
            if problems:
                steps.append((f"rule {name} on {family}", functools.partial(_run_rule, name, problems)))
    return steps


def _choice(values: Sequence[str] | None, known: Sequence[str], argument: str) -> list[str]:
    if values is None:
        return list(known)
    chosen = [values] if isinstance(values, str) else list(values)
    unknown = [value for value in chosen if value not in known]
    if unknown or not chosen:
        fail("precompile", argument, "names among " + ", ".join(repr(name) for name in known),
             unknown[0] if unknown else values)
    return chosen


def precompile(families: Sequence[str] | None = None, rules: Sequence[str] | None = None, *,
               progress: Callable[[str], object] | None = None) -> PrecompileResult:
    """Run every compiled path once on small instances, so that numba's disk cache holds them (module docstring).

    Parameters
    ----------
    families : sequence of str, optional
        Family names (:data:`allocopt.FAMILIES`); default all.
    rules : sequence of str, optional
        Registered rule names (:data:`allocopt.algorithms.POLICIES`); default all; ``[]`` compiles the solvers only.
    progress : callable, optional
        Called with a line before each path (``"solve gaussian confidence"``) and after it, with its seconds.

    Returns
    -------
    PrecompileResult
        The paths run, the functions compiled now and those loaded from the cache, the cache directory.

    Examples
    --------
    >>> result = precompile(["gaussian"], rules=["uniform"])
    >>> result.status, result.steps
    ('optimal', ['solve gaussian confidence', 'solve gaussian budget', 'rule uniform on gaussian'])
    """
    from .. import _numba
    from ..algorithms.engine.protocol import POLICIES
    from ..families import FAMILIES

    chosen_families = _choice(families, sorted(FAMILIES), "families")
    chosen_rules = _choice(rules, sorted(POLICIES), "rules") if rules is None or len(rules) else []
    start = _time.perf_counter()
    if not _numba.AVAILABLE:
        return PrecompileResult(status="not_available", message="numba is not installed: nothing to compile",
                                method="precompile", time=0.0, steps=[], functions=0, compiled=0, loaded=0,
                                cache_directory="")
    before = len(_numba.compiled_functions())
    steps = _solver_steps(chosen_families) + _rule_steps(chosen_families, chosen_rules)
    for label, step in steps:
        began = _time.perf_counter()
        if progress is not None:
            progress(f"{label} ...")
        step()
        if progress is not None:
            progress(f"{label}: {_time.perf_counter() - began:.1f} s")
    made = _numba.compiled_functions()[before:]
    compiled = sum(sum(dispatcher.stats.cache_misses.values()) for dispatcher in made)
    loaded = sum(sum(dispatcher.stats.cache_hits.values()) for dispatcher in made)
    directory = _numba.cache_directory()
    elapsed = _time.perf_counter() - start
    return PrecompileResult(
        status="optimal", method="precompile", time=elapsed, steps=[label for label, _ in steps], functions=len(made),
        compiled=compiled, loaded=loaded, cache_directory=directory,
        message=f"{len(steps)} paths, {len(made)} compiled functions: {compiled} signatures compiled, {loaded} loaded "
                f"from the cache, in {elapsed:.1f} s; cache: {directory}")
