r"""Thompson sampling with direct tracking, DT-TS (Wang, Yang, You 2022, Appendix C.2, Algorithm 4).

At step :math:`t` (pulls so far), with counts :math:`N`:

1. sample :math:`\tilde\theta_t \sim \pi_t` (the posterior, :mod:`allocopt.algorithms.engine.statistics`);
2. :math:`\psi_t \leftarrow \mathrm{Solver}(\tilde\theta_t)`, the top-k allocation of the sampled instance;
3. pull :math:`\arg\max_a\ t\,\psi_{t,a} - N_a` (ties broken uniformly at random).

Tracking
    * ``"direct"`` (default): step 3 as printed, the paper's direct tracking of the latest sample's allocation.
    * ``"cumulative"``, a variant: pull :math:`\arg\max_a \sum_{s \le t} \psi_{s,a} - N_a`, the arm whose count
      lags the running sum of the sampled allocations the most (the sum of the lags is 1 at every step, so every
      arm's count stays within a bounded distance of its running target). Direct tracking of the *exact*
      allocation of each sample gives the arms far below the top-k boundary only their optimal share, and the
      posterior noise of a single sample moves that share little; with the exact solver on Wang, Yang, You
      (2022)'s Figure 1 instance this leaves the far arms under-sampled and holding back the stopping statistic
      late in a run. Tracking the running sum averages the samples' allocations instead (docs/algorithms.md
      gives the measured figures).

Solvers
    * ``"kkt-tracking"`` (default, as in the paper's experiments, Appendix D): ``iterations`` = 100 iterations
      of KKT-Tracking (Algorithm 3) from the uniform allocation, run for all active replications at once by the
      kernel that :func:`~allocopt.solve_topk` (method ``"kkt-tracking"``) also runs
      (:func:`allocopt.topk.tracking.kkt_tracking_batch`; no certificate, no early stop): the specification,
      what :meth:`DTTS.select` runs. Its cost is ``iterations`` evaluations of the :math:`k(K-k)` pair costs per
      replication and per step.
    * ``"exact"``: the exact certified solver, one :func:`allocopt.solve_topk_batch` call per step for all
      active replications (the rows do not depend on each other, so one run and a batch choose the same arms).

    Measured costs per replication-step are in the engine's documentation (docs/algorithms.md).

Compiled step
    With KKT-Tracking, on Gaussian arms and every family with a compiled pair kernel and posterior sampler, the
    engine's compiled loop runs :func:`dt_ts_step`: the same three steps, the tracking by
    :func:`gaussian_tracking` (Gaussian arms: only the :math:`K - 1` costs that touch the chosen pair are
    recomputed at each iteration) or :func:`family_tracking` (the families' pair kernels, in a cost grid of
    which the chosen pair's row and column, :math:`K - 1` costs, are recomputed at each iteration), each the
    operations of :func:`~allocopt.topk.tracking.kkt_tracking_batch` in its order. The exact solver runs in
    Python (:meth:`DTTS.select_batch`).

Degenerate samples
    A posterior sample can tie across the top-k boundary (samples clipped to the edge of a bounded mean
    domain, for example two Bernoulli samples rounded to the same value next to 1); the allocation problem has
    no unique top-k set there, and a solver can also fail or return a non-finite allocation. The rule then keeps
    its previous allocation (uniform before the first solve) and counts a fallback: the result reports
    ``solver_fallbacks`` and ``solver_calls`` per run, as :class:`~allocopt.algorithms.TrackAndStop` does.

Each step (either tracking) consumes K + 1 uniforms: K for the posterior sample, one for the tie-break of the arg max.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from typing import Any, NamedTuple

from ...families import kernels as _compiled_families
from ..._numba import inlined_kernel, kernel
from ..._rng import random_candidate
from ..._special import special_functions
from ..._validation import as_choice, as_int
from ...topk.tracking import kkt_tracking_batch
from ..engine.loop import GAUSSIAN_STATISTIC, copy_into, pick_among, split_top_k
from ..engine.protocol import RuleContext, RunView, StepKernel, register_policy
from ..engine.statistics import posterior_kind, posterior_quantile, posterior_sample, top_k_order
from .track_and_stop import solve_allocations

__all__ = ["DTTS", "sampled_allocations"]

_SOLVERS = ("kkt-tracking", "exact")
_TRACKINGS = ("direct", "cumulative")


def sampled_allocations(context: RuleContext, theta: np.ndarray, solver: str,
                        iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """The allocations of the sampled instances ``theta`` (shape (R, K)) and which rows succeeded.

    Rows whose sample ties across the top-k boundary, or whose solve fails or is not finite, are not ok (their
    ``psi`` rows are NaN).
    """
    n_runs, n_arms = theta.shape
    top, bottom = top_k_order(theta, context.k)
    rows = np.arange(n_runs)[:, None]
    ok = theta[rows, top].min(axis=1) > theta[rows, bottom].max(axis=1)
    psi = np.full((n_runs, n_arms), np.nan)
    if not ok.any():
        return psi, ok
    good = np.flatnonzero(ok)
    if solver == "kkt-tracking":
        solved = kkt_tracking_batch(context.family, "confidence", theta[good], context.dispersion, top[good],
                                    bottom[good], iterations)
        solved_ok = np.ones(good.size, dtype=bool)
    else:
        solved, solved_ok, _ = solve_allocations(context, theta[good], "exact", {},
                                                 np.full(good.size, None, dtype=object))
    solved_ok &= np.all(np.isfinite(solved), axis=1) & np.all(solved >= 0, axis=1)
    psi[good[solved_ok]] = solved[solved_ok]
    ok[good[~solved_ok]] = False
    return psi, ok


@dataclass(frozen=True)
class DTTS:
    """Thompson sampling with direct tracking (DT-TS).

    Parameters
    ----------
    solver : {"kkt-tracking", "exact"}
        The allocation solver applied to every posterior sample (module docstring).
    iterations : int, default 100
        KKT-Tracking iterations per step (the paper's T = 100; ignored by the exact solver).
    tracking : {"direct", "cumulative"}
        What step 3 tracks: the latest sample's allocation (the paper) or the running sum of the sampled
        allocations (a variant; module docstring).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.9, 0.3, 0.2], k=2, variance=0.25)
    >>> result = identify(problem, DTTS(), delta=0.01, n_runs=10, rng=3)
    >>> bool(result.correct.all()), int(result.diagnostics["solver_fallbacks"].sum())
    (True, 0)
    """

    solver: str = "kkt-tracking"
    iterations: int = 100
    tracking: str = "direct"
    name = "dt-ts"
    uses_glr = False

    diagnostic_names = ("solver_fallbacks", "solver_calls")

    def __post_init__(self):
        as_choice(self.solver, "DTTS", "solver", _SOLVERS)
        as_int(self.iterations, "DTTS", "iterations", low=1)
        as_choice(self.tracking, "DTTS", "tracking", _TRACKINGS)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return context.n_arms + 1

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {"psi": np.full((n_runs, context.n_arms), 1.0 / context.n_arms),
                "target": np.zeros((n_runs, context.n_arms)),
                "solver_fallbacks": np.zeros((n_runs, 1), dtype=np.int64),
                "solver_calls": np.zeros((n_runs, 1), dtype=np.int64)}

    def diagnostics(self, state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"solver_fallbacks": state["solver_fallbacks"][:, 0], "solver_calls": state["solver_calls"][:, 0]}

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`dt_ts_step` for the engine's compiled loop: KKT-Tracking on Gaussian arms or a family with a
        compiled pair kernel and posterior sampler; None otherwise (the step then runs in Python)."""
        posterior = posterior_kind(context.family)
        harmonic = context.family.harmonic_costs("confidence")
        pair = None if harmonic else _compiled_families.kernel_code(context.family.compiled_pair("confidence"))
        if self.solver != "kkt-tracking" or posterior is None or not (harmonic or pair is not None):
            return None
        n_arms, k = context.n_arms, context.k
        dispersion = np.ascontiguousarray(np.broadcast_to(context.dispersion, (n_arms,)), dtype=float)
        return StepKernel(dt_ts_step, state=DTTSState, params=DTTSParams(
            k, int(self.iterations), self.tracking == "cumulative", posterior[0], GAUSSIAN_STATISTIC if pair is None else int(pair), dispersion,
            posterior[1], posterior[2], special_functions(), np.empty(n_arms), np.empty(k, dtype=np.int64),
            np.empty(n_arms - k, dtype=np.int64), np.empty(n_arms), np.empty(n_arms), np.arange(n_arms), np.empty(k),
            np.empty(k, dtype=np.int64), np.empty(n_arms, dtype=np.bool_), TrackingWork.empty(k, n_arms - k)))

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        n_arms, t = context.n_arms, int(view.t)
        # 1. theta~ from the posterior
        theta = posterior_sample(context.family, context.dispersion, view.counts, view.sums, uniforms[:n_arms])
        # 2. psi_t = Solver(theta~) (the previous allocation if the sample is degenerate or the solver fails)
        psi, ok = sampled_allocations(context, theta[None, :], self.solver, self.iterations)
        state["solver_calls"][0] += 1
        if ok[0]:
            state["psi"][:] = psi[0]
        else:
            state["solver_fallbacks"][0] += 1
        # 3. the arm whose count lags its target the most
        if self.tracking == "cumulative":
            state["target"] += state["psi"]
            lag = state["target"] - view.counts
        else:
            lag = t * state["psi"] - view.counts
        return int(random_candidate(lag == lag.max(), uniforms[n_arms]))

    def select_batch(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> np.ndarray:
        n_arms = context.n_arms
        theta = posterior_sample(context.family, context.dispersion, view.counts, view.sums, uniforms[:, :n_arms])
        psi, ok = sampled_allocations(context, theta, self.solver, self.iterations)
        state["solver_calls"][:, 0] += 1
        if ok.all():  # (the usual case: no boolean-mask copies)
            state["psi"][...] = psi
        else:
            state["psi"][ok] = psi[ok]
            state["solver_fallbacks"][~ok, 0] += 1
        if self.tracking == "cumulative":
            state["target"] += state["psi"]
            lag = state["target"] - view.counts
        else:
            lag = view.t[:, None] * state["psi"] - view.counts
        return random_candidate(lag == lag.max(axis=1, keepdims=True), uniforms[:, n_arms])


class DTTSState(NamedTuple):
    """The arrays of :meth:`DTTS.init_state` that :func:`dt_ts_step` reads and updates."""

    psi: np.ndarray
    target: np.ndarray  # the running sum of the sampled allocations (cumulative tracking)
    solver_fallbacks: np.ndarray
    solver_calls: np.ndarray


class DTTSParams(NamedTuple):
    """What :func:`dt_ts_step` reads: k, the iterations, whether it tracks the running sum, the posterior's and
    the pair kernel's numbers, the dispersion, the clip bounds of the samples, scipy.special's functions, and work
    arrays."""

    k: int
    iterations: int
    cumulative: bool
    posterior: int
    pair: int
    dispersion: np.ndarray
    low: float
    high: float
    special: Any
    theta: np.ndarray  # (K,): the sample
    top: np.ndarray  # (k,)
    bottom: np.ndarray  # (K - k,)
    psi: np.ndarray  # (K,): the sample's allocation
    lag: np.ndarray  # (K,)
    arms: np.ndarray  # (K,): 0, ..., K - 1
    best_values: np.ndarray  # (k,): the insertion top-k's work arrays
    best_arms: np.ndarray
    member: np.ndarray
    tracking: TrackingWork


def dt_ts_step(row, view, state, params, uniforms, each):
    """:meth:`DTTS.select` compiled (the same three steps, KKT-Tracking by the tracking kernels)."""
    counts, sums, k = view.counts, view.sums, params.k
    n_arms = counts.shape[0]
    theta = params.theta
    # 1. theta~ from the posterior, by inversion
    for arm in range(n_arms):
        theta[arm] = posterior_quantile(params.posterior, counts[arm], sums[arm], params.dispersion[arm],
                                        uniforms[arm], params.special, params.low, params.high)
    # 2. psi_t = KKT-Tracking(theta~), the previous allocation if theta~ has no unique top-k or psi is not valid
    top, bottom = params.top, params.bottom
    split_top_k(theta, k, top, bottom, params.best_values, params.best_arms, params.member)
    lowest_top, highest_bottom = np.inf, -np.inf
    for i in range(k):
        lowest_top = min(lowest_top, theta[top[i]])
    for j in range(n_arms - k):
        highest_bottom = max(highest_bottom, theta[bottom[j]])
    fresh = lowest_top > highest_bottom
    if fresh:
        if params.pair == GAUSSIAN_STATISTIC:
            gaussian_tracking(theta, params.dispersion, top, bottom, params.iterations, params.tracking, params.psi)
        else:
            family_tracking(params.pair, theta, params.dispersion, top, bottom, params.iterations, params.tracking,
                            params.psi)
        for arm in range(n_arms):
            value = params.psi[arm]
            if not (np.isfinite(value) and value >= 0):
                fresh = False
    state.solver_calls[row, 0] += 1
    if fresh:
        copy_into(state.psi[row], params.psi)
    else:
        state.solver_fallbacks[row, 0] += 1
    # 3. the arm whose count lags its target the most
    for arm in range(n_arms):
        if params.cumulative:
            state.target[row, arm] += state.psi[row, arm]
            params.lag[arm] = state.target[row, arm] - counts[arm]
        else:
            params.lag[arm] = view.t * state.psi[row, arm] - counts[arm]
    return pick_among(params.arms, params.lag, True, uniforms[n_arms]), 1


class TrackingWork(NamedTuple):
    """Work arrays of the KKT-Tracking kernels (top arms in the order of ``top``, bottom arms in that of
    ``bottom``)."""

    theta_top: np.ndarray  # (k,)
    theta_bottom: np.ndarray  # (K - k,)
    variance_top: np.ndarray  # (k,): the dispersions
    variance_bottom: np.ndarray
    precision_top: np.ndarray  # (k,): their inverses
    precision_bottom: np.ndarray
    u_top: np.ndarray  # (k,): the unnormalised iterates u_t = t psi_t
    u_bottom: np.ndarray
    inverse_top: np.ndarray  # (k,): 1 / w = 1 / (u / sigma^2) (Gaussian costs)
    inverse_bottom: np.ndarray
    half_square: np.ndarray  # (k, K - k): 0.5 (theta_i - theta_j)^2
    cost: np.ndarray  # (k, K - k)
    row_best: np.ndarray  # (k,): each cost row's first minimum (or a lower bound when stale)
    row_second: np.ndarray  # (k,): the smallest value of its other columns
    row_arg: np.ndarray  # (k,) int64
    stale: np.ndarray  # (k,) bool

    @classmethod
    def empty(cls, k: int, n_bottom: int) -> "TrackingWork":
        top, bottom, grid = (lambda: np.empty(k)), (lambda: np.empty(n_bottom)), (lambda: np.empty((k, n_bottom)))
        return cls(top(), bottom(), top(), bottom(), top(), bottom(), top(), bottom(), top(), bottom(), grid(),
                   grid(), top(), top(), np.empty(k, dtype=np.int64), np.zeros(k, dtype=np.bool_))


@inlined_kernel
def row_minima(work, i):
    """The first minimum of cost row ``i`` (strictly smaller than +inf; column 0 when there is none) and the
    smallest value of its other columns (+inf when there is none); the row is no longer stale."""
    best = np.inf
    second = np.inf
    arg = 0
    for j in range(work.cost.shape[1]):
        value = work.cost[i, j]
        if value < best:
            second = best
            best, arg = value, j
        elif value < second:
            second = value
    work.row_best[i] = best
    work.row_arg[i] = arg
    work.row_second[i] = second
    work.stale[i] = False


@inlined_kernel
def gaussian_costs(work, i):
    """Cost row ``i``: 0.5 gap^2 / (1/w_i + 1/w_j)."""
    inverse_i = work.inverse_top[i]
    for j in range(work.cost.shape[1]):
        work.cost[i, j] = work.half_square[i, j] / (inverse_i + work.inverse_bottom[j])


@inlined_kernel
def first_minimal_row(work):
    """The first row of smallest entry whose entry is its exact minimum (stale rows rescanned): the first minimal
    pair in row-major order is at this row's first minimum."""
    while True:
        best = np.inf
        best_i = 0
        for i in range(work.row_best.shape[0]):
            if work.row_best[i] < best:
                best, best_i = work.row_best[i], i
        if not work.stale[best_i]:
            return best_i
        row_minima(work, best_i)


@kernel
def sampling_share(psi_i, psi_j, scaled_divergence, pair_cost):
    """h_{i;j} = psi_i (d_i / phi_i) / C_ij (``scaled_divergence`` = d_i / phi_i), with its limits at zero cost, as
    :func:`allocopt.topk.problem.sampling_function_top` (not clipped)."""
    if pair_cost > 0:
        return psi_i * scaled_divergence / pair_cost
    if psi_i > 0:
        return 0.5 if psi_j > 0 else 0.0
    return 1.0 if psi_j > 0 else 0.5


@inlined_kernel
def gaussian_share(theta_i, theta_j, work, best_i, best_j):
    """h_{i;j} at the chosen pair: pair_terms with w = u * (1 / sigma^2) (the Gaussian unit_confidence_pair), then
    sampling_function_top, its limits at zero cost, clipped to [0, 1]."""
    psi_i, psi_j = work.u_top[best_i], work.u_bottom[best_j]
    inverse_i, inverse_j = work.precision_top[best_i], work.precision_bottom[best_j]
    w_i, w_j = psi_i * inverse_i, psi_j * inverse_j
    total = w_i + w_j
    if total <= 0:
        share_i = 0.5
        share_j = 0.5
    else:
        share_i = w_i / total
        share_j = w_j / total
    gap = theta_i - theta_j
    spread_i, spread_j = share_j * gap, -share_i * gap
    divergence_i = 0.5 * spread_i * spread_i
    divergence_j = 0.5 * spread_j * spread_j
    pair_cost = w_i * divergence_i + w_j * divergence_j
    return min(max(sampling_share(psi_i, psi_j, divergence_i * inverse_i, pair_cost), 0.0), 1.0)


@inlined_kernel
def gaussian_update(work, best_i, best_j):
    """After u_i and u_j grew: cost row ``best_i`` and column ``best_j`` again. Costs only grow (u grows, IEEE
    division and addition are monotone), so a row other than ``best_i`` whose minimum was at ``best_j`` keeps it
    while the new cost there is below the row's second value, and is otherwise stale (its entry a lower bound)."""
    work.inverse_top[best_i] = 1.0 / (work.u_top[best_i] / work.variance_top[best_i])
    work.inverse_bottom[best_j] = 1.0 / (work.u_bottom[best_j] / work.variance_bottom[best_j])
    gaussian_costs(work, best_i)
    row_minima(work, best_i)
    inverse_j = work.inverse_bottom[best_j]
    for i in range(work.cost.shape[0]):
        if i != best_i:
            value = work.half_square[i, best_j] / (work.inverse_top[i] + inverse_j)
            work.cost[i, best_j] = value
            if not work.stale[i] and work.row_arg[i] == best_j:
                if value < work.row_second[i]:  # still the row's unique, so first, minimum
                    work.row_best[i] = value
                else:
                    work.stale[i] = True
                    work.row_best[i] = work.row_second[i]


@kernel
def tracking_start(theta, dispersion, top, bottom, work):
    """The iterates at the uniform allocation, the means and dispersions in top/bottom order."""
    k, n_bottom = top.shape[0], bottom.shape[0]
    n_arms = k + n_bottom
    for i in range(k):
        work.theta_top[i] = theta[top[i]]
        work.variance_top[i] = dispersion[top[i]]
        work.precision_top[i] = 1.0 / work.variance_top[i]
        work.u_top[i] = 1.0 / n_arms
    for j in range(n_bottom):
        work.theta_bottom[j] = theta[bottom[j]]
        work.variance_bottom[j] = dispersion[bottom[j]]
        work.precision_bottom[j] = 1.0 / work.variance_bottom[j]
        work.u_bottom[j] = 1.0 / n_arms


@kernel
def tracking_answer(top, bottom, iterations, work, psi):
    """psi_N = u_N / N (psi_0, uniform, when no iteration ran) in arm order."""
    norm = iterations if iterations > 0 else 1
    for i in range(top.shape[0]):
        psi[top[i]] = work.u_top[i] / norm
    for j in range(bottom.shape[0]):
        psi[bottom[j]] = work.u_bottom[j] / norm


@kernel
def gaussian_tracking(theta, dispersion, top, bottom, iterations, work, psi):
    """KKT-Tracking on Gaussian arms: the operations of :class:`~allocopt.topk.tracking.TrackingIterations` in the
    same order, on the unnormalised iterates, recomputing only the costs of the chosen pair's row and column."""
    k, n_bottom = top.shape[0], bottom.shape[0]
    tracking_start(theta, dispersion, top, bottom, work)
    for i in range(k):
        for j in range(n_bottom):
            gap = work.theta_top[i] - work.theta_bottom[j]
            work.half_square[i, j] = 0.5 * (gap * gap)
    for t in range(1, iterations + 1):
        if t <= 2:  # psi_0 (t = 1), and u_1 after the reset of u_0 to 0 (t = 2): every cost
            for i in range(k):
                work.inverse_top[i] = 1.0 / (work.u_top[i] / work.variance_top[i])
            for j in range(n_bottom):
                work.inverse_bottom[j] = 1.0 / (work.u_bottom[j] / work.variance_bottom[j])
            for i in range(k):
                gaussian_costs(work, i)
                row_minima(work, i)
        best_i = first_minimal_row(work)
        best_j = work.row_arg[best_i]
        h_top = gaussian_share(work.theta_top[best_i], work.theta_bottom[best_j], work, best_i, best_j)
        if t == 1:  # u_0 = 0: psi_0 only chose the first pair
            work.u_top[:] = 0.0
            work.u_bottom[:] = 0.0
        work.u_top[best_i] += h_top
        work.u_bottom[best_j] += 1.0 - h_top
        if t >= 2:  # (t = 1: every cost at the next iteration)
            gaussian_update(work, best_i, best_j)
    tracking_answer(top, bottom, iterations, work, psi)


@kernel
def family_costs(code, work, best_i, best_j, every):
    """The cost grid at w = u / phi (the families' pair kernel ``code``): every entry when ``every``, otherwise
    row ``best_i`` and column ``best_j`` only (one call per iteration: a call per entry would pass ``work``'s
    arrays, and their reference counts, each time)."""
    k, n_bottom = work.cost.shape
    for i in range(k):
        w_i = work.u_top[i] / work.variance_top[i]
        for j in range(n_bottom):
            if every or i == best_i or j == best_j:
                cost, _, _ = _compiled_families.weighted_pair(code, work.theta_top[i], work.theta_bottom[j], w_i,
                                                              work.u_bottom[j] / work.variance_bottom[j])
                work.cost[i, j] = cost


@kernel
def family_minimal_pair(work):
    """np.argmin's pair of the cost grid (the first NaN if there is one; (0, 0) when every cost is +inf)."""
    k, n_bottom = work.cost.shape
    best = np.inf
    best_i = 0
    best_j = 0
    for i in range(k):
        for j in range(n_bottom):
            cost = work.cost[i, j]
            if cost != cost:
                return i, j
            if cost < best:
                best, best_i, best_j = cost, i, j
    return best_i, best_j


@kernel
def family_tracking(code, theta, dispersion, top, bottom, iterations, work, psi):
    """KKT-Tracking (the operations of :class:`~allocopt.topk.tracking.TrackingIterations` in the same order, on
    the unnormalised iterates) with the families' compiled pair kernel number ``code``. An iteration moves only
    u_i and u_j of its pair, so the grid ``work.cost`` keeps the other costs, each computed by the same call on
    the same operands as a full recomputation would (no rounding changes)."""
    tracking_start(theta, dispersion, top, bottom, work)
    for t in range(1, iterations + 1):
        if t <= 2:  # psi_0 (t = 1), and u_1 after the reset of u_0 to 0 (t = 2): every cost
            family_costs(code, work, 0, 0, True)
        best_i, best_j = family_minimal_pair(work)
        # the chosen pair with w = u * (1 / phi) (TrackingIterations.step)
        psi_i, psi_j = work.u_top[best_i], work.u_bottom[best_j]
        inverse_i, inverse_j = 1.0 / work.variance_top[best_i], 1.0 / work.variance_bottom[best_j]
        pair_cost, divergence_i, _ = _compiled_families.weighted_pair(
            code, work.theta_top[best_i], work.theta_bottom[best_j], psi_i * inverse_i, psi_j * inverse_j)
        # sampling_function_top: psi_i dC/dpsi_i / C, its limits at zero cost, clipped to [0, 1] (NaN kept)
        h_top = sampling_share(psi_i, psi_j, divergence_i * inverse_i, pair_cost)
        if h_top == h_top:
            h_top = min(max(h_top, 0.0), 1.0)
        if t == 1:  # u_0 = 0: psi_0 only chose the first pair
            work.u_top[:] = 0.0
            work.u_bottom[:] = 0.0
        work.u_top[best_i] += h_top
        work.u_bottom[best_j] += 1.0 - h_top
        if t >= 2:  # only the chosen pair's row and column moved (t = 1: every cost at the next iteration)
            family_costs(code, work, best_i, best_j, False)
    tracking_answer(top, bottom, iterations, work, psi)


register_policy("dt-ts", DTTS)
