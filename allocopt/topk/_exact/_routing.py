r"""The exact solver's entry and its one routing: the closed-form double star (Gaussian arms), the compiled double
star (the other families with a compiled pair kernel) or the active set (:mod:`allocopt.topk._exact`)."""

from __future__ import annotations

import dataclasses
import functools
import time

import numpy as np

from ..._validation import as_float, as_int
from ..certificate import ROUNDING_ALLOWANCE, scalar_certified_gap
from ..multipliers import PairMultipliers
from ..problem import TopKProblem
from ..result import BindingForest, TopKResult, _ResultTemplate
from .gaussian_star import _FEASIBILITY, MAX_NEWTON, gaussian_double_star_instance
from .gaussian_star import tied_star_instance_kernel as tied_gaussian_star_kernel
from .search import _NEGATIVE_MULTIPLIER, active_set
from .star import STAR_MAX_ITERATIONS, double_star_edges, star_instance_kernel, tied_star_instance_kernel

__all__ = ["solve", "OPTIONS", "FAST_PATH_PAIRS"]

OPTIONS = {"tol": 1e-9, "warm_start": None, "max_pivots": None, "barrier_pairs": 50_000}


# the closed-form double star evaluates the full cost matrix at once: above this many pairs the chunked scans
# of the active set are cheaper
FAST_PATH_PAIRS = 1 << 18


# the double star's forest record of each kind (immutable, so shared by every result that carries it)
_DOUBLE_STAR_FORESTS = {kind: BindingForest(kind=kind, double_star=True) for kind in ("confidence", "budget")}


def _templates(route: str) -> dict[tuple[str, bool], _ResultTemplate]:
    """The fields that every answer of a fast path shares (both return only certified answers), by kind and by
    whether tied arms were merged into groups."""
    return {(kind, grouped): _ResultTemplate(
        method="exact", kind=kind, iterations=0, forest=_DOUBLE_STAR_FORESTS[kind], status="optimal",
        message=(f"exact: double star{' of the tie groups' if grouped else ''} ({route}), 0 pivot(s); "
                 "forest of 1 tree(s)"))
        for kind in ("confidence", "budget") for grouped in (False, True)}


_CLOSED_FORM_TEMPLATES = _templates("closed form")
_COMPILED_STAR_TEMPLATES = _templates("compiled")


@functools.lru_cache(maxsize=64)
def _star_edges(k: int, n_arms: int) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = double_star_edges(k, n_arms)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def _warm_ratio(problem: TopKProblem, warm_start: TopKResult | None, closed_form: bool) -> float | None:
    r"""The previous allocation's :math:`\log(w_{j_1} / w_{i_k})`, :math:`w = \psi / \phi` (the same for the
    arms and for their tie groups: a group's weight is its members'), or ``None``; ``closed_form``: as the
    closed form's split :math:`y = \log(x_{i_k} / x_{j_1})`, :math:`x = \phi / \psi` (the same number, in the
    order of operations each path has always used)."""
    if warm_start is None:
        return None
    previous, dispersion = warm_start.psi, problem.dispersion
    i_k, j_1 = problem.top[-1], problem.bottom[0]
    if not (previous[i_k] > 0 and previous[j_1] > 0):
        return None
    if closed_form:
        return float(np.log(previous[j_1] / previous[i_k] * dispersion[i_k] / dispersion[j_1]))
    start = float(np.log(previous[j_1] / dispersion[j_1] * dispersion[i_k] / previous[i_k]))
    return start if np.isfinite(start) else None


def _tied_answer(problem: TopKProblem, tied_kernel, *arguments: object) -> tuple[tuple[float, ...], np.ndarray,
                                                                                   PairMultipliers | None]:
    """Call a tied double star's kernel (:func:`~allocopt.topk._exact.star.tied_star_instance_kernel`, or its
    Gaussian twin) with ``arguments`` and the output arrays; its scalars, the allocation and the member pairs'
    multipliers (``None`` when it did not accept)."""
    k, n_arms = problem.k, problem.n_arms
    psi = np.empty(n_arms)
    rows, cols, values = np.empty(problem.n_pairs, dtype=np.int64), np.empty(problem.n_pairs, dtype=np.int64), np.empty(
        problem.n_pairs)
    scalars = tied_kernel(*arguments, psi, rows, cols, values)
    if scalars[0] != 1.0:
        return scalars, psi, None
    n_pairs = int(scalars[-1])
    rows, cols, values = rows[:n_pairs], cols[:n_pairs], values[:n_pairs]
    for array in (rows, cols, values):
        array.setflags(write=False)
    return scalars, psi, PairMultipliers(rows, cols, values, (k, n_arms - k))


def _double_star_fast_path(problem: TopKProblem, kind: str, tol: float, started: float,
                           warm_start: TopKResult | None, tied: bool = False) -> TopKResult | None:
    """Gaussian arms: Theorem 3.4's double star in closed form (:mod:`allocopt.topk._exact.gaussian_star`), of
    the arms or (``tied``) of their tie groups, checked exactly, certified, and returned; ``None`` when the
    double star is not optimal or its certificate misses ``tol`` (the active set takes over).
    Costs and gradients are the same for both kinds (:math:`B_{ij} = C_{ij}` for Gaussian arms)."""
    dispersion = problem.dispersion
    k, n_arms = problem.k, problem.n_arms
    start = _warm_ratio(problem, warm_start, closed_form=True)
    extras: dict[str, object] = {"pivots": 0, "components": 1}
    if tied:
        tied_kernel = tied_gaussian_star_kernel()
        if tied_kernel is None:
            return None
        scalars, psi, multipliers = _tied_answer(
            problem, tied_kernel, problem.theta, problem.order, dispersion, k, 0.0 if start is None else start,
            start is not None, MAX_NEWTON, _FEASIBILITY, _NEGATIVE_MULTIPLIER, ROUNDING_ALLOWANCE)
        if multipliers is None:
            return None
        _, value, bound, gap, stationarity, complementarity, _ = scalars
    else:
        star = gaussian_double_star_instance(problem.theta, problem.order, dispersion, k, start)
        if not star.accepted:
            return None
        psi, value, bound = star.psi, star.value, star.bound
        stationarity, complementarity = star.stationarity, star.complementarity
        gap = scalar_certified_gap(bound, value, ROUNDING_ALLOWANCE, 1)  # certified_gap(bound, value) on two floats
        rows, cols = _star_edges(k, n_arms)
        mu = star.multipliers
        if not star.smallest_multiplier > 0:  # a multiplier exactly zero (Theorem 3.4's condition (14) with equality)
            positive = mu > 0
            rows, cols, mu = rows[positive], cols[positive], mu[positive]
        mu.setflags(write=False)
        multipliers = PairMultipliers(rows, cols, mu, (k, n_arms - k))
    if not (value > 0 and gap <= tol * value):  # (variances over many decades: the active set polishes it)
        return None
    return _CLOSED_FORM_TEMPLATES[kind, tied].build(
        psi, value=value, multipliers=multipliers, upper_bound=bound, gap=gap, stationarity=stationarity,
        complementarity=complementarity, time=time.perf_counter() - started, problem=problem, extras=extras)


def _compiled_star_fast_path(problem: TopKProblem, kind: str, tol: float, started: float,
                             warm_start: TopKResult | None, tied: bool = False) -> TopKResult | None:
    """Families with a compiled pair kernel (:meth:`~allocopt.families.ExponentialFamily.compiled_pair`):
    Theorem 3.4's double star of the arms (distinct means) or (``tied``) of their tie groups, solved by the
    compiled kernel of :mod:`allocopt.topk._exact.star`, its certificate evaluated there by a separate kernel
    (what :func:`~allocopt.topk.certificate.certify` computes, with the same evaluation-error allowance added
    here), and returned only when certified optimal; ``None`` otherwise (the active set takes over)."""
    code = problem.family._compiled_pair_code(kind)
    if code is None:
        return None
    k, n_arms = problem.k, problem.n_arms
    start = _warm_ratio(problem, warm_start, closed_form=False)
    start = 0.0 if start is None else start
    if tied:
        scalars, psi, multipliers = _tied_answer(
            problem, tied_star_instance_kernel(), code, problem.theta, problem.order, problem.dispersion, k, start,
            STAR_MAX_ITERATIONS, _NEGATIVE_MULTIPLIER, problem.evaluation_error(kind))
        if multipliers is None:
            return None
    else:
        psi, mu, keep = np.empty(n_arms), np.empty(n_arms - 1), np.empty(n_arms - 1, dtype=bool)
        scalars = star_instance_kernel()(code, problem.theta, problem.top, problem.bottom, problem.dispersion, start,
                                         STAR_MAX_ITERATIONS, _NEGATIVE_MULTIPLIER, problem.evaluation_error(kind), psi,
                                         mu, keep)
        if scalars[0] != 1.0:
            return None
        n_kept = int(scalars[-1])
        rows, cols = _star_edges(k, n_arms)
        if n_kept < n_arms - 1:  # a multiplier zero to rounding (Theorem 3.4's condition (14) with equality)
            rows, cols, mu = rows[keep], cols[keep], mu[:n_kept]  # the kept multipliers come first
        mu.setflags(write=False)
        multipliers = PairMultipliers(rows, cols, mu, (k, n_arms - k))
    _, value, bound, gap, stationarity, complementarity, balance_residual, _ = scalars
    if not (value > 0 and gap <= tol * value):
        return None
    return _COMPILED_STAR_TEMPLATES[kind, tied].build(
        psi, value=value, multipliers=multipliers, upper_bound=bound, gap=gap,
        stationarity=stationarity, complementarity=complementarity, time=time.perf_counter() - started,
        problem=problem, extras={"pivots": 0, "components": 1, "balance_residual": balance_residual})


def solve(problem: TopKProblem, kind: str, tol: float = 1e-9, warm_start: TopKResult | None = None,
          max_pivots: int | None = None, barrier_pairs: int = 50_000) -> TopKResult:
    """Solve exactly (see the module docstring). A warm-started solve that does not certify its answer is
    repeated cold, and the better certified of the two is returned (the message says so): a warm start only
    saves time, it never costs the certificate."""
    func = "solve_topk(method='exact')"
    if not (type(tol) is float and 0.0 <= tol < np.inf):  # the common case checked without the general helper
        tol = as_float(tol, func, "tol", low=0.0)
    if not (type(barrier_pairs) is int and barrier_pairs >= 1):
        barrier_pairs = as_int(barrier_pairs, func, "barrier_pairs", low=1)
    started = time.perf_counter()
    if max_pivots is not None:
        max_pivots = as_int(max_pivots, func, "max_pivots", low=0)
    if warm_start is None:
        return _solve(problem, kind, tol, None, max_pivots, barrier_pairs, started)
    warm = _solve(problem, kind, tol, warm_start, max_pivots, barrier_pairs, started)
    if warm.status == "optimal":
        return warm
    cold = _solve(problem, kind, tol, None, max_pivots, barrier_pairs, started)
    note = f"the warm-started solve was {warm.status} (relative gap {warm.relative_gap:.3g}): solved cold"
    best = cold if cold.status == "optimal" or cold.relative_gap <= warm.relative_gap else warm
    return dataclasses.replace(best, message=f"{best.message} ({note})", time=time.perf_counter() - started)


def _solve(problem: TopKProblem, kind: str, tol: float, warm_start: TopKResult | None, max_pivots: int | None,
           barrier_pairs: int, started: float) -> TopKResult:
    """:func:`solve` from one start (``warm_start`` or none), on checked options."""
    # harmonic costs (Gaussian arms): the double star of Theorem 3.4 has a closed-form solution
    # other families with a compiled pair kernel: the double star by a compiled Newton solve, certified
    if problem.n_pairs <= FAST_PATH_PAIRS and (
            warm_start is None or (isinstance(warm_start, TopKResult) and warm_start.forest is not None
                                   and warm_start.forest.double_star and warm_start.problem.n_arms == problem.n_arms
                                   and warm_start.problem.k == problem.k)):
        fast_path = _double_star_fast_path if problem.family.harmonic_costs(kind) else _compiled_star_fast_path
        fast = fast_path(problem, kind, tol, started, warm_start)
        if fast is None:  # tied means: the double star of the tie groups (the batch's merging, on one instance)
            fast = fast_path(problem, kind, tol, started, warm_start, tied=True)
        if fast is not None:
            return fast
    return active_set(problem, kind, tol, warm_start, max_pivots, barrier_pairs, started)
