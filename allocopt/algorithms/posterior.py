r"""Posterior convergence for best-arm identification (k = 1; Wang, Yang, You 2022, Section 2 and Appendix D).

With independent priors the posterior of :math:`\theta` after :math:`n` pulls is a product
:math:`\pi_n = \prod_a \pi_{n,a}` (Gaussian arms: flat prior, :math:`\mathcal N(S_a/N_a, \sigma_a^2/N_a)`;
Bernoulli arms: Beta(1, 1) prior, :math:`\mathrm{Beta}(1 + S_a, 1 + N_a - S_a)`; see
:mod:`allocopt.algorithms.engine.statistics`). The posterior probability that arm :math:`b` is the best is the
one-dimensional integral of the paper's Appendix D,

.. math::
    P_n = \int \pi_{n,b}(x) \prod_{a \ne b} F_{n,a}(x)\, dx, \qquad
    1 - P_n = \int \pi_{n,b}(x) \Big[1 - \prod_{a \ne b} F_{n,a}(x)\Big] dx,

with :math:`F_{n,a}` the posterior distribution functions. allocopt computes the probability of error
:math:`1 - P_n` directly (so that it keeps its relative precision far below :math:`10^{-16}`, where the paper
compares it with :math:`e^{-\Gamma^* n}`):

* in the standardised variable :math:`z = (x - m_b)/s_b` of arm :math:`b`'s posterior (mean :math:`m_b`,
  standard deviation :math:`s_b`), on the window where the integrand lives: each competitor :math:`a`
  contributes :math:`\pi_b(x)(1 - F_a(x))`, a bump around :math:`z_a = -(m_b - m_a)s_b/(s_a^2 + s_b^2)` of width
  :math:`w_a = s_a/\sqrt{s_a^2 + s_b^2}` (exact for Gaussian arms in the tails); the window is
  :math:`[\min(-12, \min_a z_a - 12 w_a),\ \max_a z_a + 12 w_a]`, clipped to :math:`[-38, 38]` (beyond,
  :math:`\varphi(z) < 10^{-313}`) and to the mean domain;
* by composite Gauss-Legendre quadrature (16 panels of 8 nodes; doubling them changes the value by less than
  :math:`10^{-9}` relative on random states), vectorised over runs;
* with the integrand in logarithms: :math:`1 - \prod_a F_a = -\mathrm{expm1}(\sum_a \log F_a)`, with
  :math:`\log F_a` from ``log_ndtr`` (Gaussian) or from the upper tail ``log1p(-betaincc)`` near 1 (Bernoulli).

The tests check it against Monte Carlo, against the closed form of two Gaussian arms
(:math:`\Phi(-(m_b - m_a)/\sqrt{s_a^2 + s_b^2})`) and against adaptive quadrature.

:func:`posterior_convergence` runs a sampling rule and records, in every run, the first number of pulls at
which :math:`P_n` exceeds each level :math:`c` (Figures 10-11 of the paper); :func:`posterior_error_paths`
records :math:`1 - P_n` along whole runs (Figure 12) with :math:`\Gamma^*` for the reference rate
:math:`e^{-\Gamma^* n}`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from .._result import Result
from .._rng import RandomLike, root_entropy
from .._validation import as_bool, as_float_vector, as_int, fail
from ..simulate import check_n_jobs
from ..topk.problem import TopKProblem
from .engine.run import empirical_split, run_replications
from .identify import _check_problem, _check_rule, _run
from .engine.protocol import RuleContext, get_policy, policy_name, rule_traits
from .engine.statistics import posterior_parameters
from .engine.stopping import GLRStatistic, glr_statistic

__all__ = ["posterior_error_probability", "PosteriorProbability", "posterior_convergence",
           "PosteriorConvergenceResult", "PosteriorConvergenceRow", "posterior_error_paths", "PosteriorPaths",
           "POSTERIOR_FAMILIES"]

POSTERIOR_FAMILIES = ("gaussian", "bernoulli")
_PANELS = 16
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(8)
_Z_LIMIT = 38.0
_WIDTHS = 12.0


def _moments(family_name: str, parameters: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if family_name == "gaussian":
        return parameters["loc"], parameters["scale"]
    a, b = parameters["a"], parameters["b"]
    total = a + b
    return a / total, np.sqrt(a * b / (total * total * (total + 1.0)))


def _log_cdf(family_name: str, parameters: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """log F_a(x) for every arm (parameters broadcast against x)."""
    if family_name == "gaussian":
        return special.log_ndtr((x - parameters["loc"]) / parameters["scale"])
    a, b = np.broadcast_arrays(parameters["a"], parameters["b"], x)[:2]
    inside = np.broadcast_to(np.clip(x, 0.0, 1.0), a.shape)
    lower = special.betainc(a, b, inside)
    with np.errstate(divide="ignore"):
        result = np.log(lower)
        near_one = lower >= 0.5  # the upper tail keeps log F accurate next to 1
        result[near_one] = np.log1p(-special.betaincc(a[near_one], b[near_one], inside[near_one]))
    return result


def _log_density(family_name: str, parameters: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    if family_name == "gaussian":
        z = (x - parameters["loc"]) / parameters["scale"]
        return -0.5 * z * z - 0.5 * math.log(2.0 * math.pi) - np.log(parameters["scale"])
    a, b = parameters["a"], parameters["b"]
    inside = (x > 0.0) & (x < 1.0)
    safe = np.where(inside, x, 0.5)
    value = (a - 1.0) * np.log(safe) + (b - 1.0) * np.log1p(-safe) - special.betaln(a, b)
    return np.where(inside, value, -np.inf)


def posterior_error_probability(family, dispersion: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                                best) -> np.ndarray:
    r""":math:`1 - P_n`: the posterior probability that arm ``best`` is *not* the best (module docstring).

    Parameters
    ----------
    family : ExponentialFamily
        Gaussian (flat prior) or Bernoulli (Beta(1, 1) prior).
    dispersion : ndarray, shape (K,)
    counts, sums : ndarray, shape (K,) or (R, K)
        Pulls (each >= 1) and reward sums of one run or of a batch of runs.
    best : int or ndarray of int, shape () or (R,)

    Returns
    -------
    ndarray, shape () or (R,)

    Examples
    --------
    Two Gaussian arms with posteriors N(1, 1/4) and N(0, 1/4): :math:`\Phi(-1/\sqrt{1/2}) = 0.0786496...`

    >>> from allocopt.families import Gaussian
    >>> value = posterior_error_probability(Gaussian(1.0), np.ones(2), np.array([4, 4]), np.array([4.0, 0.0]), 0)
    >>> round(float(value), 10)
    0.0786496035
    """
    name = family.name
    if name not in POSTERIOR_FAMILIES:
        fail("posterior_error_probability", "family", "gaussian (flat prior) or bernoulli (Beta(1, 1) prior)", name)
    single = np.ndim(counts) == 1
    counts, sums = np.atleast_2d(counts), np.atleast_2d(sums)
    n_rows, n_arms = counts.shape
    best = np.broadcast_to(np.asarray(best, dtype=np.int64), (n_rows,))
    rows = np.arange(n_rows)
    parameters = posterior_parameters(family, np.asarray(dispersion, dtype=float), counts, sums)
    location, scale = _moments(name, parameters)
    loc_best, scale_best = location[rows, best], scale[rows, best]
    others = np.arange(n_arms)[None, :] != best[:, None]
    # the window in z = (x - m_b)/s_b
    spread = scale * scale + scale_best[:, None] ** 2
    centre = -(loc_best[:, None] - location) * scale_best[:, None] / spread
    width = scale / np.sqrt(spread)
    low = np.minimum(-_WIDTHS, np.where(others, centre - _WIDTHS * width, np.inf).min(axis=1))
    high = np.where(others, centre + _WIDTHS * width, -np.inf).max(axis=1)
    if name == "bernoulli":  # the mean domain (0, 1)
        low = np.maximum(low, -loc_best / scale_best)
        high = np.minimum(high, (1.0 - loc_best) / scale_best)
    low = np.maximum(low, -_Z_LIMIT)
    high = np.maximum(np.minimum(high, _Z_LIMIT), low)
    # composite Gauss-Legendre nodes, shape (R, panels * 8)
    edges = np.linspace(0.0, 1.0, _PANELS + 1)
    unit = ((edges[:-1, None] + edges[1:, None]) / 2 + (edges[1:, None] - edges[:-1, None]) / 2 * _NODES).ravel()
    length = high - low
    z = low[:, None] + length[:, None] * unit[None, :]
    weights = (length[:, None] / (2 * _PANELS)) * np.tile(_WEIGHTS, _PANELS)[None, :]
    x = loc_best[:, None] + scale_best[:, None] * z
    arm_parameters = {key: value[:, None, :] for key, value in parameters.items()}
    best_parameters = {key: value[rows, best][:, None] for key, value in parameters.items()}
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        log_cdf = _log_cdf(name, arm_parameters, x[:, :, None])
        log_all = np.where(others[:, None, :], log_cdf, 0.0).sum(axis=2)
        log_error = np.log(-np.expm1(log_all))
        log_integrand = _log_density(name, best_parameters, x) + np.log(scale_best)[:, None] + log_error
        value = (weights * np.exp(log_integrand)).sum(axis=1)
    value = np.where(np.isnan(value), 0.0, np.minimum(value, 1.0))
    return value[0] if single else value


class PosteriorProbability:
    """The engine statistic of posterior-convergence runs: :math:`P_n` of the true best arm (``value``), with
    the empirical top-1 (and the Chernoff pair for rules that read it)."""

    def __init__(self, best: int, chernoff: bool):
        self.best, self.chernoff = int(best), bool(chernoff)

    def __call__(self, family, dispersion, counts, sums, means, k) -> GLRStatistic:
        split = (glr_statistic(family, dispersion, counts, means, k) if self.chernoff
                 else empirical_split(family, dispersion, counts, sums, means, k))
        probability = 1.0 - posterior_error_probability(family, dispersion, counts, sums, self.best)
        return GLRStatistic(probability, split.top, split.bottom, split.pair_top, split.pair_bottom)


def _level_threshold(t, levels):
    """Reach a level when P_n exceeds it."""
    return np.broadcast_to(levels, np.broadcast_shapes(np.shape(t), np.shape(levels)))


@dataclass(frozen=True)
class PosteriorConvergenceRow:
    """One level: mean first time with its standard error over the runs that reached it, their number."""

    level: float
    mean_time: float
    standard_error: float
    reached_fraction: float


@dataclass(frozen=True, kw_only=True)
class PosteriorConvergenceResult(Result):
    """Outcome of :func:`posterior_convergence`.

    Statuses: ``"completed"`` (every run reached every level) and ``"sample_cap_reached"``.

    Attributes
    ----------
    policy : str
    levels : ndarray, shape (n_levels,)
    first_times : ndarray of int, shape (n_runs, n_levels)
        The first number of pulls at which :math:`P_n > c` (the cap where not reached).
    reached : ndarray of bool, shape (n_runs, n_levels)
    pulls : ndarray of int, shape (n_runs, K)
        Counts when the run finished.
    best_arm : int
    entropy, max_samples, n_runs : int
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    policy: str
    levels: np.ndarray
    first_times: np.ndarray
    reached: np.ndarray
    pulls: np.ndarray
    best_arm: int
    entropy: int
    max_samples: int
    n_runs: int

    def summary(self) -> list[PosteriorConvergenceRow]:
        """One row per level (mean over the runs that reached it; NaN if none did)."""
        rows = []
        for index, level in enumerate(self.levels):
            times = self.first_times[self.reached[:, index], index].astype(float)
            mean = float(times.mean()) if times.size else math.nan
            error = float(times.std(ddof=1) / math.sqrt(times.size)) if times.size > 1 else math.nan
            rows.append(PosteriorConvergenceRow(float(level), mean, error, float(times.size / self.n_runs)))
        return rows

    def _dict_extras(self) -> dict[str, Any]:
        return {"summary": [row.__dict__ for row in self.summary()]}


def _check_posterior_problem(problem, rule, func: str) -> TopKProblem:
    problem = _check_problem(problem, func)
    if problem.k != 1:
        fail(func, "problem", "a best-arm problem (k = 1): the posterior probability is that of the best arm",
             problem.k)
    if problem.family.name not in POSTERIOR_FAMILIES:
        fail(func, "problem", "a problem with gaussian or bernoulli arms (the families with the paper's priors)",
             problem.family.name)
    _check_rule(rule, problem, func)
    return problem


def posterior_convergence(problem: TopKProblem, policy: Any, levels: Any = (0.9, 0.99, 0.999), *,
                          n_runs: int = 1, rng: RandomLike = None, max_samples: int = 10**6,
                          n_jobs: int | None = None, progress: bool = False, chunk_size: int | None = None,
                          batched: bool = True) -> PosteriorConvergenceResult:
    r"""The first time the posterior probability of the true best arm exceeds each level, over many runs.

    Parameters
    ----------
    problem : TopKProblem
        True means with k = 1, Gaussian or Bernoulli arms.
    policy : str or sampling rule
    levels : float or sequence of float
        Levels :math:`c` in (0, 1).
    n_runs, rng, max_samples, n_jobs, progress, chunk_size, batched
        As in :func:`~allocopt.algorithms.identify` (``max_samples`` caps each run).

    Returns
    -------
    PosteriorConvergenceResult

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> problem = TopKProblem([1.0, 0.6, 0.5, 0.2], k=1, variance=0.25)
    >>> result = posterior_convergence(problem, "t3c", (0.9, 0.99), n_runs=5, rng=1)
    >>> result.status, bool(np.all(result.first_times[:, 0] <= result.first_times[:, 1]))
    ('completed', True)
    """
    func = "posterior_convergence"
    started = time.perf_counter()
    rule = get_policy(policy, func)
    problem = _check_posterior_problem(problem, rule, func)
    levels_array = as_float_vector(levels, func, "levels") if np.ndim(levels) else as_float_vector([levels], func,
                                                                                                     "levels")
    if np.any((levels_array <= 0) | (levels_array >= 1)):
        fail(func, "levels", "a level or a sequence of levels in the open interval (0, 1)", levels)
    n_runs = as_int(n_runs, func, "n_runs", low=1)
    n_jobs = check_n_jobs(n_jobs, func)
    initial = int(rule_traits(rule).initial_pulls) * problem.n_arms
    max_samples = as_int(max_samples, func, "max_samples", low=initial,
                         requirement=f"an integer >= {initial} (the initial pulls of the K = {problem.n_arms} arms)")
    batched = as_bool(batched, func, "batched")
    progress = as_bool(progress, func, "progress")
    entropy = root_entropy(rng, func)
    best = int(problem.top[0])
    statistic = PosteriorProbability(best, rule_traits(rule).uses_glr)
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion))
    outcomes, _ = _run(problem, rule, entropy=entropy, n_runs=n_runs, context=context, checkpoints=levels_array,
                       mode="confidence", threshold=_level_threshold, max_samples=max_samples, n_jobs=n_jobs,
                       progress=progress, chunk_size=chunk_size, batched=batched, func=func, statistic=statistic)
    reached = outcomes["stopped"]
    name = policy_name(rule)
    complete = bool(reached.all())
    message = (f"{n_runs} runs of {name}: every level reached" if complete else
               f"{n_runs} runs of {name}: {int((~reached).any(axis=1).sum())} reached max_samples = {max_samples} "
               "before every level")
    return PosteriorConvergenceResult(
        status="completed" if complete else "sample_cap_reached", message=message, method=name,
        time=time.perf_counter() - started, policy=name, levels=levels_array, first_times=outcomes["times"],
        reached=reached, pulls=outcomes["pulls"], best_arm=best, entropy=entropy, max_samples=max_samples,
        n_runs=n_runs)


class _PathRecorder(PosteriorProbability):
    """The posterior statistic that also records :math:`1 - P_n` of every run at every step."""

    def __init__(self, best: int, chernoff: bool, n_paths: int):
        super().__init__(best, chernoff)
        self.times: list[np.ndarray] = []
        self.errors: list[np.ndarray] = []

    def __call__(self, family, dispersion, counts, sums, means, k) -> GLRStatistic:
        split = (glr_statistic(family, dispersion, counts, means, k) if self.chernoff
                 else empirical_split(family, dispersion, counts, sums, means, k))
        error = posterior_error_probability(family, dispersion, counts, sums, self.best)
        self.times.append(counts.sum(axis=1))
        self.errors.append(error)
        return GLRStatistic(1.0 - error, split.top, split.bottom, split.pair_top, split.pair_bottom)


@dataclass(frozen=True, kw_only=True)
class PosteriorPaths(Result):
    r"""Sample paths of the posterior probability of error (:func:`posterior_error_paths`).

    Attributes
    ----------
    policy : str
    samples : ndarray of int, shape (n_steps,)
        Numbers of pulls :math:`n` (from K to the horizon).
    error : ndarray, shape (n_paths, n_steps)
        :math:`1 - P_n` of every run (NaN after a block pull skipped ``n``).
    gamma_star : float
        :math:`\Gamma^*` of the problem, for the reference :math:`e^{-\Gamma^* n}`.
    entropy : int
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    policy: str
    samples: np.ndarray
    error: np.ndarray
    gamma_star: float
    entropy: int


def posterior_error_paths(problem: TopKProblem, policy: Any, horizon: int, *, n_paths: int = 1,
                          rng: RandomLike = None) -> PosteriorPaths:
    r""":math:`1 - P_n` along ``n_paths`` runs of ``policy`` up to ``horizon`` pulls (Figure 12 of the paper).

    Run ``i`` is replication ``i`` of the common-random-number streams (the same runs as
    :func:`posterior_convergence` with the same ``rng``).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> problem = TopKProblem([1.0, 0.5, 0.0], k=1, variance=0.25)
    >>> paths = posterior_error_paths(problem, "uniform", 60, n_paths=2, rng=0)
    >>> paths.error.shape, bool(paths.error[:, -1].max() < paths.error[:, 0].max())
    ((2, 58), True)
    """
    func = "posterior_error_paths"
    started = time.perf_counter()
    rule = get_policy(policy, func)
    problem = _check_posterior_problem(problem, rule, func)
    n_paths = as_int(n_paths, func, "n_paths", low=1)
    initial = int(rule_traits(rule).initial_pulls) * problem.n_arms
    horizon = as_int(horizon, func, "horizon", low=initial,
                     requirement=f"an integer >= {initial} (the initial pulls of the K = {problem.n_arms} arms)")
    entropy = root_entropy(rng, func)
    recorder = _PathRecorder(int(problem.top[0]), rule_traits(rule).uses_glr, n_paths)
    context = RuleContext(problem.n_arms, problem.k, problem.family, np.asarray(problem.dispersion))
    run_replications(problem, rule, entropy, np.arange(n_paths), checkpoints=np.array([horizon]), mode="budget",
                     max_samples=horizon, context=context, func=func, statistic=recorder)
    samples = np.arange(initial, horizon + 1)
    error = np.full((n_paths, samples.size), np.nan)
    # the recorder saw the active runs at every step; all runs stay active until the horizon (budget mode)
    for times, values in zip(recorder.times, recorder.errors):
        if times.size == n_paths:
            error[np.arange(n_paths), times - initial] = values
    from ..topk.solve import solve_topk

    gamma_star = float(solve_topk(problem, method="exact").value)
    name = policy_name(rule)
    return PosteriorPaths(status="completed", message=f"{n_paths} paths of {name} up to n = {horizon}", method=name,
                          time=time.perf_counter() - started, policy=name, samples=samples, error=error,
                          gamma_star=gamma_star, entropy=entropy)
