r"""Thompson sampling with direct tracking, DT-TS (Wang, Yang, You 2022, Appendix C.2, Algorithm 4).

At step :math:`t` (pulls so far), with counts :math:`N`:

1. sample :math:`\tilde\theta_t \sim \pi_t` (the posterior, :mod:`allocopt.algorithms.statistics`);
2. :math:`\psi_t \leftarrow \mathrm{Solver}(\tilde\theta_t)`, the top-k allocation of the sampled instance;
3. pull :math:`\arg\max_a\ t\,\psi_{t,a} - N_a` (ties broken uniformly at random).

Solvers
    * ``"kkt-tracking"`` (default, as in the paper's experiments, Appendix D): ``iterations`` = 100 iterations
      of KKT-Tracking (Algorithm 3) from the uniform allocation, run for all active replications at once by the
      kernel that :func:`~allocopt.solve_topk` (method ``"kkt-tracking"``) also runs
      (:func:`allocopt.topk._tracking.kkt_tracking_batch`; no certificate, no early stop). Its cost is
      ``iterations`` evaluations of the :math:`k(K-k)` pair costs per replication and per step. For Gaussian
      arms a compiled twin of that kernel runs instead
      (:func:`allocopt.algorithms._compiled.gaussian_kkt_tracking`, equal bit for bit), and for the other
      built-in families (every family whose :meth:`~allocopt.families.ExponentialFamily.compiled_pair` gives
      a kernel) the compiled twin :func:`allocopt.algorithms._compiled_family_tracking.family_kkt_tracking`.
    * ``"exact"``: the exact certified solver, one :func:`allocopt.solve_topk_batch` call per step for all
      active replications (the rows do not depend on each other, so one run and a batch choose the same arms).

    Measured costs per replication-step are in the engine's documentation (docs/algorithms.md).

Compiled run loop
    A batched fixed-confidence run on Gaussian arms with KKT-Tracking, stopped by the Chernoff statistic with a
    built-in threshold, runs in :func:`allocopt.algorithms._compiled_dt_ts.run_dt_ts_rows` (the engine's
    ``compiled_glr_rows`` hook): the same steps as :meth:`DTTS.select_batch` and the engine's numpy loop, with
    the same records and diagnostics bit for bit, without the per-step Python and numpy calls around the
    tracking kernel.

Degenerate samples
    A posterior sample can tie across the top-k boundary (samples clipped to the edge of a bounded mean
    domain, for example two Bernoulli samples rounded to the same value next to 1); the allocation problem has
    no unique top-k set there, and a solver can also fail or return a non-finite allocation. The rule then keeps
    its previous allocation (uniform before the first solve) and counts a fallback: the result reports
    ``solver_fallbacks`` and ``solver_calls`` per run, as :class:`~allocopt.algorithms.TrackAndStop` does.

Each step consumes K + 1 uniforms: K for the posterior sample, one for the tie-break of the arg max.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._rng import random_candidate
from .._validation import as_choice, as_int
from ..topk.tracking import kkt_tracking_batch
from ._compiled import compiled_enabled, gaussian_kkt_tracking
from ._compiled_family_tracking import family_kkt_tracking, tracking_pair_kernel
from .protocol import RuleContext, RunView, register_policy
from .statistics import posterior_sample, top_k_order
from .stopping import HeuristicThreshold, TheoreticalThreshold
from .track_and_stop import solve_allocations

__all__ = ["DTTS", "sampled_allocations"]

_SOLVERS = ("kkt-tracking", "exact")


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
    if solver == "kkt-tracking" and context.family.harmonic_costs("confidence") and compiled_enabled():
        if good.size == n_runs:  # every sample has a unique top-k: no row copies
            solved = gaussian_kkt_tracking(theta, context.dispersion, top, bottom, iterations)
            if np.isfinite(solved).all() and (solved >= 0).all():
                return solved, ok
        solved = gaussian_kkt_tracking(theta[good], context.dispersion, top[good], bottom[good], iterations)
        solved_ok = np.ones(good.size, dtype=bool)
    elif solver == "kkt-tracking" and tracking_pair_kernel(context.family) is not None:
        compiled = family_kkt_tracking(context.family, theta[good], context.dispersion, top[good], bottom[good],
                                       iterations)
        assert compiled is not None  # (tracking_pair_kernel said the kernel exists)
        solved = compiled
        solved_ok = np.ones(good.size, dtype=bool)
    elif solver == "kkt-tracking":
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
    name = "dt-ts"
    uses_glr = False

    diagnostic_names = ("solver_fallbacks", "solver_calls")

    def __post_init__(self):
        as_choice(self.solver, "DTTS", "solver", _SOLVERS)
        as_int(self.iterations, "DTTS", "iterations", low=1)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return context.n_arms + 1

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {"psi": np.full((n_runs, context.n_arms), 1.0 / context.n_arms),
                "solver_fallbacks": np.zeros((n_runs, 1), dtype=np.int64),
                "solver_calls": np.zeros((n_runs, 1), dtype=np.int64)}

    def diagnostics(self, state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"solver_fallbacks": state["solver_fallbacks"][:, 0], "solver_calls": state["solver_calls"][:, 0]}

    def compiled_glr_rows(self, context: RuleContext, checkpoints: np.ndarray, threshold, max_samples: int,
                          counts: np.ndarray, sums: np.ndarray, t: np.ndarray, rewards, policy_generators):
        """The engine's hook for a batch stopped by the Chernoff statistic: Gaussian arms, KKT-Tracking, a built-in
        threshold and no budget through :func:`~allocopt.algorithms._compiled_dt_ts.run_dt_ts_rows` (None
        otherwise, or for a subclass, whose steps may differ)."""
        from ._compiled_dt_ts import run_dt_ts_rows

        if (type(self) is not DTTS or self.solver != "kkt-tracking" or context.budget is not None
                or context.family.name != "gaussian" or not context.family.harmonic_costs("confidence")
                or type(threshold) not in (HeuristicThreshold, TheoreticalThreshold)
                or np.shape(context.dispersion) != (context.n_arms,)):
            return None
        return run_dt_ts_rows(context.k, context.dispersion, self.iterations, checkpoints, threshold, max_samples,
                              counts, sums, t, rewards, policy_generators)

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
        lag = view.t[:, None] * state["psi"] - view.counts
        return random_candidate(lag == lag.max(axis=1, keepdims=True), uniforms[:, n_arms])


register_policy("dt-ts", DTTS)
