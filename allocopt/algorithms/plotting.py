"""Figures of identification experiments (matplotlib, imported inside the functions).

Every function takes ``ax=`` (a new figure's axes when None) and returns the Axes, as in the other layers'
plotting modules.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import fail
from .compare import PolicyComparison

from .._deps import PLOT_EXTRA, require

__all__ = ["plot_sample_complexity", "plot_error_rates", "plot_fixed_budget", "plot_allocations"]


def _axes(ax):
    if ax is None:
        plt = require("matplotlib.pyplot", "plotting", PLOT_EXTRA)
        _, ax = plt.subplots()
    return ax


def _offsets(n_series: int, width: float = 0.5):
    if n_series == 1:
        return np.zeros(1)
    return np.linspace(-width / 2, width / 2, n_series)


def _delta_series(comparison: PolicyComparison, func: str):
    """The first rule's result, the x positions of the deltas, and (x, label, summary rows) per rule, each
    rule's points shifted so that the rules sit side by side at every delta."""
    if comparison.setting != "confidence":
        fail(func, "comparison", "a fixed-confidence comparison (setting 'confidence')", comparison.setting)
    first = comparison.results[comparison.labels[0]]
    positions = np.arange(first.deltas.size)
    series = [(positions + offset, label, comparison.results[label].summary())
              for offset, label in zip(_offsets(len(comparison.labels)), comparison.labels)]
    return first, positions, series


def _finish_delta_axis(ax, positions: np.ndarray, deltas: np.ndarray, ylabel: str) -> None:
    ax.set_xticks(positions, [f"{delta:g}" for delta in deltas])
    ax.set_xlabel("delta")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")


def plot_sample_complexity(comparison: PolicyComparison, ax=None, *, lower_bound: bool = True):
    """Mean stopping time with 95% error bars (1.96 standard errors) against delta, one series per rule,
    with the lower bound :math:`T^* \\mathrm{kl}(\\delta, 1-\\delta)`.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms.compare import compare_policies
    >>> problem = TopKProblem([1.0, 0.6, 0.0], k=1, variance=0.25)
    >>> comparison = compare_policies(problem, ["kkt-ts", "uniform"], delta=(0.1, 0.01), n_runs=10, rng=0)
    >>> ax = plot_sample_complexity(comparison)
    >>> len(ax.get_xticks())
    2
    """
    ax = _axes(ax)
    first, positions, series = _delta_series(comparison, "plot_sample_complexity")
    for x, label, rows in series:
        ax.errorbar(x, [row.mean_stopping_time for row in rows], yerr=[1.96 * row.standard_error for row in rows],
                    fmt="o", capsize=3, label=f"{label} ({comparison.results[label].n_runs} runs)")
    if lower_bound:
        ax.plot(positions, [row.lower_bound for row in first.summary()], "k--", label="T* kl(delta, 1-delta)")
    _finish_delta_axis(ax, positions, first.deltas, "mean stopping time")
    return ax


def plot_error_rates(comparison: PolicyComparison, ax=None):
    """Realised error rate with its 95% Clopper-Pearson interval against delta (the line y = delta for
    reference). A zero error rate is drawn at the bottom of the linear axis with its interval."""
    ax = _axes(ax)
    first, positions, series = _delta_series(comparison, "plot_error_rates")
    for x, label, rows in series:
        rates = np.array([row.error_rate for row in rows])
        ax.errorbar(x, rates, yerr=[rates - [row.error_low for row in rows], [row.error_high for row in rows] - rates],
                    fmt="o", capsize=3, label=label)
    ax.plot(positions, first.deltas, "k:", label="delta")
    ax.set_ylim(bottom=0.0)
    _finish_delta_axis(ax, positions, first.deltas, "error rate")
    return ax


def plot_fixed_budget(comparison: PolicyComparison, ax=None, *, log: bool = True):
    """Error rate against the budget, one series per rule, with 95% Clopper-Pearson bands; zero error rates
    are left out of a log axis."""
    ax = _axes(ax)
    if comparison.setting != "budget":
        fail("plot_fixed_budget", "comparison", "a fixed-budget comparison (setting 'budget')", comparison.setting)
    for label in comparison.labels:
        result = comparison.results[label]
        shown = result.error_rate > 0 if log else np.ones(result.budgets.size, dtype=bool)
        ax.plot(result.budgets[shown], result.error_rate[shown], "o-", label=f"{label} ({result.n_runs} runs)")
        ax.fill_between(result.budgets[shown], result.error_low[shown], result.error_high[shown], alpha=0.2)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("budget")
    ax.set_ylabel("error rate")
    ax.legend(fontsize="small")
    return ax


def plot_allocations(allocations: Mapping[str, np.ndarray], psi_star: np.ndarray, ax=None,
                     colours: Mapping[str, str] | None = None):
    """Average allocations N/t of several rules (bars) against the optimal allocation psi* (black marks).

    ``colours`` maps a rule's label to its colour (for example the fixed colours of
    :data:`allocopt.experiments.RULE_STYLES`, so that a rule looks the same in every figure); by default
    matplotlib's colour cycle.
    """
    ax = _axes(ax)
    psi_star = np.asarray(psi_star, dtype=float)
    arms = np.arange(1, psi_star.size + 1)
    width = 0.8 / max(1, len(allocations))
    for index, (label, allocation) in enumerate(allocations.items()):
        colour = None if colours is None else colours.get(label)
        ax.bar(arms + (index - (len(allocations) - 1) / 2) * width, np.asarray(allocation), width=width, label=label,
               color=colour)
    ax.plot(arms, psi_star, "k_", markersize=14, markeredgewidth=2, label="psi*")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # arms are numbered 1, ..., K
    ax.set_xlabel("arm")
    ax.set_ylabel("N/t")
    ax.legend(fontsize="small")
    return ax
