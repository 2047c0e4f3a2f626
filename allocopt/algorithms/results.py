"""Results of identification experiments: fixed confidence and fixed budget."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._result import Result
from ..complexity.allocation_measures import kl_confidence
from ..simulate import binomial_confidence_interval

__all__ = ["IdentificationResult", "IdentificationSummaryRow", "FixedBudgetResult", "FixedBudgetSummaryRow",
           "PACResult", "PACSummary"]


@dataclass(frozen=True)
class IdentificationSummaryRow:
    """One confidence level of a fixed-confidence experiment.

    Attributes
    ----------
    delta : float
    mean_stopping_time, standard_error : float
        Mean of the stopping times and its standard error (sample standard deviation over sqrt(n_runs)).
    error_rate, error_low, error_high : float
        Fraction of wrong recommendations and its 95% Clopper-Pearson interval.
    lower_bound : float
        :math:`T^* \\mathrm{kl}(\\delta, 1-\\delta)`, the asymptotic lower bound on the expected stopping time
        (Wang, Yang, You 2022, Lemma 2.1), with :math:`T^*` from the exact top-k solver.
    ratio : float
        Mean stopping time over :math:`T^* \\log(1/\\delta)`.
    stopped_fraction : float
        Fraction of runs that stopped before the sample cap.
    censored : bool
        Some run reached the sample cap before stopping at this delta: its stopping time is the cap, so
        ``mean_stopping_time`` is a lower bound on :math:`E[\tau]` (printed ``>=``), and the error rate counts the
        empirical top-k at the cap, not a stop (printed ``censored``).
    """

    delta: float
    mean_stopping_time: float
    standard_error: float
    error_rate: float
    error_low: float
    error_high: float
    lower_bound: float
    ratio: float
    stopped_fraction: float
    censored: bool = False


@dataclass(frozen=True, kw_only=True)
class IdentificationResult(Result):
    """Outcome of :func:`~allocopt.algorithms.identify`.

    Statuses: ``"completed"`` (every run stopped at every delta) and ``"sample_cap_reached"`` (some run hit
    ``max_samples`` first; its stopping time is the cap and ``stopped`` is False there).

    Attributes
    ----------
    policy : str
    deltas : ndarray, shape (n_delta,)
    threshold : str
    stopping_times : ndarray of int, shape (n_runs, n_delta)
    recommendations : ndarray of int, shape (n_runs, n_delta, k)
        Empirical top-k at the stop, in increasing arm order.
    correct : ndarray of bool, shape (n_runs, n_delta)
    stopped : ndarray of bool, shape (n_runs, n_delta)
    pulls : ndarray of int, shape (n_runs, K)
        Counts when the run finished (at the last delta's stop).
    diagnostics : dict of str to ndarray
        Per-run numbers reported by the rule (e.g. ``"solver_fallbacks"``).
    characteristic_time : float
        :math:`T^*` of the problem.
    entropy : int
        Root entropy (replication ``i`` used the streams of :mod:`allocopt.algorithms.engine.rewards`).
    max_samples, n_runs, replication_steps : int
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    policy: str
    deltas: np.ndarray
    threshold: str
    stopping_times: np.ndarray
    recommendations: np.ndarray
    correct: np.ndarray
    stopped: np.ndarray
    pulls: np.ndarray
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)
    characteristic_time: float
    entropy: int
    max_samples: int
    n_runs: int
    replication_steps: int

    @property
    def elapsed(self) -> float:
        """Wall-clock seconds (the core ``time``)."""
        return self.time

    def summary(self) -> list[IdentificationSummaryRow]:
        """One row per delta (see :class:`IdentificationSummaryRow`)."""
        rows = []
        n_runs = self.stopping_times.shape[0]
        for column, delta in enumerate(self.deltas):
            times = self.stopping_times[:, column].astype(float)
            errors = int(n_runs - self.correct[:, column].sum())
            low, high = binomial_confidence_interval(errors, n_runs)
            spread = float(times.std(ddof=1)) / math.sqrt(n_runs) if n_runs > 1 else math.nan
            delta = float(delta)
            rows.append(IdentificationSummaryRow(
                delta=delta, mean_stopping_time=float(times.mean()), standard_error=spread,
                error_rate=errors / n_runs, error_low=low, error_high=high,
                lower_bound=self.characteristic_time * kl_confidence(delta),
                ratio=float(times.mean()) / (self.characteristic_time * math.log(1.0 / delta)),
                stopped_fraction=float(self.stopped[:, column].mean()),
                censored=not bool(self.stopped[:, column].all())))
        return rows

    def format_summary(self) -> str:
        """The summary as a text table."""
        lines = [f"{self.policy}: {self.n_runs} runs, threshold {self.threshold}, T* = {self.characteristic_time:.6g}, "
                 f"{self.time:.1f} s",
                 f"{'delta':>8} {'E[tau]':>11} {'s.e.':>8} {'error':>8} {'95% interval':>19} "
                 f"{'T* kl':>10} {'E[tau]/(T* log 1/d)':>20} {'stopped':>8}"]
        rows = self.summary()
        for row in rows:
            mean = f"{'>=' if row.censored else ''}{row.mean_stopping_time:.1f}"
            ratio = f"{'>=' if row.censored else ''}{row.ratio:.3f}"
            lines.append(f"{row.delta:8.3g} {mean:>11} {row.standard_error:8.1f} "
                         f"{row.error_rate:8.4f} [{row.error_low:7.4f}, {row.error_high:7.4f}] "
                         f"{row.lower_bound:10.1f} {ratio:>20} {row.stopped_fraction:8.3f}"
                         + ("  censored" if row.censored else ""))
        if any(row.censored for row in rows):
            lines.append(f"censored: some runs reached max_samples = {self.max_samples} before stopping; their "
                         "stopping time is the cap (E[tau] >= the mean shown) and their recommendation the "
                         "empirical top-k at the cap")
        if self.diagnostics:
            lines.append("diagnostics, mean per run: " + ", ".join(
                f"{name} {value:.6g}" for name, value in self.diagnostic_means().items()))
        return "\n".join(lines)

    def diagnostic_means(self) -> dict[str, float]:
        """The mean over the runs of each of the rule's diagnostics (e.g. TTTS's ``fallback_share``)."""
        return {name: float(np.mean(values)) for name, values in self.diagnostics.items()}

    def _dict_extras(self) -> dict[str, Any]:
        return {"summary": self.summary(), "diagnostic_means": self.diagnostic_means()}


@dataclass(frozen=True)
class FixedBudgetSummaryRow:
    """Error rate at one budget with its 95% Clopper-Pearson interval."""

    budget: int
    error_rate: float
    error_low: float
    error_high: float


@dataclass(frozen=True, kw_only=True)
class FixedBudgetResult(Result):
    """Outcome of :func:`~allocopt.algorithms.identify_fixed_budget` (status ``"completed"``).

    Attributes
    ----------
    policy : str
    budgets : ndarray of int, shape (n_budget,)
    recommendations : ndarray of int, shape (n_runs, n_budget, k)
        Empirical top-k when the budget was spent.
    correct : ndarray of bool, shape (n_runs, n_budget)
    error_rate, error_low, error_high : ndarray, shape (n_budget,)
        Fraction of wrong recommendations and its 95% Clopper-Pearson interval.
    pulls : ndarray of int, shape (n_runs, K)
        Counts at the last budget.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    policy: str
    budgets: np.ndarray
    recommendations: np.ndarray
    correct: np.ndarray
    error_rate: np.ndarray
    error_low: np.ndarray
    error_high: np.ndarray
    pulls: np.ndarray
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)
    entropy: int
    n_runs: int

    def summary(self) -> list[FixedBudgetSummaryRow]:
        """One row per budget."""
        return [FixedBudgetSummaryRow(int(budget), float(rate), float(low), float(high))
                for budget, rate, low, high in zip(self.budgets, self.error_rate, self.error_low, self.error_high)]


@dataclass(frozen=True)
class PACSummary:
    r"""Summary of a PAC experiment (:func:`~allocopt.algorithms.pac_identify`).

    Attributes
    ----------
    epsilon, delta : float
    mean_samples, samples_standard_error, samples_low, samples_high : float
        Mean number of pulls, its standard error and a normal 95% interval (mean +- 1.96 s.e.).
    failure_rate, failure_low, failure_high : float
        Fraction of runs whose aggregate regret exceeds epsilon, with its 95% Clopper-Pearson interval (at most
        delta is guaranteed).
    mean_regret, regret_standard_error : float
        Mean aggregate regret and its standard error.
    hardness : float
        :math:`H(t,\epsilon)` of the instance (Chen, Chen, Zhang, Zhou 2017, eq. (6)).
    samples_over_hardness : float
        Mean samples over :math:`H(t,\epsilon)`.
    stopped_fraction : float
        Fraction of runs that ended before the sample cap.
    censored : bool
        Some run reached the sample cap before its rule ended: ``mean_samples`` is a lower bound (printed ``>=``)
        and the failure rate counts the rule's recommendation at the cap (printed ``censored``).
    """

    epsilon: float
    delta: float
    mean_samples: float
    samples_standard_error: float
    samples_low: float
    samples_high: float
    failure_rate: float
    failure_low: float
    failure_high: float
    mean_regret: float
    regret_standard_error: float
    hardness: float
    samples_over_hardness: float
    stopped_fraction: float
    censored: bool = False


def _standard_error(values: np.ndarray) -> float:
    return float(values.std(ddof=1)) / math.sqrt(values.size) if values.size > 1 else math.nan


@dataclass(frozen=True, kw_only=True)
class PACResult(Result):
    r"""Outcome of :func:`~allocopt.algorithms.pac_identify`: epsilon-top-k with probability 1 - delta.

    Statuses: ``"completed"`` (every run ended by its own rule) and ``"sample_cap_reached"`` (some run reached
    ``max_samples`` first; its recommendation is the rule's at the cap).

    Attributes
    ----------
    policy : str
    epsilon, delta : float
    samples : ndarray of int, shape (n_runs,)
        Pulls when the run ended.
    recommendations : ndarray of int, shape (n_runs, k)
        The chosen arms, in increasing arm order.
    aggregate_regret : ndarray, shape (n_runs,)
        :math:`R_T = (\sum_{i \le k}\theta_{[i]} - \sum_{i \in T}\theta_i)/k` of each recommendation
        (Chen, Chen, Zhang, Zhou 2017, eq. (1); :func:`allocopt.complexity.aggregate_regret`).
    correct : ndarray of bool, shape (n_runs,)
        ``aggregate_regret <= epsilon``.
    stopped : ndarray of bool, shape (n_runs,)
    pulls : ndarray of int, shape (n_runs, K)
    hardness : float
        :math:`H(t,\epsilon)`.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    policy: str
    epsilon: float
    delta: float
    samples: np.ndarray
    recommendations: np.ndarray
    aggregate_regret: np.ndarray
    correct: np.ndarray
    stopped: np.ndarray
    pulls: np.ndarray
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)
    hardness: float
    entropy: int
    max_samples: int
    n_runs: int
    replication_steps: int

    def summary(self) -> PACSummary:
        """Mean samples and regret with their intervals, and the failure rate (see :class:`PACSummary`)."""
        samples = self.samples.astype(float)
        n_runs = samples.size
        failures = int(n_runs - self.correct.sum())
        low, high = binomial_confidence_interval(failures, n_runs)
        spread = _standard_error(samples)
        mean = float(samples.mean())
        return PACSummary(
            epsilon=float(self.epsilon), delta=float(self.delta), mean_samples=mean, samples_standard_error=spread,
            samples_low=mean - 1.96 * spread, samples_high=mean + 1.96 * spread, failure_rate=failures / n_runs,
            failure_low=low, failure_high=high, mean_regret=float(self.aggregate_regret.mean()),
            regret_standard_error=_standard_error(self.aggregate_regret), hardness=float(self.hardness),
            samples_over_hardness=mean / float(self.hardness), stopped_fraction=float(self.stopped.mean()),
            censored=not bool(self.stopped.all()))

    def format_summary(self) -> str:
        """The summary as a text table."""
        row = self.summary()
        return "\n".join([
            f"{self.policy}: {self.n_runs} runs, epsilon = {row.epsilon:g}, delta = {row.delta:g}, {self.time:.1f} s",
            f"{'E[samples]':>12} {'s.e.':>10} {'failure':>8} {'95% interval':>19} {'E[regret]':>10} "
            f"{'H(t,eps)':>10} {'E[samples]/H':>12} {'stopped':>8}",
            f"{('>=' if row.censored else '') + format(row.mean_samples, '.1f'):>12} {row.samples_standard_error:10.1f} "
            f"{row.failure_rate:8.4f} [{row.failure_low:7.4f}, {row.failure_high:7.4f}] {row.mean_regret:10.4g} "
            f"{row.hardness:10.4g} {('>=' if row.censored else '') + format(row.samples_over_hardness, '.3f'):>12} "
            f"{row.stopped_fraction:8.3f}" + ("  censored" if row.censored else "")])

    def _dict_extras(self) -> dict[str, Any]:
        return {"summary": self.summary()}
