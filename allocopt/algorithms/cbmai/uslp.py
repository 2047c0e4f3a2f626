"""USLP: uniform sampling then the empirical linear program (the baseline of Section 5).

Each unknown arm is pulled ``floor(N / K0)`` times (the paper writes ``floor(N / K)`` with ``K0 = K``); the
empirical LP (4)-(5) is solved by enumerating its bases and its optimal basis is returned (the empty set
when the empirical LP is infeasible). When several bases tie for the optimum (a degenerate empirical
optimum, possible with known arms), one of them is chosen uniformly at random.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..._rng import RandomLike, as_generator, random_candidate
from ...cbmai.bases import VALUE_TOL, basis_layout, evaluate_bases
from ...cbmai.problem import CBMAIProblem
from ._common import (CBMAIRunResult, RunBatch, check_budget, check_noise, check_problem,
                            empirical_matrices, single_run_result)

__all__ = ["uslp", "uslp_batch"]


def uslp_batch(problem: CBMAIProblem, budget: int, generators: Sequence[np.random.Generator], *,
               sigma_r: float = 1.0, sigma_c: float = 0.5) -> RunBatch:
    """Run USLP once per generator, vectorised (same output type as :func:`~allocopt.algorithms.cbmai.sfsr.sfsr_batch`;
    ``elimination_order`` has no columns)."""
    n_costs, n_unknown, n_runs = problem.n_costs, problem.n_unknown, len(generators)
    pulls_per_arm = budget // n_unknown
    normals = np.stack([generator.standard_normal((n_costs + 1, n_unknown)) for generator in generators])
    tie_keys = np.array([generator.random() for generator in generators])
    means = np.concatenate([problem.rewards[None, :n_unknown], problem.costs[:, :n_unknown]])
    noise_scale = np.array([sigma_r] + [sigma_c] * n_costs)[:, None]
    sample_means = means + noise_scale * normals / np.sqrt(pulls_per_arm)
    matrix, objective = empirical_matrices(problem, sample_means[:, 0], sample_means[:, 1:])
    _, rhs, _ = problem.standard_form()
    layout = basis_layout(problem.n_columns, n_costs + 1)
    evaluated = evaluate_bases(matrix, objective, rhs[:-1], layout, diagnostics=False)
    values = np.where(evaluated.feasible, evaluated.values, -np.inf)
    best = np.max(values, axis=-1, initial=-np.inf)
    feasible = np.isfinite(best)
    tolerance = VALUE_TOL * np.maximum(1.0, np.abs(np.where(feasible, best, 0.0)))
    index = random_candidate(values >= (best - tolerance)[:, None], tie_keys)
    supports = np.where(feasible[:, None], layout.combos[index], -1)
    pulls = np.zeros((n_runs, problem.n_arms), dtype=np.int64)
    pulls[:, :n_unknown] = pulls_per_arm
    return RunBatch(supports, pulls, np.zeros((n_runs, 0), dtype=np.int64), matrix, objective)


def uslp(
    problem: CBMAIProblem,
    budget: int,
    sigma_r: float = 1.0,
    sigma_c: float = 0.5,
    rng: RandomLike = None,
) -> CBMAIRunResult:
    """One run of USLP on a simulated Gaussian instance.

    Parameters
    ----------
    problem : CBMAIProblem
    budget : int
        ``N >= n_unknown``; each unknown arm is pulled ``floor(N / n_unknown)`` times.
    sigma_r, sigma_c : float
        Standard deviations of the simulated rewards and costs (``> 0``).
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    CBMAIRunResult
        ``support`` is the optimal basis of the empirical LP (empty when it is infeasible).

    Examples
    --------
    >>> import allocopt
    >>> from allocopt.algorithms import uslp
    >>> problem = allocopt.CBMAIProblem([0.9, 0.5, 0.2, 0.1], [[1.5, 0.5, 0.2, 0.9]], [1.0])
    >>> run = uslp(problem, budget=4000, rng=1)
    >>> run.support, run.pulls.tolist()
    ((0, 1), [1000, 1000, 1000, 1000])
    """
    func = "uslp"
    problem = check_problem(problem, func)
    sigma_r, sigma_c = check_noise(sigma_r, sigma_c, func)
    budget = check_budget(problem, budget, func, minimum=problem.n_unknown)
    generator = as_generator(rng, func)
    start = time.perf_counter()
    batch = uslp_batch(problem, budget, [generator], sigma_r=sigma_r, sigma_c=sigma_c)
    return single_run_result("uslp", problem, budget, batch, time.perf_counter() - start)
