"""Pictures of the CBMAI layer (matplotlib is imported inside the functions; each takes ``ax=`` and returns it).

* :func:`plot_iv_scores` - Figure 1 of the paper: intersection-value scores of a one-constraint instance.
* :func:`plot_error_rates` - error rate against budget, with confidence intervals.
* :func:`plot_arm_gaps` - the sorted arm gaps ``Delta_(i)^2`` of :func:`cbmai_hardness`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._validation import fail
from .._deps import PLOT_EXTRA, require
from .bases import enumerate_bases
from .problem import CBMAIProblem
from .scores import iv_scores

__all__ = ["plot_iv_scores", "plot_error_rates", "plot_arm_gaps"]


def _axes(ax: Any):
    plt = require("matplotlib.pyplot", "plotting", PLOT_EXTRA)
    if ax is None:
        _, ax = plt.subplots()
    return ax


def plot_iv_scores(problem: CBMAIProblem, ax: Any = None, *, strict: bool = False, annotate: bool = True):
    """Figure 1: arms as points (cost, reward), the cost bound, and each arm's IV score (6) for ``L = 1``.

    The BFS of a basis ``{a, b}`` with the cost binding is the point where the segment from arm ``a`` to arm
    ``b`` crosses the line ``c = cbar``; a basis ``{a, slack}`` is arm ``a`` itself (feasible when left of the
    line). An arm's IV score is the highest such point among the feasible bases that contain it: drawn as
    the segment to that point and a tick ``rho_a`` on the bound (arms that are feasible alone and best alone
    score at their own height).

    Parameters
    ----------
    problem : CBMAIProblem
        With one cost (``L = 1``).
    ax : matplotlib Axes, optional
    strict, annotate : bool
        Strict IV variant; label arms and scores.

    Returns
    -------
    matplotlib Axes
    """
    if problem.n_costs != 1:
        fail("plot_iv_scores", "problem", "an instance with one cost (L = 1)", f"L = {problem.n_costs}")
    ax = _axes(ax)
    n_arms, bound = problem.n_arms, float(problem.bounds[0])
    costs, rewards = problem.costs[0], problem.rewards
    table = enumerate_bases(problem)
    scores = iv_scores(problem, strict=strict)
    ax.axvline(bound, color="0.3", linestyle="--", linewidth=1, label=r"cost bound $\bar c$")
    labels: dict[tuple[float, float], list[int]] = {}
    for arm in range(n_arms):
        if not np.isfinite(scores[arm]):
            continue
        best = np.flatnonzero(table.feasible & np.any(table.bases == arm, axis=1)
                              & np.isclose(table.values, scores[arm], rtol=1e-12, atol=1e-12))
        basis, x = table.bases[best[0]], table.x[best[0]]
        weights = np.zeros(problem.n_columns)
        weights[basis] = x
        point = (float(costs @ weights[:n_arms]), float(rewards @ weights[:n_arms]))
        ax.plot([costs[arm], point[0]], [rewards[arm], point[1]], color="tab:blue", alpha=0.5, linewidth=1)
        ax.plot(*point, marker="_", markersize=14, color="tab:red")
        labels.setdefault((round(point[0], 9), round(point[1], 9)), []).append(arm)
    if annotate:
        for point, arms in labels.items():
            text = " = ".join(rf"$\rho_{{{arm + 1}}}$" for arm in arms)
            ax.annotate(text, point, xytext=(8, 0), textcoords="offset points", va="center", fontsize=9,
                        color="tab:red")
    ax.scatter(costs, rewards, zorder=3, color="tab:blue", label="arms")
    if annotate:
        for arm in range(n_arms):
            ax.annotate(str(arm + 1), (costs[arm], rewards[arm]), xytext=(-10, 4), textcoords="offset points")
    ax.set_xlabel("mean cost $c$")
    ax.set_ylabel("mean reward $r$")
    ax.set_title("Intersection-value scores" + (" (strict)" if strict else ""))
    return ax


def plot_error_rates(rates: Mapping[str, Iterable[Any]], ax: Any = None, *, log_scale: bool = True):
    """Error rate against budget, one line per algorithm, with the confidence interval of each point.

    Parameters
    ----------
    rates : mapping from label to a sequence of :class:`~allocopt.algorithms.ErrorRate`
    ax : matplotlib Axes, optional
    log_scale : bool, default True
        Logarithmic error-rate axis (zero error rates are drawn at the upper end of their interval).

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    for label, points in rates.items():
        points = sorted(points, key=lambda rate: rate.budget)
        budgets = np.array([rate.budget for rate in points])
        values = np.array([rate.error_rate for rate in points])
        lower = values - np.array([rate.ci_low for rate in points])
        upper = np.array([rate.ci_high for rate in points]) - values
        shown = np.where((values == 0) & log_scale, values + upper, values)
        ax.errorbar(budgets, shown, yerr=[np.minimum(lower, shown * 0.999) if log_scale else lower, upper],
                    marker="o", capsize=3, label=label)
    if log_scale:
        ax.set_yscale("log")
    ax.set_xlabel("budget $N$")
    ax.set_ylabel("error rate")
    ax.legend()
    return ax


def plot_arm_gaps(hardness: Any, ax: Any = None):
    """The sorted arm gaps ``Delta_(i)^2`` (bars, log scale) and ``Delta_0^2`` (line) of :func:`cbmai_hardness`.

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    problem = hardness.problem
    gaps = np.asarray(hardness.sorted_gaps)
    positive = gaps > 0
    labels = [problem.arm_label(column) for column in hardness.sorted_arms]
    positions = np.arange(gaps.size)
    ax.bar(positions[positive], gaps[positive], color="tab:blue")
    ax.axhline(hardness.infeasibility_gap, color="tab:red", linestyle="--", label=r"$\Delta_0^2$")
    ax.set_xticks(positions, labels, rotation=90, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel(r"$\Delta_a^2$")
    ax.legend()
    return ax
