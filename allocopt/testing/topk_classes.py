"""Instance classes of the top-k problem used to measure and test the exact solver at every size.

Each class is a recipe for means in (0, 1) (so that Gaussian and Bernoulli arms both apply) with k = K/2;
the means are chosen here, not taken from a paper. The classes stress different structures of the optimal
binding forest (Wang, Yang, You 2022, Theorem 3.4 and Proposition 3.2):

* ``"linspace"``, ``"uniform"``: the double star is usually optimal;
* ``"staircase"``: a tight top cluster just above a spread bottom cluster - long monotone binding trees;
* ``"two clusters"``: two tight clusters, many near-binding pairs;
* ``"power-law gaps"``: gaps to the boundary spread over orders of magnitude;
* ``"massive ties"``: two levels on each side (tie merging);
* ``"heteroscedastic"``: Gaussian arms with one variance per arm (Gaussian only).
"""

from __future__ import annotations

import numpy as np

from .._validation import fail
from ..topk import TopKProblem

__all__ = ["TOPK_INSTANCE_CLASSES", "topk_instance_class"]

TOPK_INSTANCE_CLASSES = ("linspace", "uniform", "staircase", "two clusters", "power-law gaps", "massive ties",
                         "heteroscedastic")


def topk_instance_class(name: str, n_arms: int, family: str = "gaussian", seed: int = 0) -> TopKProblem:
    """One instance of class ``name`` with K = ``n_arms`` arms and k = K/2 (Gaussian variance 1/4 unless
    heteroscedastic).

    Examples
    --------
    >>> problem = topk_instance_class("staircase", 6, seed=1)
    >>> problem.k, bool(problem.theta[problem.top].min() > 0.5)
    (3, True)
    """
    if name not in TOPK_INSTANCE_CLASSES:
        fail("topk_instance_class", "name", f"one of {TOPK_INSTANCE_CLASSES}", name)
    rng = np.random.default_rng(seed)
    k = n_arms // 2
    n_bottom = n_arms - k
    variance: float | np.ndarray = 0.25
    if name == "linspace":
        theta = np.linspace(0.9, 0.1, n_arms)
    elif name == "uniform":
        theta = rng.uniform(0.1, 0.9, n_arms)
    elif name == "staircase":
        theta = np.concatenate([0.51 + 0.01 * rng.uniform(size=k), 0.5 - 0.1 * rng.uniform(size=n_bottom)])
    elif name == "two clusters":
        theta = np.concatenate([0.6 + 0.01 * rng.normal(size=k), 0.4 + 0.01 * rng.normal(size=n_bottom)])
    elif name == "power-law gaps":
        theta = np.concatenate([0.5 + 1e-6 + 0.4 * rng.uniform(size=k) ** 4,
                                0.5 - 0.4 * rng.uniform(size=n_bottom) ** 4])
    elif name == "massive ties":
        theta = np.concatenate([np.where(np.arange(k) < k // 2, 0.7, 0.6),
                                np.where(np.arange(n_bottom) < n_bottom // 2, 0.4, 0.3)])
    else:  # heteroscedastic
        if family != "gaussian":
            fail("topk_instance_class", "family", "'gaussian' for the heteroscedastic class", family)
        theta = rng.uniform(0.1, 0.9, n_arms)
        variance = rng.uniform(0.05, 1.0, n_arms)
    if family == "gaussian":
        return TopKProblem(theta, k, variance=variance)
    return TopKProblem(theta, k, family=family)
