r"""The top-k layer's compiled kernels that other layers call from their own compiled code (an internal API: the
names the engine's compiled loops rely on, kept stable while the exact solver's modules move).

A compiled loop of :mod:`allocopt.algorithms` that needs the exact allocation of Gaussian arms calls the double
star's row kernel by a global name: it binds :func:`gaussian_star_rows` (the plain Python function, which numba
compiles inside the caller) or the compiled dispatcher :func:`gaussian_star_rows_kernel` under that name, with
the constants below as its tolerances.

``gaussian_star_rows(theta, variance, k, start, has_start, max_newton, feasibility, negative_multiplier, psi,
mu, value, bound, stationarity, complementarity, accepted)`` solves Theorem 3.4's double star of every row of
the (R, K) arrays ``theta`` and ``variance`` (each row sorted: the k top arms, then the bottom arms, each by
decreasing mean) in closed form, checks it exactly and certifies it (:mod:`allocopt.topk._exact.gaussian_star`):
``psi`` (R, K) the allocation in the rows' order, ``mu`` (R, K - 1) the star's multipliers in the edge order of
:func:`double_star_edges`, ``value`` :math:`\Gamma(\psi)`, ``bound`` the certificate's upper bound
:math:`U(\mu, \psi)`, and ``accepted`` whether the double star passed the checks (otherwise the general solver
takes the row).

Examples
--------
>>> import numpy as np
>>> theta, variance = np.array([[1.0, 0.8, 0.3, 0.0]]), np.full((1, 4), 0.25)
>>> psi, mu = np.empty((1, 4)), np.empty((1, 3))
>>> value, bound, stationarity, complementarity = (np.empty(1) for _ in range(4))
>>> accepted = np.empty(1, dtype=bool)
>>> gaussian_star_rows(theta, variance, 2, NO_START, False, MAX_NEWTON, FEASIBILITY, NEGATIVE_MULTIPLIER, psi, mu,
...                    value, bound, stationarity, complementarity, accepted)
>>> bool(accepted[0]), bool(abs(bound[0] - value[0]) <= 1e-12 * value[0]), round(float(psi.sum()), 12)
(True, True, 1.0)
"""

from __future__ import annotations

from typing import Any

from ._exact.gaussian_star import _FEASIBILITY, _NEGATIVE_MULTIPLIER, _NO_START, MAX_NEWTON
from ._exact.gaussian_star import _gaussian_star_rows, _kernel
from ._exact.groups import merge_ties
from ._exact.search import _NEGATIVE_MULTIPLIER as _FAMILY_NEGATIVE_MULTIPLIER
from ._exact.star import STAR_MAX_ITERATIONS, _star_rows, double_star_edges, star_kernel

__all__ = ["gaussian_star_rows", "gaussian_star_rows_kernel", "double_star_edges", "FEASIBILITY",
           "NEGATIVE_MULTIPLIER", "NO_START", "MAX_NEWTON", "family_star_rows", "family_star_rows_kernel",
           "FAMILY_NEGATIVE_MULTIPLIER", "STAR_MAX_ITERATIONS", "merge_ties"]

gaussian_star_rows = _gaussian_star_rows
"""The Gaussian double star's row kernel as a plain Python function (see the module docstring)."""

FEASIBILITY = _FEASIBILITY
"""A row is handed back when a pair outside the double star costs less than the star's smallest edge by more than
this, relatively."""

NEGATIVE_MULTIPLIER = _NEGATIVE_MULTIPLIER
"""A multiplier below minus this times the largest is negative (not rounding): the row is handed back."""

NO_START = _NO_START
"""The ``start`` argument when there is none (``has_start`` false; not read)."""


def gaussian_star_rows_kernel() -> Any:
    """:func:`gaussian_star_rows` compiled with numba (on first use; cached on disk)."""
    return _kernel()


family_star_rows = _star_rows
"""The double star's row kernel of the families with a compiled pair kernel, as a plain Python function:
``family_star_rows(code, theta, dispersion, k, start, max_iterations, negative_multiplier, psi, mu, keep, weight,
top_sums, bottom_sums, out)`` on one row of distinct means sorted top then bottom (``code`` the pair kernel's
number, :func:`allocopt.families.kernels.kernel_code`; ``weight`` the balance's first weights, ones for a fresh
solve; ``top_sums`` (k,) and ``bottom_sums`` (K - k,) work arrays), writing ``psi``, the kept multipliers and
``out`` = (accepted, value, bound, stationarity, complementarity, largest arm degree, balance residual). It is the
single solve's and :func:`~allocopt.topk.solve_topk_batch`'s compiled double star, with their
``max_iterations`` :data:`STAR_MAX_ITERATIONS` and :data:`FAMILY_NEGATIVE_MULTIPLIER`."""

FAMILY_NEGATIVE_MULTIPLIER = _FAMILY_NEGATIVE_MULTIPLIER
"""The family double star's ``negative_multiplier`` (that of the single solve and the batch)."""


def family_star_rows_kernel() -> Any:
    """:func:`family_star_rows` compiled with numba (on first use; cached on disk), with what it calls by name."""
    return star_kernel()

# merge_ties(theta, order, dispersion, k, group_theta, group_dispersion, first, count) -> (n_groups, n_top): the tie
# groups of sorted means as the single solve and the batch merge them (allocopt.topk._exact.groups.merge_ties), a
# plain function that compiled callers compile inside them
