"""Plots for the top-k layer (matplotlib is imported inside the functions; each takes ``ax=`` and returns it)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._deps import PLOT_EXTRA, require
from .result import TopKResult

__all__ = ["plot_convergence"]


def plot_convergence(results: Mapping[str, TopKResult], ax=None, optimum: float | None = None, relative: bool = True):
    r"""Optimality gap against iterations for iterative top-k solvers (the paper's Figure 3).

    For each result with a history, plots the certified gap :math:`U(\mu_t, \psi_t) - \Gamma(\psi_t)` (solid)
    and, when ``optimum`` (:math:`\Gamma^*`) is given, the true gap :math:`\Gamma^* - \Gamma(\psi_t)` (dashed),
    divided by :math:`\Gamma^*` (or by :math:`\Gamma(\psi_t)` without ``optimum``) when ``relative``.

    Parameters
    ----------
    results : mapping of label to TopKResult
        Results of ``"fwga"`` or ``"kkt-tracking"`` (others are skipped).
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure's axes by default).
    optimum : float, optional
        :math:`\Gamma^*`, for the true gap curves.
    relative : bool, default True
        Plot relative gaps.

    Returns
    -------
    matplotlib.axes.Axes
    """
    plt = require("matplotlib.pyplot", "plotting", PLOT_EXTRA)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for label, result in results.items():
        history = result.history
        if history is None:
            continue
        scale_certified = (optimum if optimum else history.value) if relative else 1.0
        line, = ax.loglog(history.iteration, history.gap / scale_certified, label=f"{label}: certified gap")
        if optimum is not None:
            true_gap = np.maximum(optimum - history.value, np.finfo(float).tiny)
            ax.loglog(history.iteration, true_gap / (optimum if relative else 1.0), linestyle="--",
                      color=line.get_color(), label=f"{label}: true gap")
    ax.set_xlabel("iteration t")
    ax.set_ylabel("relative optimality gap" if relative else "optimality gap")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return ax
