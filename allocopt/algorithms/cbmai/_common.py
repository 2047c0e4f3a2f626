"""Pieces shared by the CBMAI algorithms: the simulated bandit, empirical matrices and the run result.

The simulated bandit (Section 2 of the paper): pulling unknown arm ``a`` yields a reward
``N(r_a, sigma_r^2)`` and costs ``N(c_{l,a}, sigma_c^2)``, all independent; known arms are never pulled and
enter the algorithms with their true means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..._result import Result
from ..._validation import as_int, as_positive_float
from ...cbmai.bases import check_problem as _check_problem
from ...cbmai.problem import CBMAIProblem, arm_label

__all__ = ["CBMAIRunResult", "RunBatch", "check_problem", "check_noise", "check_budget", "empirical_matrices",
           "support_tuple", "basis_estimate", "single_run_result"]


@dataclass(frozen=True, kw_only=True)
class CBMAIRunResult(Result):
    """One run of a CBMAI identification algorithm on a simulated instance.

    The core fields (:class:`~allocopt._result.Result`) come first. Both statuses are successful runs: the
    algorithm does not know whether its verdict is right (:func:`cbmai_error_rate` measures that).

    Attributes
    ----------
    status : {"identified", "declared_infeasible"}
        A support was returned, or the algorithm judged the instance infeasible.
    success : bool
    message : str
    method : {"sfsr", "sfsr-l", "uslp"}
        The algorithm (also :attr:`algorithm`).
    time : float
        Wall-clock seconds of the run.
    support : tuple of int
        The returned set of ``L+1`` columns (true arms ``a``, slacks ``K + l``); empty when the algorithm
        judged the instance infeasible.
    pulls : ndarray of int, shape (K,)
        Pulls of each arm (known arms: 0).
    total_pulls, budget : int
    declared_infeasible : bool
    elimination_order : tuple of int
        Columns in the order SFSR eliminated them (empty for USLP).
    estimate : ndarray, shape (K+L,)
        Remark 2: ``x_X = A^_X^{-1} b`` on the returned support from the final empirical means (zero off the
        support; NaN when infeasible or singular).
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"identified", "declared_infeasible"})

    support: tuple[int, ...]
    pulls: np.ndarray
    total_pulls: int
    budget: int
    declared_infeasible: bool
    elimination_order: tuple[int, ...]
    estimate: np.ndarray

    @property
    def algorithm(self) -> str:
        """The algorithm that ran: the same as :attr:`method`."""
        return self.method

    def support_labels(self) -> list[str]:
        """The support as ``"arm a"`` / ``"slack l"`` strings."""
        return [arm_label(column, self.pulls.shape[0]) for column in self.support]


@dataclass(frozen=True)
class RunBatch:
    """Raw outcome of a batch of runs of one algorithm (arrays over runs ``R``).

    Attributes
    ----------
    supports : ndarray of int, shape (R, L+1)
        Sorted returned columns; rows of ``-1`` for runs that declared the instance infeasible.
    pulls : ndarray of int, shape (R, K)
    elimination_order : ndarray of int, shape (R, rounds)
        Column eliminated in each round (``-1`` after an infeasibility verdict; no columns for USLP).
    final_matrix, final_objective : ndarray, shapes (R, L+1, K+L) and (R, K+L)
        Empirical ``A^`` and ``mu^`` at the end of the run (for Remark 2's estimate).
    """

    supports: np.ndarray
    pulls: np.ndarray
    elimination_order: np.ndarray
    final_matrix: np.ndarray
    final_objective: np.ndarray


def single_run_result(algorithm: str, problem: CBMAIProblem, budget: int, batch: RunBatch, seconds: float
                      ) -> CBMAIRunResult:
    """The :class:`CBMAIRunResult` of the first run of ``batch``, which took ``seconds``."""
    support = support_tuple(batch.supports[0])
    _, rhs, _ = problem.standard_form()
    pulls = batch.pulls[0].copy()
    estimate = basis_estimate(batch.final_matrix[0], rhs, support)
    for array in (pulls, estimate):
        array.setflags(write=False)
    declared_infeasible = not support
    total = int(pulls.sum())
    message = (f"declared the instance infeasible after {total} pulls" if declared_infeasible
               else f"returned the support {list(support)} after {total} pulls")
    return CBMAIRunResult(status="declared_infeasible" if declared_infeasible else "identified", message=message,
                          method=algorithm, time=seconds, support=support, pulls=pulls, total_pulls=total,
                          budget=budget, declared_infeasible=declared_infeasible,
                          elimination_order=support_tuple(batch.elimination_order[0]), estimate=estimate)


def check_budget(problem: CBMAIProblem, budget: Any, func: str, *, minimum: int) -> int:
    """The budget ``N`` as an integer ``>= minimum``."""
    return as_int(budget, func, "budget", low=minimum,
                  requirement=f"an integer >= {minimum} (n_unknown = {problem.n_unknown})")


def check_problem(problem: Any, func: str) -> CBMAIProblem:
    """``problem`` when it is a :class:`CBMAIProblem`; an ``InvalidArgumentError`` otherwise."""
    return _check_problem(problem, func)


def check_noise(sigma_r: Any, sigma_c: Any, func: str) -> tuple[float, float]:
    """``sigma_r > 0`` and ``sigma_c > 0`` (finite)."""
    return as_positive_float(sigma_r, func, "sigma_r"), as_positive_float(sigma_c, func, "sigma_c")


def empirical_matrices(problem: CBMAIProblem, mean_rewards: np.ndarray, mean_costs: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Empirical ``A^`` (5) and ``mu^`` (4) for a batch: unknown arms' entries replaced by sample means.

    ``mean_rewards`` has shape ``(R, K0)`` and ``mean_costs`` ``(R, L, K0)``; returns ``(R, L+1, K+L)`` and
    ``(R, K+L)``.
    """
    matrix, _, objective = problem.standard_form()
    n_runs, n_unknown, n_costs = mean_rewards.shape[0], problem.n_unknown, problem.n_costs
    empirical_matrix = np.broadcast_to(matrix, (n_runs,) + matrix.shape).copy()
    empirical_matrix[:, :n_costs, :n_unknown] = mean_costs
    empirical_objective = np.broadcast_to(objective, (n_runs,) + objective.shape).copy()
    empirical_objective[:, :n_unknown] = mean_rewards
    return empirical_matrix, empirical_objective


def support_tuple(row: np.ndarray) -> tuple[int, ...]:
    """A padded support row (``-1`` = none) as a tuple of column indices."""
    return tuple(int(column) for column in row if column >= 0)


def basis_estimate(matrix: np.ndarray, rhs: np.ndarray, support: tuple[int, ...]) -> np.ndarray:
    """Remark 2: ``x_X = A_X^{-1} b`` on ``support`` (NaN everywhere when empty or singular)."""
    estimate = np.full(matrix.shape[1], np.nan)
    if len(support) != matrix.shape[0]:
        return estimate
    columns = list(support)
    try:
        values = np.linalg.solve(matrix[:, columns], rhs)
    except np.linalg.LinAlgError:
        return estimate
    estimate[:] = 0.0
    estimate[columns] = values
    return estimate
