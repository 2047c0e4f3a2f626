r"""Track-and-Stop (Garivier and Kaufmann 2016) with the top-k allocation solvers; FWGA-TaS of Wang, Yang, You
(2022, Section 4.1) is its instance with the FWGA solver updated at every step.

At step :math:`t` (pulls so far), the target allocation :math:`\hat\psi` is the solution of the top-k
allocation problem at the empirical means (recomputed at every step, every ``m`` steps, or when ``t`` has
doubled since the last solve). The next arm is then

* D-tracking: with :math:`U_t = \{a : N_a < \sqrt t - K/2\}`, a least-pulled arm of :math:`U_t` if it is not
  empty (forced exploration), else :math:`\arg\max_a\ t\hat\psi_a - N_a`;
* C-tracking: :math:`\arg\max_a \sum_{s} \hat\psi^{\epsilon_s}_a(s) - N_a`, the cumulative sum (over the
  rule's steps) of the allocations projected on :math:`\{\psi \in \Sigma_K : \psi_a \ge \epsilon_s\}` with
  :math:`\epsilon_s = (K^2 + s)^{-1/2}/2`. The projection is the Euclidean one (Garivier and Kaufmann use the
  sup-norm projection; any projection onto the shrunk simplex keeps their guarantee).

Ties in the arg min / arg max are broken uniformly at random with one uniform per step.

Solver failures
    The allocation problem is undefined when the empirical means tie across the top-k boundary, and a solver
    can raise or return a non-finite or unaccepted result. The rule then keeps its last allocation (uniform at
    the start) and counts a fallback; the result reports ``solver_fallbacks`` and ``solver_calls`` per run.
    Empirical means on the edge of the mean domain (bernoulli 0 or 1, poisson 0) are moved inside it by
    :math:`10^{-9}` before solving. Accepted statuses: ``"optimal"`` and ``"iteration_limit"`` (the normal
    outcome of the iterative methods run for a fixed number of iterations).

Batched solves
    A batched step collects the runs whose allocation is due and calls :func:`solve_allocations` once for all
    of them. With the exact solver and no option but ``tol`` that is one call of
    :func:`~allocopt.solve_topk_batch` on the empirical means of those runs (moved inside the mean domain as
    above), certified row by row (a row's answer does not depend on the other rows); a row is accepted when the
    batch reports it ``"optimal"`` and its allocation is finite and nonnegative, and the accepted allocations are
    normalised to sum to 1. Any other solver or option is called run by run through :func:`~allocopt.solve_topk`,
    warm-started from the run's previous result.

Compiled step
    On Gaussian arms with the exact solver (with at most a ``tol``), the engine's compiled loop runs
    :func:`track_and_stop_step`: the allocation by :func:`exact_allocation` (the batch solver's compiled double star
    of Theorem 3.4 and its certificate, with the batch's acceptance), then D- or C-tracking (:func:`track`). A step
    whose double star the batch does not accept (it would pivot to other forests) is deferred to
    :meth:`TrackAndStop.select`, which solves it by :func:`solve_allocations`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from typing import NamedTuple

from ..._numba import kernel, kernel_copy
from ...families import kernels as _compiled_families
from ..._rng import random_candidate
from ..._validation import as_choice, as_int, fail
from ...exceptions import AllocoptError
from ...topk import kernels as _topk_kernels
from ...topk import certificate as _certificate
from ...topk.kernels import FAMILY_NEGATIVE_MULTIPLIER, FEASIBILITY, MAX_NEWTON, NEGATIVE_MULTIPLIER
from ...topk.kernels import STAR_MAX_ITERATIONS
from ...topk.simplex import project_into_simplex, project_to_simplex
from ...topk.certificate import ROUNDING_ALLOWANCE
from ...topk.problem import TopKProblem
from ..engine.loop import copy_into, pick_among
from ..engine.protocol import DEFER, RuleContext, RunView, StepKernel, register_policy
from ..engine.statistics import sequential_sum

__all__ = ["TrackAndStop", "solve_allocations", "project_shrunk_simplex", "c_tracking_epsilon",
           "ACCEPTED_STATUSES"]

ACCEPTED_STATUSES = frozenset({"optimal", "iteration_limit"})
_EDGE = 1e-9
_ERROR_PROBES = (np.array([0.3, 0.6]), np.array([0.01, 0.99]))  # means inside every built-in family's domain
_SOLVERS = ("exact", "fwga", "kkt-tracking")


def c_tracking_epsilon(n_arms: int, t) -> np.ndarray:
    r""":math:`\epsilon_t = (K^2 + t)^{-1/2}/2` (Garivier and Kaufmann 2016, C-tracking)."""
    return 0.5 / np.sqrt(n_arms * n_arms + np.asarray(t, dtype=float))


def project_shrunk_simplex(psi: np.ndarray, epsilon) -> np.ndarray:
    r"""Euclidean projection of ``psi`` (last axis) on :math:`\{v : v_a \ge \epsilon, \sum_a v_a = 1\}`.

    It is :math:`\epsilon + (1 - K\epsilon)\,\Pi_{\Sigma_K}((\psi - \epsilon)/(1 - K\epsilon))` with
    :math:`\Pi_{\Sigma_K}` the projection on the simplex (sort-based, vectorised over leading axes).

    Examples
    --------
    >>> project_shrunk_simplex(np.array([1.0, 0.0, 0.0]), 0.1).round(12)
    array([0.8, 0.1, 0.1])
    """
    psi = np.asarray(psi, dtype=float)
    epsilon = np.asarray(epsilon, dtype=float)[..., None]
    n_arms = psi.shape[-1]
    scale = 1.0 - n_arms * epsilon
    return epsilon + scale * project_to_simplex((psi - epsilon) / scale)


def _clip_bounds(family) -> tuple[float, float]:
    """Where empirical means are clipped into the family's open mean domain: ``_EDGE`` inside each finite end (an
    infinite end clips nothing)."""
    low = family.lower + _EDGE if np.isfinite(family.lower) else family.lower
    high = family.upper - _EDGE if np.isfinite(family.upper) else family.upper
    return float(low), float(high)


def _clipped_means(context: RuleContext, means: np.ndarray) -> np.ndarray:
    """Empirical means moved inside the family's open mean domain (an empirical Bernoulli mean of 0 or 1)."""
    low, high = _clip_bounds(context.family)
    return np.minimum(np.maximum(np.array(means, dtype=float), low), high)


def _solve_one(context: RuleContext, means: np.ndarray, solver: str, options: dict, warm):
    from ...topk.solve import solve_topk

    try:
        problem = TopKProblem(_clipped_means(context, means), context.k, family=context.family)
        extra = {"warm_start": warm} if solver == "exact" and warm is not None else {}
        result = solve_topk(problem, method=solver, **options, **extra)
    except (AllocoptError, ValueError, ArithmeticError, np.linalg.LinAlgError):
        return None
    psi = np.asarray(result.psi, dtype=float)
    if result.status not in ACCEPTED_STATUSES or not np.all(np.isfinite(psi)) or np.any(psi < 0):
        return None
    return result


def _uses_batch_solver(solver: str, options: dict) -> bool:
    """The exact solver with at most a tolerance goes through :func:`allocopt.solve_topk_batch`."""
    return solver == "exact" and set(options) <= {"tol"}


def solve_allocations(context: RuleContext, means: np.ndarray, solver: str, options: dict,
                      warm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Allocations at the empirical means of several runs: the single entry point of the batched rule.

    With the exact solver (and no option but ``tol``) every row goes through one call of
    :func:`allocopt.solve_topk_batch`, whose rows are certified like single solves and do not depend on the
    other rows of the batch (so one run and a batch of runs choose the same arms). Other solvers are called
    run by run with the run's previous result as warm start.

    Parameters
    ----------
    means : ndarray, shape (R, K)
    warm : ndarray of object, shape (R,)
        Each run's previous result (or None); unused by the batch solver.

    Returns
    -------
    psi : ndarray, shape (R, K)
        The allocations (rows of failed solves are NaN).
    ok : ndarray of bool, shape (R,)
    results : ndarray of object, shape (R,)
        The solver results (None where failed), used as the next warm starts.
    """
    n_runs, n_arms = means.shape
    results = np.empty(n_runs, dtype=object)
    if _uses_batch_solver(solver, options):
        from ...topk.batch import solve_topk_batch

        batch = solve_topk_batch(_clipped_means(context, means), context.k, family=context.family, **options)
        psi = np.array(batch.psi, dtype=float)
        # (the batch's statuses are "optimal", "not_certified" and "invalid_instance": only the first is accepted)
        ok = batch.success & np.all(np.isfinite(psi), axis=1) & np.all(psi >= 0, axis=1)
        # (normalised by sums left to right, the order of the compiled step's exact_allocation)
        if ok.all():  # (the usual case: no boolean-mask copies)
            psi /= sequential_sum(psi)[:, None]
        else:
            psi[~ok] = np.nan
            psi[ok] /= sequential_sum(psi[ok])[:, None]
        return psi, ok, results
    psi = np.full((n_runs, n_arms), np.nan)
    ok = np.zeros(n_runs, dtype=bool)
    for run in range(n_runs):
        result = _solve_one(context, means[run], solver, options, warm[run])
        results[run] = result
        if result is not None:
            psi[run] = result.psi / sequential_sum(result.psi)
            ok[run] = True
    return psi, ok, results


@dataclass(frozen=True)
class TrackAndStop:
    """Track-and-Stop with a top-k allocation solver.

    Parameters
    ----------
    tracking : {"d", "c"}
        D-tracking or C-tracking.
    solver : {"exact", "fwga", "kkt-tracking"}
        Allocation solver (:func:`~allocopt.solve_topk` method).
    update : "every", int or "geometric"
        Solve at every step, every ``m`` steps, or when the number of pulls has doubled since the last solve.
    solver_options : dict
        Options of the solver (e.g. ``{"iterations": 200}`` for the iterative methods).
    name : str
        Name reported in results.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.5, 0.0], k=1, variance=0.25)
    >>> result = identify(problem, TrackAndStop(), delta=0.1, n_runs=5, rng=2)
    >>> bool(result.correct.all()), int(result.diagnostics["solver_calls"].max()) > 0
    (True, True)
    """

    tracking: str = "d"
    solver: str = "exact"
    update: Any = "every"
    solver_options: dict = field(default_factory=dict)
    name: str = "track-and-stop"

    diagnostic_names = ("solver_fallbacks", "solver_calls")
    uses_glr = False

    def __post_init__(self):
        func = "TrackAndStop"
        as_choice(self.tracking, func, "tracking", ("d", "c"))
        as_choice(self.solver, func, "solver", _SOLVERS)
        if isinstance(self.update, str):
            as_choice(self.update, func, "update", ("every", "geometric"))
        elif isinstance(self.update, (bool, np.bool_)):
            fail(func, "update", "'every', 'geometric' or an integer >= 1", self.update)
        else:
            as_int(self.update, func, "update", low=1, requirement="'every', 'geometric' or an integer >= 1")
        if not isinstance(self.solver_options, dict):
            fail(func, "solver_options", "a dict of solve_topk options", self.solver_options)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 1

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {"psi": np.full((n_runs, context.n_arms), 1.0 / context.n_arms),
                "cumulative": np.zeros((n_runs, context.n_arms)),
                "last_solve": np.full((n_runs, 1), -1, dtype=np.int64),
                "solver_fallbacks": np.zeros((n_runs, 1), dtype=np.int64),
                "solver_calls": np.zeros((n_runs, 1), dtype=np.int64),
                "warm": np.full((n_runs, 1), None, dtype=object)}

    def diagnostics(self, state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"solver_fallbacks": state["solver_fallbacks"][:, 0], "solver_calls": state["solver_calls"][:, 0]}

    def _due(self, t, last_solve, n_arms: int):
        if self.update == "every":
            return np.ones(np.shape(t), dtype=bool)
        if self.update == "geometric":
            return (last_solve < 0) | (t >= 2 * last_solve)
        return (last_solve < 0) | ((t - n_arms) % int(self.update) == 0)

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`track_and_stop_step` (Gaussian arms) or :func:`family_track_and_stop_step` (the other families
        with a compiled pair kernel) for the engine's compiled loop: D- or C-tracking, the exact solver (with at most
        a ``tol``) at every ``update``, and a double star small enough for the batch's fast path; None otherwise (the
        step then runs in Python, batched by :meth:`select_batch`)."""
        from ...topk.batch import FAST_PATH_PAIRS
        from ...topk.batch import BATCH_TOL

        n_arms, k, family = context.n_arms, context.k, context.family
        if not _uses_batch_solver(self.solver, self.solver_options) or k * (n_arms - k) > FAST_PATH_PAIRS:
            return None
        tol = float(self.solver_options.get("tol", BATCH_TOL))  # solve_allocations leaves it to solve_topk_batch
        dispersion = np.ascontiguousarray(np.broadcast_to(context.dispersion, (n_arms,)), dtype=float)
        work: ExactWork | FamilyWork
        if family.harmonic_costs("confidence"):
            if family.name != "gaussian":
                return None
            _bind_star("star_rows", _topk_kernels.gaussian_star_rows_kernel())
            step, work = track_and_stop_step, ExactWork.empty(n_arms)
        else:
            code = _compiled_families.kernel_code(family.compiled_pair("confidence"))
            # the batch adds the family's evaluation error of a row's costs; the compiled step takes one number
            errors = {float(family.pair_error_bound("confidence", means)) for means in _ERROR_PROBES}
            if code is None or len(errors) != 1:
                return None
            _bind_star("family_star_rows", _topk_kernels.family_star_rows_kernel())
            step, work = family_track_and_stop_step, FamilyWork.for_family(family, n_arms, k, code, errors.pop())
        update = (UPDATE_EVERY if self.update == "every" else UPDATE_GEOMETRIC if self.update == "geometric"
                  else UPDATE_PERIODIC)
        period = int(self.update) if update == UPDATE_PERIODIC else 1
        return StepKernel(step, state=TrackAndStopState, params=TrackAndStopParams(
            k, tol, self.tracking == "c", update, period, dispersion, work, np.empty(n_arms), np.empty(n_arms),
            np.empty(n_arms, dtype=np.int64), np.arange(n_arms), np.empty(n_arms), np.empty(n_arms)))

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        n_arms, t, counts = context.n_arms, int(view.t), view.counts
        # the target allocation at the empirical means, when due
        if self._due(t, state["last_solve"][0], n_arms):
            psi, ok, results = solve_allocations(context, view.means[None, :], self.solver, self.solver_options,
                                                 state["warm"])
            state["solver_calls"][0] += 1
            state["last_solve"][0] = t
            if ok[0]:
                state["psi"][:] = psi[0]
                state["warm"][0] = results[0]
            else:
                state["solver_fallbacks"][0] += 1
        psi = state["psi"]
        if self.tracking == "d":
            forced = counts < np.sqrt(t) - n_arms / 2
            if forced.any():  # forced exploration: a least-pulled arm among the under-sampled ones
                candidates = forced & (counts == counts[forced].min())
            else:
                gap = t * psi - counts
                candidates = gap == gap.max()
        else:
            state["cumulative"][:] += project_shrunk_simplex(psi, c_tracking_epsilon(n_arms, t))
            gap = state["cumulative"] - counts
            candidates = gap == gap.max()
        return int(random_candidate(candidates, uniforms[0]))

    def select_batch(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> np.ndarray:
        n_arms, t, counts = context.n_arms, view.t, view.counts
        if self.update == "every":  # every run solves (no index arrays)
            self._update_batch(context, view, state, slice(None))
        else:
            due = np.flatnonzero(self._due(t, state["last_solve"][:, 0], n_arms))
            if due.size:
                self._update_batch(context, view, state, due)
        psi = state["psi"]
        if self.tracking == "d":
            forced = counts < (np.sqrt(t) - n_arms / 2)[:, None]
            gap = t[:, None] * psi - counts
            tracked = gap == gap.max(axis=1, keepdims=True)
            if not forced.any():  # (most steps: no run is under-sampled)
                return random_candidate(tracked, uniforms[:, 0])
            forced_min = np.where(forced, counts, np.iinfo(np.int64).max).min(axis=1, keepdims=True)
            candidates = np.where(forced.any(axis=1, keepdims=True), forced & (counts == forced_min), tracked)
        else:
            state["cumulative"][...] += project_shrunk_simplex(psi, c_tracking_epsilon(n_arms, t))
            gap = state["cumulative"] - counts
            candidates = gap == gap.max(axis=1, keepdims=True)
        return random_candidate(candidates, uniforms[:, 0])

    def _update_batch(self, context: RuleContext, view: RunView, state, due) -> None:
        """Solve the allocation problem at the empirical means of the runs ``due`` (indices or a slice)."""
        t = view.t
        psi, ok, results = solve_allocations(context, view.means[due], self.solver, self.solver_options,
                                             state["warm"][due, 0])
        state["solver_calls"][due, 0] += 1
        state["last_solve"][due, 0] = t[due]
        if ok.all():
            state["psi"][due] = psi
            state["warm"][due, 0] = results
        else:
            rows = np.arange(t.shape[0])[due]
            solved = rows[ok]
            state["psi"][solved] = psi[ok]
            state["warm"][solved, 0] = results[ok]
            state["solver_fallbacks"][rows[~ok], 0] += 1


class ExactWork(NamedTuple):
    """Work arrays of :func:`exact_allocation` (a batch of one sorted row for the double star)."""

    order: np.ndarray  # (K,) int64
    theta: np.ndarray  # (1, K)
    variance: np.ndarray  # (1, K)
    psi: np.ndarray  # (1, K)
    mu: np.ndarray  # (1, K - 1)
    value: np.ndarray  # (1,)
    bound: np.ndarray
    stationarity: np.ndarray
    complementarity: np.ndarray
    accepted: np.ndarray  # (1,) bool
    start: np.ndarray  # (1,): the star's start (not read: has_start is false)
    has_start: bool
    max_newton: int

    @classmethod
    def empty(cls, n_arms: int) -> "ExactWork":
        return cls(np.empty(n_arms, dtype=np.int64), np.empty((1, n_arms)), np.empty((1, n_arms)),
                   np.empty((1, n_arms)), np.empty((1, n_arms - 1)), np.empty(1), np.empty(1), np.empty(1),
                   np.empty(1), np.empty(1, dtype=np.bool_), np.zeros(1), False, MAX_NEWTON)


class FamilyWork(NamedTuple):
    """Constants and work arrays of :func:`family_allocation` (one sorted row for the family's double star)."""

    code: int  # the family's pair kernel (allocopt.families.kernels.kernel_code)
    lower: float  # the mean domain's ends
    upper: float
    low: float  # where empirical means are clipped (_clip_bounds)
    high: float
    pair_error: float  # the family's evaluation error of the fixed-confidence costs (pair_error_bound)
    max_iterations: int  # the double star's (STAR_MAX_ITERATIONS)
    order: np.ndarray  # (K,) int64
    clipped: np.ndarray  # (K,)
    theta: np.ndarray  # (K,): the tie groups' means, sorted (the clipped means when no two are tied)
    dispersion: np.ndarray  # (K,): the groups' dispersions, n_g phi_g
    group_first: np.ndarray  # (K,) int64: each group's first position in the sorted order
    group_size: np.ndarray  # (K,) int64: the groups' sizes n_g
    psi: np.ndarray  # (K,)
    mu: np.ndarray  # (K - 1,)
    keep: np.ndarray  # (K - 1,) bool
    weight: np.ndarray  # (K,)
    top_sums: np.ndarray  # (k,)
    bottom_sums: np.ndarray  # (K - k,)
    out: np.ndarray  # (7,)

    @classmethod
    def for_family(cls, family, n_arms: int, k: int, code: int, pair_error: float) -> "FamilyWork":
        low, high = _clip_bounds(family)
        return cls(code, float(family.lower), float(family.upper), low, high, pair_error, STAR_MAX_ITERATIONS,
                   np.empty(n_arms, dtype=np.int64), np.empty(n_arms), np.empty(n_arms), np.empty(n_arms),
                   np.empty(n_arms, dtype=np.int64), np.empty(n_arms, dtype=np.int64), np.empty(n_arms),
                   np.empty(n_arms - 1),
                   np.empty(n_arms - 1, dtype=np.bool_), np.empty(n_arms), np.empty(k), np.empty(n_arms - k),
                   np.empty(7))


SOLVED, FALLBACK, HAND_BACK, NOT_DUE = range(4)
"""What :func:`exact_allocation` and :func:`family_allocation` found: an allocation, a row the batch does not solve
(``ok`` False), or a row the batch solves by another route (other forests, tie groups, the single solve): the step
is then handed back to Python. ``NOT_DUE``: no solve at this step (``update``)."""

UPDATE_EVERY, UPDATE_GEOMETRIC, UPDATE_PERIODIC = range(3)
"""The compiled step's ``update``: every step, when the pulls have doubled, or every ``m`` steps."""

# the batch solver's compiled double stars, called by name from compiled code: the top-k layer's own dispatchers
# (bound by TrackAndStop.compiled_step, _bind_star), so that a run compiles each star once, with the types of the
# single solve's call; and the certificate's gap
star_rows = _topk_kernels.gaussian_star_rows
family_star_rows = _topk_kernels.family_star_rows
certified_gap = kernel_copy(_certificate.scalar_certified_gap)
merge_ties = kernel_copy(_topk_kernels.merge_ties)


def _bind_star(name: str, dispatcher) -> None:
    """Bind the top-k layer's compiled double star under ``name`` (``star_rows`` or ``family_star_rows``) before a
    compiled step that calls it is compiled."""
    globals()[name] = dispatcher


@kernel
def sort_decreasing(values, order):
    """``order`` = ``argsort(-values, kind="stable")``: an insertion sort, equal values keep the arm order."""
    for arm in range(values.shape[0]):
        position = arm
        while position > 0 and values[order[position - 1]] < values[arm]:
            order[position] = order[position - 1]
            position -= 1
        order[position] = arm


@kernel
def normalised_allocation(sorted_psi, order, out):
    """:data:`SOLVED` with ``out`` the allocation ``sorted_psi`` in arm order divided by its sum left to right
    (:func:`solve_allocations`' normalisation), or :data:`FALLBACK` where an entry is not finite or negative."""
    n_arms = order.shape[0]
    for position in range(n_arms):
        psi = sorted_psi[position]
        if not (np.isfinite(psi) and psi >= 0):
            return FALLBACK
        out[order[position]] = psi
    total = 0.0
    for arm in range(n_arms):
        total += out[arm]
    for arm in range(n_arms):
        out[arm] = out[arm] / total
    return SOLVED


@kernel
def exact_allocation(means, dispersion, k, tol, work, out):
    """:func:`solve_allocations`'s answer for one row of Gaussian means by the batch solver's fast path:
    :data:`SOLVED` (``out`` the allocation in arm order, normalised by its sum left to right), :data:`FALLBACK`
    (a mean that is not finite, no unique top-k set, an uncertified double star, a non-finite or negative
    allocation) or :data:`HAND_BACK`."""
    n_arms = means.shape[0]
    for arm in range(n_arms):
        if not (means[arm] > -np.inf and means[arm] < np.inf):  # outside the family's domain
            return FALLBACK
    order = work.order
    sort_decreasing(means, order)
    if not means[order[k - 1]] > means[order[k]]:  # no unique top-k set
        return FALLBACK
    for position in range(n_arms):
        work.theta[0, position] = means[order[position]]
        work.variance[0, position] = dispersion[order[position]]
    star_rows(work.theta, work.variance, k, work.start, work.has_start, work.max_newton, FEASIBILITY,
              NEGATIVE_MULTIPLIER, work.psi, work.mu, work.value, work.bound, work.stationarity, work.complementarity,
              work.accepted)
    if not work.accepted[0]:
        return HAND_BACK
    if not certified_gap(work.bound[0], work.value[0], ROUNDING_ALLOWANCE, 1) <= tol * work.value[0]:
        return FALLBACK
    return normalised_allocation(work.psi[0], order, out)


@kernel
def family_allocation(means, dispersion, k, tol, work, out):
    """:func:`solve_allocations`'s answer for one row of means of a family with a compiled pair kernel, as
    :func:`allocopt.solve_topk_batch` gives it by its compiled double star: the means clipped into the family's
    domain (:func:`_clipped_means`), sorted, tied means merged into groups (the exact solver's ``merge_ties``,
    :mod:`allocopt.topk.kernels`), the double star
    from weights one with the batch's iteration cap and multiplier tolerance, accepted when it is solved with a
    positive value and a certified relative gap at most ``tol`` (the family's evaluation error and, for groups,
    one more rounding term in the allowance), each arm given its group's allocation over the group's size.
    :data:`SOLVED`, :data:`FALLBACK` (no unique top-k set, a mean outside the domain, a non-finite or negative
    allocation) or :data:`HAND_BACK` (tied arms of different dispersions, or a double star the batch does not
    accept: the single solve takes those)."""
    n_arms = means.shape[0]
    clipped, order = work.clipped, work.order
    for arm in range(n_arms):
        if means[arm] != means[arm]:
            return FALLBACK
        clipped[arm] = min(max(means[arm], work.low), work.high)
        if not (clipped[arm] > work.lower and clipped[arm] < work.upper):
            return FALLBACK
    sort_decreasing(clipped, order)
    if not clipped[order[k - 1]] > clipped[order[k]]:  # no unique top-k set
        return FALLBACK
    n_groups, n_top = merge_ties(clipped, order, dispersion, k, work.theta, work.dispersion, work.group_first,
                                 work.group_size)
    if n_groups == 0:
        return HAND_BACK
    for group in range(n_groups):
        work.weight[group] = 1.0
    family_star_rows(work.code, work.theta[:n_groups], work.dispersion[:n_groups], n_top, 0.0, work.max_iterations,
                     FAMILY_NEGATIVE_MULTIPLIER, work.psi, work.mu, work.keep, work.weight, work.top_sums,
                     work.bottom_sums, work.out)
    value = work.out[1]
    terms = work.out[5] + (0 if n_groups == n_arms else 1)
    if not (work.out[0] == 1.0 and value > 0
            and certified_gap(work.out[2], value, work.pair_error, int(terms)) <= tol * value):
        return HAND_BACK
    for group in range(n_groups):  # each arm's share of its group's allocation (into the clipped means' array)
        share = work.psi[group] / work.group_size[group]
        for position in range(work.group_first[group], work.group_first[group] + work.group_size[group]):
            work.clipped[position] = share
    return normalised_allocation(work.clipped, order, out)


class TrackAndStopState(NamedTuple):
    """The arrays of :meth:`TrackAndStop.init_state` that :func:`track_and_stop_step` reads and updates."""

    psi: np.ndarray
    cumulative: np.ndarray  # C-tracking's running sum of the projected allocations
    last_solve: np.ndarray
    solver_fallbacks: np.ndarray
    solver_calls: np.ndarray


class TrackAndStopParams(NamedTuple):
    """What :func:`track_and_stop_step` reads: k, the solver's ``tol``, whether it C-tracks, when it solves, the
    variances and work arrays."""

    k: int
    tol: float
    c_tracking: bool
    update: int  # UPDATE_EVERY, UPDATE_GEOMETRIC or UPDATE_PERIODIC
    period: int  # m of update=m
    dispersion: np.ndarray
    exact: ExactWork | FamilyWork  # the Gaussian or the family double star's work
    target: np.ndarray  # (K,)
    lag: np.ndarray  # (K,)
    forced: np.ndarray  # (K,) int64
    arms: np.ndarray  # (K,): 0, ..., K - 1
    shrunk: np.ndarray  # (K,): C-tracking's allocation moved into the simplex to project
    ordered: np.ndarray  # (K,): the projection's sorted values


def track_and_stop_step(row, view, state, params, uniforms, each):
    """:meth:`TrackAndStop.select` compiled for Gaussian arms and the exact solver at every due step
    (:func:`solve_due`; deferred to it where the batch would solve the row on other forests)."""
    verdict = NOT_DUE
    if solve_due(params, state.last_solve[row, 0], view.t, view.counts.shape[0]):
        verdict = exact_allocation(view.means, params.dispersion, params.k, params.tol, params.exact, params.target)
    return track(row, view, state, params, uniforms, verdict)


def family_track_and_stop_step(row, view, state, params, uniforms, each):
    """:meth:`TrackAndStop.select` compiled for the other families with a compiled pair kernel (deferred to it where
    the batch would solve the row by another route than the double star of the tie groups)."""
    verdict = NOT_DUE
    if solve_due(params, state.last_solve[row, 0], view.t, view.counts.shape[0]):
        verdict = family_allocation(view.means, params.dispersion, params.k, params.tol, params.exact, params.target)
    return track(row, view, state, params, uniforms, verdict)


@kernel
def solve_due(params, last_solve, t, n_arms):
    """:meth:`TrackAndStop._due` for one run: every step, when the pulls have doubled since the last solve, or every
    ``m`` steps (and at the first step)."""
    if params.update == UPDATE_EVERY or last_solve < 0:
        return True
    if params.update == UPDATE_GEOMETRIC:
        return t >= 2 * last_solve
    return (t - n_arms) % params.period == 0


@kernel
def track(row, view, state, params, uniforms, verdict):
    """The step after the solve: the target kept (SOLVED) or the last one (FALLBACK, or NOT_DUE: no solve at this
    step; HAND_BACK defers the step), then D- or C-tracking."""
    if verdict == HAND_BACK:
        return DEFER, 0
    if verdict != NOT_DUE:
        state.solver_calls[row, 0] += 1
        state.last_solve[row, 0] = view.t
        if verdict == SOLVED:
            copy_into(state.psi[row], params.target)
        else:
            state.solver_fallbacks[row, 0] += 1
    if params.c_tracking:
        return c_tracking(row, view, state, params, uniforms)
    return d_tracking(row, view, state, params, uniforms)


@kernel
def c_tracking(row, view, state, params, uniforms):
    """C-tracking: the running sum of the allocations projected on the simplex shrunk by :func:`c_tracking_epsilon`
    (:func:`project_shrunk_simplex`, the same operations), then the largest sum minus N_a."""
    counts = view.counts
    n_arms = counts.shape[0]
    epsilon = 0.5 / np.sqrt(n_arms * n_arms + float(view.t))
    scale = 1.0 - n_arms * epsilon
    psi, cumulative = state.psi[row], state.cumulative[row]
    for arm in range(n_arms):
        params.shrunk[arm] = (psi[arm] - epsilon) / scale
    project_into_simplex(params.shrunk, params.ordered, params.lag)
    for arm in range(n_arms):
        cumulative[arm] += epsilon + scale * params.lag[arm]
        params.lag[arm] = cumulative[arm] - counts[arm]
    return pick_among(params.arms, params.lag, True, uniforms[0]), 1


@kernel
def d_tracking(row, view, state, params, uniforms):
    """D-tracking: a least-pulled under-sampled arm, else the largest t psi_a - N_a."""
    counts, t = view.counts, view.t
    n_arms = counts.shape[0]
    n_forced = 0
    floor = np.sqrt(t) - n_arms / 2
    for arm in range(n_arms):
        if counts[arm] < floor:
            params.forced[n_forced] = arm
            n_forced += 1
    if n_forced:
        return pick_among(params.forced[:n_forced], counts, False, uniforms[0]), 1
    for arm in range(n_arms):
        params.lag[arm] = t * state.psi[row, arm] - counts[arm]
    return pick_among(params.arms, params.lag, True, uniforms[0]), 1


register_policy("track-and-stop", TrackAndStop)
register_policy("fwga-ts", lambda: TrackAndStop(solver="fwga", update="every", solver_options={"iterations": 200},
                                                name="fwga-ts"))
