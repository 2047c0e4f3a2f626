"""SFSR and SFSR-L (Algorithm 1 of Tang, Jain, Nayyar, Nuzzo) with the budget schedule (7).

Budget schedule (7)
    ``Psi(K0, L) = sum_{j=1}^{K0} 1 / max(2, j - L)``, ``n_0 = 0``,
    ``n_k = ceil((N - K0) / (Psi(K0, L) (K + 1 - k)))`` and ``T_k = n_k - n_{k-1}`` for ``k = 1..K-1``.
    The ceilings are computed in exact rational arithmetic. Proposition 1: the total number of pulls never
    exceeds ``N``.

Algorithm 1
    ``X`` starts as all ``K + L`` columns. In round ``k`` every unknown arm still in ``X`` is pulled ``T_k``
    times, every column of ``X`` is scored from the empirical means (IV (6) for SFSR, Lagrangian (8) for
    SFSR-L), the run stops with "infeasible" when every score is ``-inf``, and otherwise the lowest score is
    eliminated, ties broken uniformly at random. After ``K - 1`` rounds ``X`` has ``L + 1`` columns.
    With ``K = 1`` there is no round: the arm receives the whole budget and the run answers "infeasible" when
    every score of ``X`` is ``-inf`` (else ``X``), so that SFSR agrees with USLP and the exact solver.

Vectorisation
    Runs are simulated in batches: each run draws, from its own generator, one standard normal per unknown
    arm, observation type and round (the sum of ``T_k`` Gaussian observations is Gaussian, so the round sums
    are drawn exactly) and one uniform tie-breaking key per round (:func:`allocopt._rng.random_candidate` picks
    the eliminated column among the tied lowest scores with it). Every round then evaluates all
    bases of all runs of the batch in one numpy pass (:func:`allocopt.cbmai.bases.evaluate_bases`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..._rng import RandomLike, as_generator, random_candidate
from ..._validation import as_bool, as_choice, as_int
from ...cbmai.bases import BasisValues, basis_layout, evaluate_bases, select_optimal_bases
from ...cbmai.problem import CBMAIProblem
from ...cbmai.scores import iv_scores_from_bases
from ._common import (CBMAIRunResult, RunBatch, check_budget, check_noise, check_problem,
                            empirical_matrices, single_run_result)

__all__ = ["SFSR_SCORES", "BudgetSchedule", "sfsr_schedule", "sfsr", "sfsr_batch"]

SFSR_SCORES = ("iv", "lagrangian")


@dataclass(frozen=True)
class BudgetSchedule:
    """The budget schedule (7).

    Attributes
    ----------
    psi : float
        ``Psi(K0, L)``.
    cumulative : ndarray of int, shape (K-1,)
        ``n_k``: pulls of each surviving unknown arm after round ``k``.
    per_round : ndarray of int, shape (K-1,)
        ``T_k = n_k - n_{k-1}``.
    """

    psi: float
    cumulative: np.ndarray
    per_round: np.ndarray


def _psi(n_unknown: int, n_costs: int) -> Fraction:
    return sum((Fraction(1, max(2, j - n_costs)) for j in range(1, n_unknown + 1)), Fraction(0))


def sfsr_schedule(n_arms: int, n_unknown: int, n_costs: int, budget: int) -> BudgetSchedule:
    """The schedule (7) for ``K = n_arms``, ``K0 = n_unknown``, ``L = n_costs`` and budget ``N``.

    Examples
    --------
    >>> schedule = sfsr_schedule(4, 4, 1, 100)
    >>> float(schedule.psi), schedule.cumulative.tolist(), schedule.per_round.tolist()
    (1.8333333333333333, [14, 18, 27], [14, 4, 9])
    """
    func = "sfsr_schedule"
    n_arms = as_int(n_arms, func, "n_arms", low=1)
    n_unknown = as_int(n_unknown, func, "n_unknown", low=1, high=n_arms)
    n_costs = as_int(n_costs, func, "n_costs", low=1)
    budget = as_int(budget, func, "budget", low=n_unknown + 1,
                    requirement=f"an integer > n_unknown = {n_unknown} (every unknown arm is pulled in round 1)")
    psi = _psi(n_unknown, n_costs)
    rounds = [-((-(budget - n_unknown)) // (psi * (n_arms + 1 - k))) for k in range(1, n_arms)]
    cumulative = np.array([int(value) for value in rounds], dtype=np.int64)
    per_round = np.diff(np.concatenate([[0], cumulative]))
    for array in (cumulative, per_round):
        array.setflags(write=False)
    return BudgetSchedule(float(psi), cumulative, per_round)


def _round_scores(columns: np.ndarray, objective: np.ndarray, bounds: np.ndarray, score: str, strict: bool
                  ) -> np.ndarray:
    """Scores of every column of each run's remaining set (shape (R, n)).

    A set whose every basis is singular (fewer than ``L+1`` independent columns: possible once its slacks are
    gone, with identical known arms) still has the vertices of its LP; those runs are scored again with every
    slack column appended as a pinned column (zero in a feasible BFS; see :mod:`allocopt.cbmai.bases`)."""
    scores, evaluated = _scores_of(columns, objective, bounds, score, strict, None)
    deficient = ~np.any(evaluated.invertible, axis=-1)
    if np.any(deficient):
        n_costs, n_columns = columns.shape[-2] - 1, columns.shape[-1]
        slack_columns = np.zeros((int(deficient.sum()), n_costs + 1, n_costs))
        slack_columns[:, np.arange(n_costs), np.arange(n_costs)] = 1.0
        extended = np.concatenate([columns[deficient], slack_columns], axis=-1)
        extended_objective = np.concatenate([objective[deficient], np.zeros((slack_columns.shape[0], n_costs))],
                                            axis=-1)
        pinned = np.arange(n_columns + n_costs) >= n_columns
        again, _ = _scores_of(extended, extended_objective, bounds, score, strict, pinned)
        scores[deficient] = again[:, :n_columns]
    return scores


def _scores_of(columns: np.ndarray, objective: np.ndarray, bounds: np.ndarray, score: str, strict: bool,
               pinned: np.ndarray | None) -> tuple[np.ndarray, BasisValues]:
    layout = basis_layout(columns.shape[-1], columns.shape[-2])
    evaluated = evaluate_bases(columns, objective, bounds, layout, pinned=pinned,
                               diagnostics=score == "iv" and strict)
    if score == "iv":
        return iv_scores_from_bases(evaluated, layout, strict=strict), evaluated
    optimum = select_optimal_bases(columns, objective, evaluated, layout, pinned=pinned)
    scores = np.negative(optimum.reduced_costs)
    return np.where(np.isfinite(optimum.value)[:, None], scores, -np.inf), evaluated


def _single_arm_batch(problem: CBMAIProblem, budget: int, generators: Sequence[np.random.Generator],
                      sigma_r: float, sigma_c: float, score: str, strict: bool) -> RunBatch:
    """``K = 1``: Algorithm 1 has no elimination round and the only candidate answer is ``X`` itself, so the
    whole budget goes to the arm and the run declares the instance infeasible when every score of ``X`` is
    ``-inf`` (the empirical LP is infeasible), as USLP and the exact solver do."""
    n_costs, n_columns, n_runs = problem.n_costs, problem.n_columns, len(generators)
    normals = np.stack([generator.standard_normal((n_costs + 1, 1)) for generator in generators])
    means = np.concatenate([problem.rewards[None, :], problem.costs])[None] + np.array(
        [sigma_r] + [sigma_c] * n_costs)[None, :, None] * normals / np.sqrt(budget)
    matrix, objective = empirical_matrices(problem, means[:, 0], means[:, 1:])
    _, rhs, _ = problem.standard_form()
    scores = _round_scores(matrix, objective, rhs[:-1], score, strict)
    feasible = ~np.all(scores == -np.inf, axis=-1)
    supports = np.where(feasible[:, None], np.arange(n_columns)[None, :], -1)
    pulls = np.full((n_runs, 1), budget, dtype=np.int64)
    return RunBatch(supports, pulls, np.zeros((n_runs, 0), dtype=np.int64), matrix, objective)


def sfsr_batch(problem: CBMAIProblem, budget: int, generators: Sequence[np.random.Generator], *,
               sigma_r: float = 1.0, sigma_c: float = 0.5, score: str = "iv", strict: bool = False) -> RunBatch:
    """Run SFSR (``score="iv"``) or SFSR-L (``score="lagrangian"``) once per generator, vectorised.

    Run ``i`` depends only on ``generators[i]`` (and equals :func:`sfsr` called with that generator).
    Arguments are validated by :func:`sfsr`; this is the building block of the Monte Carlo harness.
    """
    n_arms, n_costs, n_unknown = problem.n_arms, problem.n_costs, problem.n_unknown
    n_columns, n_rounds, n_runs = problem.n_columns, problem.n_arms - 1, len(generators)
    if n_rounds == 0:
        return _single_arm_batch(problem, budget, generators, sigma_r, sigma_c, score, strict)
    schedule = sfsr_schedule(n_arms, n_unknown, n_costs, budget)
    normals = np.stack([generator.standard_normal((n_rounds, n_costs + 1, n_unknown)) for generator in generators])
    tie_keys = np.stack([generator.random(n_rounds) for generator in generators])  # one per round
    matrix, rhs, objective = problem.standard_form()
    unknown_means = np.concatenate([problem.rewards[None, :n_unknown], problem.costs[:, :n_unknown]])
    noise_scale = np.array([sigma_r] + [sigma_c] * n_costs)[:, None]
    remaining = np.tile(np.arange(n_columns), (n_runs, 1))
    alive = np.ones(n_runs, dtype=bool)
    stopped_at = np.full(n_runs, n_rounds, dtype=np.int64)  # rounds played by each run
    elimination = np.full((n_runs, n_rounds), -1, dtype=np.int64)
    eliminated_in = np.full((n_runs, n_columns), n_rounds, dtype=np.int64)  # round (1-based) or n_rounds
    empirical_matrix = np.broadcast_to(matrix, (n_runs,) + matrix.shape).copy()
    empirical_objective = np.broadcast_to(objective, (n_runs,) + objective.shape).copy()
    sums = np.zeros((n_runs, n_costs + 1, n_unknown))
    rows = np.arange(n_runs)
    for round_index in range(n_rounds):
        pulls_so_far = int(schedule.cumulative[round_index])
        new_pulls = int(schedule.per_round[round_index])
        sums += new_pulls * unknown_means + np.sqrt(new_pulls) * noise_scale * normals[:, round_index]
        means = sums / pulls_so_far
        current_matrix, current_objective = empirical_matrices(problem, means[:, 0], means[:, 1:])
        empirical_matrix[alive] = current_matrix[alive]
        empirical_objective[alive] = current_objective[alive]
        columns = np.take_along_axis(current_matrix, remaining[:, None, :], axis=-1)
        scores = _round_scores(columns, np.take_along_axis(current_objective, remaining, axis=-1), rhs[:-1],
                               score, strict)
        infeasible_now = alive & np.all(scores == -np.inf, axis=-1)
        stopped_at[infeasible_now] = round_index + 1
        alive &= ~infeasible_now
        lowest = np.min(scores, axis=-1, keepdims=True)
        position = random_candidate(scores == lowest, tie_keys[:, round_index])
        eliminated = remaining[rows, position]
        elimination[alive, round_index] = eliminated[alive]
        eliminated_in[rows[alive], eliminated[alive]] = round_index + 1
        keep = np.ones(remaining.shape, dtype=bool)
        keep[rows, position] = False
        remaining = remaining[keep].reshape(n_runs, -1)
    pulls = np.zeros((n_runs, n_arms), dtype=np.int64)
    if n_rounds:
        last_round = np.minimum(eliminated_in[:, :n_unknown], stopped_at[:, None])
        pulls[:, :n_unknown] = schedule.cumulative[last_round - 1]
    supports = np.where(alive[:, None], remaining, -1)
    return RunBatch(supports, pulls, elimination, empirical_matrix, empirical_objective)


def sfsr(
    problem: CBMAIProblem,
    budget: int,
    sigma_r: float = 1.0,
    sigma_c: float = 0.5,
    score: str = "iv",
    rng: RandomLike = None,
    *,
    strict: bool = False,
) -> CBMAIRunResult:
    """One run of SFSR (IV scores) or SFSR-L (Lagrangian scores) on a simulated Gaussian instance.

    Parameters
    ----------
    problem : CBMAIProblem
        True means; arms ``n_unknown..K-1`` are known to the algorithm.
    budget : int
        ``N``, larger than ``n_unknown``.
    sigma_r, sigma_c : float
        Standard deviations of the simulated rewards and costs (``> 0``).
    score : {"iv", "lagrangian"}
        Elimination score: (6) for SFSR, (8) for SFSR-L.
    rng : None, int, SeedSequence or Generator
    strict : bool, default False
        Use the strict IV variant (only BFSs with ``x_a > 0``); ignored for ``score="lagrangian"``.

    Returns
    -------
    CBMAIRunResult
        ``support`` is the set ``X`` left after ``K - 1`` rounds (empty after an infeasibility verdict);
        ``pulls`` never sum to more than ``budget`` (Proposition 1).

    Examples
    --------
    >>> import allocopt
    >>> from allocopt.algorithms import sfsr
    >>> problem = allocopt.CBMAIProblem([0.9, 0.5, 0.2, 0.1], [[1.5, 0.5, 0.2, 0.9]], [1.0])
    >>> allocopt.solve_cbmai(problem).support
    (0, 1)
    >>> run = sfsr(problem, budget=4000, rng=1)
    >>> run.support, int(run.pulls.sum()) <= 4000
    ((0, 1), True)
    """
    func = "sfsr"
    problem = check_problem(problem, func)
    sigma_r, sigma_c = check_noise(sigma_r, sigma_c, func)
    score = as_choice(score, func, "score", SFSR_SCORES)
    strict = as_bool(strict, func, "strict")
    budget = check_budget(problem, budget, func, minimum=problem.n_unknown + 1)
    generator = as_generator(rng, func)
    start = time.perf_counter()
    batch = sfsr_batch(problem, budget, [generator], sigma_r=sigma_r, sigma_c=sigma_c, score=score, strict=strict)
    return single_run_result("sfsr" if score == "iv" else "sfsr-l", problem, budget, batch,
                             time.perf_counter() - start)
