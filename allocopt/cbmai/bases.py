"""Vectorised enumeration of the bases of the CBMAI standard form.

A basis is a set ``J`` of ``L+1`` columns of ``A`` (true and virtual arms). All bases of a column subset are
evaluated at once, and the same code evaluates a whole batch of matrices (for example the empirical
matrices of many simulated runs) in one pass.

How a basis is evaluated
------------------------
Subtracting ``cbar_l`` times the last row (the row of ones) from cost row ``l`` turns ``A x = b`` into
``A' x = e_{L+1}`` with ``A' = [[D], [o^T]]``, ``D = c_{:, cols} - cbar o^T`` (``o`` is the row of ones:
1 for a true arm, 0 for a slack) and the same determinant as ``A``. Expanding along the last row
(Cramer's rule), the basic solution of ``J = (j_0 < ... < j_L)`` is

.. math::

    x_{j_i} = \\frac{w_i}{\\sum_k o_{j_k} w_k}, \\qquad w_i = (-1)^i \\det D_{J \\setminus j_i},
    \\qquad \\det A_J = (-1)^{L} \\sum_k o_{j_k} w_k ,

so every basis only needs the ``L x L`` minors of ``D``, and there are ``C(n, L)`` of those for
``C(n, L+1)`` bases; they are computed once per matrix and gathered. The cost rows are first divided by a power
of two close to ``max(|cbar_l|, max_a |c_{l,a}|)`` (an exact scaling, against overflow and underflow), which
changes neither ``x`` nor the set of bases.

Every test below is judged on the magnitudes that actually enter the computation, so it is invariant under any
scaling of the rows and of the columns, and a cost row whose entries span many decades is judged as precisely as
a well-scaled one.

* Singular bases. ``M = |c| + |cbar| o^T`` (entrywise) bounds the magnitudes of the entries of ``D`` and of the
  data they come from. Each minor ``w_i`` is a sum of products of entries of ``D``; the same sum of products of
  entries of ``M`` (a permanent, ``P_i >= |w_i|``) is the size of its terms. ``A_J`` is treated as singular when
  the cancellation ratio ``rho_J = |det A_J| / perm(M_J) = |sum_k o_{j_k} w_k| / sum_k o_{j_k} P_k`` (in
  ``[0, 1]``) is at most ``singular_tol``: the determinant is then lost in the rounding of its own terms. For
  ``L = 1``, ``rho`` of two arms is ``|c_i - c_j| / (|c_i| + |c_j| + 2 |cbar|)``, and ``1 / rho`` is the
  componentwise (Skeel) condition number of ``A_J``.
* Nonnegativity. A basic solution is feasible when the point ``x^+ = max(x, 0)`` still satisfies ``A x = b``
  up to a componentwise relative residual ``feasibility_tol``: for every coordinate ``x_j < 0`` and every row
  ``l``, ``|A_{l,j}| |x_j| <= feasibility_tol (|b_l| + sum_{k in J} |A_{l,k}| |x_k|)``. The weighted value
  ``x_j u_j`` with ``u_j = max_l |A_{l,j}| / (|b_l| + sum_k |A_{l,k}| |x_k|)`` is the share of ``x_j`` in the
  rows it enters; nonnegativity and nonzeros are judged on it. A slack is thereby compared with the bound and
  the costs actually spent, not with the largest cost of its row, and a slightly negative weight on an arm
  with a huge cost counts as the constraint violation it causes.
* Excluded slacks. A column subset ``X`` may have no basis at all (fewer than ``L+1`` independent columns, for
  example one arm, or identical cost columns) although its LP is feasible. Its vertices are still basic
  solutions of bases of ``X`` plus the slack columns missing from ``X``, provided those slacks are zero
  (within the same relative tolerance): every feasible point of the restricted LP with independent support
  extends to such a basis with slack columns, because the support contains a true arm. Such "pinned" slack
  columns are added by :func:`evaluate_subset` when ``X`` lacks a slack.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from .._validation import as_float, fail
from .problem import CBMAIProblem, as_arm_subset

__all__ = [
    "SINGULAR_TOL",
    "FEASIBILITY_TOL",
    "VALUE_TOL",
    "BasisEnumeration",
    "BasisLayout",
    "BasisValues",
    "OptimalBases",
    "basis_layout",
    "enumerate_bases",
    "evaluate_bases",
    "select_optimal_bases",
    "evaluate_subset",
    "checked_evaluation",
    "ExtendedSystem",
    "extended_system",
]

SINGULAR_TOL = 1e-11
"""Default cancellation-ratio threshold ``|det A_J| / perm(M_J)`` below which a basis matrix counts as singular."""

FEASIBILITY_TOL = 1e-9
"""Default componentwise relative tolerance on the weighted values ``x_j u_j`` (nonnegative and nonzero)."""

VALUE_TOL = 1e-10
"""Default relative tolerance under which two basis values count as equal (ties, several optima)."""


@dataclass(frozen=True)
class BasisLayout:
    """The combinatorics of the bases of ``n_columns`` columns with ``size = L + 1`` rows.

    Attributes
    ----------
    combos : ndarray of int, shape (C(n, size), size)
        Every basis (sorted column positions), in lexicographic order.
    subsets : ndarray of int, shape (C(n, size-1), size-1)
        Every ``L``-subset of the columns (the minors of ``D``), in lexicographic order.
    minor_ids : ndarray of int, shape (C(n, size), size)
        ``minor_ids[c, i]`` is the row of ``subsets`` equal to ``combos[c]`` without slot ``i``.
    membership : ndarray of int, shape (n, C(n-1, size-1))
        Flat indices ``i * C + c`` (slot-major) of the slots with ``combos[c, i] == j``, for each column ``j``.
    slots, slot_minor_ids : ndarray of int, shape (size, C)
        ``combos.T`` and ``minor_ids.T`` (contiguous): the evaluation works slot-major so that its inner loops
        run over the bases.
    """

    n_columns: int
    size: int
    combos: np.ndarray
    subsets: np.ndarray
    minor_ids: np.ndarray
    membership: np.ndarray
    slots: np.ndarray
    slot_minor_ids: np.ndarray

    @property
    def n_bases(self) -> int:
        return int(self.combos.shape[0])


def _combinations(n: int, k: int) -> np.ndarray:
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), k)), dtype=np.intp)
    return flat.reshape(-1, k)


def _colex_rank(subsets: np.ndarray, pascal: np.ndarray) -> np.ndarray:
    """Colexicographic rank ``sum_i C(j_i, i+1)`` of sorted rows."""
    ranks = np.zeros(subsets.shape[:-1], dtype=np.intp)
    for slot in range(subsets.shape[-1]):
        ranks += pascal[subsets[..., slot], slot + 1]
    return ranks


@lru_cache(maxsize=128)
def basis_layout(n_columns: int, size: int) -> BasisLayout:
    """The (cached) :class:`BasisLayout` of ``n_columns`` columns and bases of ``size`` columns."""
    combos = _combinations(n_columns, size)
    subsets = _combinations(n_columns, size - 1)
    pascal = np.zeros((n_columns + 1, size + 1), dtype=np.intp)
    for row in range(n_columns + 1):
        for col in range(min(row, size) + 1):
            pascal[row, col] = 1 if col in (0, row) else pascal[row - 1, col - 1] + pascal[row - 1, col]
    lex_of_colex = np.empty(subsets.shape[0], dtype=np.intp)
    lex_of_colex[_colex_rank(subsets, pascal)] = np.arange(subsets.shape[0])
    minor_ids = np.empty(combos.shape, dtype=np.intp)
    for slot in range(size):
        without = np.delete(combos, slot, axis=1)
        minor_ids[:, slot] = lex_of_colex[_colex_rank(without, pascal)]
    slots = np.ascontiguousarray(combos.T)
    slot_minor_ids = np.ascontiguousarray(minor_ids.T)
    order = np.argsort(slots.ravel(), kind="stable")
    membership = order.reshape(n_columns, -1) if n_columns else order.reshape(0, 0)
    for array in (combos, subsets, minor_ids, membership, slots, slot_minor_ids):
        array.setflags(write=False)
    return BasisLayout(n_columns, size, combos, subsets, minor_ids, membership, slots, slot_minor_ids)


def _minors(rows: np.ndarray, subsets: np.ndarray, permanent: bool = False) -> np.ndarray:
    """Determinants (or, with ``permanent``, permanents) of ``rows[..., :, subset]`` (square, ``L x L``) for every
    subset; closed forms for L <= 3, the Leibniz sum over permutations above."""
    n_rows = rows.shape[-2]
    if subsets.shape[0] == 0:
        return np.zeros(rows.shape[:-2] + (0,))
    sign = 1.0 if permanent else -1.0
    cols = [rows[..., :, subsets[:, k]] for k in range(n_rows)]  # each (..., L, S): column k of each minor
    if n_rows == 1:
        return cols[0][..., 0, :]
    if n_rows == 2:
        return cols[0][..., 0, :] * cols[1][..., 1, :] + sign * cols[1][..., 0, :] * cols[0][..., 1, :]
    if n_rows == 3:
        (a, d, g), (b, e, h), (c, f, i) = ([col[..., r, :] for r in range(3)] for col in cols)
        return (a * (e * i + sign * f * h) + sign * b * (d * i + sign * f * g)
                + c * (d * h + sign * e * g))
    if not permanent:
        stacked = np.stack(cols, axis=-1)  # (..., L, S, L): row, subset, column
        return np.linalg.det(np.moveaxis(stacked, -3, -2))
    total = np.zeros(cols[0].shape[:-2] + cols[0].shape[-1:])
    for permutation in itertools.permutations(range(n_rows)):
        term = np.ones_like(total)
        for row, column in enumerate(permutation):
            term = term * cols[column][..., row, :]
        total += term
    return total


def _row_scale(columns: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """``max(|cbar_l|, max over true-arm columns |A_{l,j}|)`` (1 where that is 0), shape (..., L)."""
    n_costs = columns.shape[-2] - 1
    arm_columns = columns[..., n_costs:, :] != 0
    magnitude = np.max(np.abs(columns[..., :n_costs, :]) * arm_columns, axis=-1, initial=0.0)
    scale = np.maximum(magnitude, np.abs(bounds))
    return np.where(scale > 0, scale, 1.0)


def _power_of_two(scale: np.ndarray) -> np.ndarray:
    """The power of two nearest above ``scale`` (dividing by it is exact)."""
    return np.ldexp(1.0, np.frexp(scale)[1])


def _slot_sum(array: np.ndarray) -> np.ndarray:
    """Sum over the (short) slot axis -2, as explicit additions (faster than a strided reduction)."""
    total = array[..., 0, :].copy()
    for slot in range(1, array.shape[-2]):
        total += array[..., slot, :]
    return total


def _feasible_without_shares(x: np.ndarray, magnitude_x: np.ndarray, invertible: np.ndarray,
                             absolute_costs: np.ndarray, ones: np.ndarray, absolute_bounds: np.ndarray,
                             exact_scale: np.ndarray, slots: np.ndarray, tol: float) -> np.ndarray:
    """The feasibility test of the module notes without computing every share (the hot loop of the algorithms).

    A basis with no negative coordinate is feasible. A negative ``x_j`` is certainly too large when
    ``|x_j| > tol (E / e) (1 + sum_k |x_k|)``: every scaled entry and bound is at most ``E = max(1, max_l 1 / g_l)``
    (slack entries are ``1 / g_l``), so every row involves at most ``E (1 + sum_k |x_k|)``, while column ``j`` has
    an entry of at least ``e = min(1, min_l 1 / g_l)`` in some row (1 in the row of ones for an arm), so the share
    of ``x_j`` exceeds ``tol``. Only the remaining bases (almost always none) are judged in full."""
    n_slots = slots.shape[0]
    smallest = x[..., 0, :].copy()
    total = magnitude_x[..., 0, :].copy()
    for slot in range(1, n_slots):
        np.minimum(smallest, x[..., slot, :], out=smallest)  # NaN (singular) propagates
        total += magnitude_x[..., slot, :]
    inverse_scale = 1.0 / exact_scale
    ratio = (np.maximum(1.0, np.max(inverse_scale, axis=-1)) / np.minimum(1.0, np.min(inverse_scale, axis=-1)))
    limit = total
    limit += 1.0
    limit *= -tol * ratio[..., None]
    feasible = invertible & (smallest >= 0)
    uncertain = invertible & (smallest < 0) & (smallest >= limit)
    if not np.any(uncertain):
        return feasible
    where = np.nonzero(uncertain)
    batch, basis = where[:-1], where[-1]
    x_sub = np.moveaxis(x, -2, -1)[where]  # (m, L+1)
    columns_sub = slots[:, basis].T  # (m, L+1)
    passed = np.ones(basis.size, dtype=bool)
    for row in range(absolute_costs.shape[-2] + 1):
        if row < absolute_costs.shape[-2]:
            magnitudes = absolute_costs[..., row, :][batch] if batch else absolute_costs[row][None, :]
            bound = absolute_bounds[..., row][batch] if batch else np.full(basis.size, absolute_bounds[row])
        else:
            magnitudes = np.abs(ones)[batch] if batch else np.abs(ones)[None, :]
            bound = np.ones(basis.size)
        entries = np.take_along_axis(np.broadcast_to(magnitudes, (basis.size, magnitudes.shape[-1])), columns_sub,
                                     axis=-1)
        involved = bound + np.sum(entries * np.abs(x_sub), axis=-1)
        passed &= np.all(entries * np.maximum(-x_sub, 0.0) <= tol * involved[:, None], axis=-1)
    feasible[where] = passed
    return feasible


@dataclass(frozen=True)
class BasisValues:
    """Every basis of a (batch of) column set(s), evaluated (arrays broadcast over leading batch axes).

    Attributes
    ----------
    slot_x : ndarray, shape (..., L+1, C)
        Basic solution ``A_J^{-1} b``, slot-major (NaN for singular bases); :attr:`x` is its (..., C, L+1) view.
    values : ndarray, shape (..., C)
        Objective ``mu_J^T x_J`` (NaN for singular bases; defined for infeasible ones).
    invertible, feasible : ndarray of bool, shape (..., C)
    hadamard_ratio : ndarray, shape (..., C), or None
        ``|det A~_J| / prod ||A~_j||`` of the row-equilibrated matrix, in ``[0, 1]`` (informative).
    determinant : ndarray, shape (..., C), or None
        ``det A_J`` in the original units.
    slot_weighted_x : ndarray, shape (..., L+1, C), or None
        ``x_j u_j``: the scale on which nonnegativity and nonzeros are judged (slot-major; see the module notes).
        The three are None when evaluated with ``diagnostics=False``.
    cancellation_ratio : ndarray, shape (..., C)
        ``rho_J = |det A_J| / perm(M_J)`` in ``[0, 1]``: the singularity screen (module notes).
    """

    slot_x: np.ndarray
    values: np.ndarray
    invertible: np.ndarray
    feasible: np.ndarray
    hadamard_ratio: np.ndarray | None
    determinant: np.ndarray | None
    slot_weighted_x: np.ndarray | None
    cancellation_ratio: np.ndarray

    @property
    def x(self) -> np.ndarray:
        """Basic solutions, shape (..., C, L+1)."""
        return np.swapaxes(self.slot_x, -1, -2)

    @property
    def weighted_x(self) -> np.ndarray:
        """``x_j u_j``, shape (..., C, L+1)."""
        assert self.slot_weighted_x is not None, "the bases were evaluated without diagnostics"
        return np.swapaxes(self.slot_weighted_x, -1, -2)


def evaluate_bases(
    columns: np.ndarray,
    objective: np.ndarray,
    bounds: np.ndarray,
    layout: BasisLayout,
    *,
    singular_tol: float = SINGULAR_TOL,
    feasibility_tol: float = FEASIBILITY_TOL,
    pinned: np.ndarray | None = None,
    diagnostics: bool = True,
) -> BasisValues:
    """Evaluate all bases of ``layout`` for one or many matrices (low-level, no input checks).

    Parameters
    ----------
    columns : ndarray, shape (..., L+1, n)
        Columns of ``A`` (cost rows then the row of ones), ``n = layout.n_columns``.
    objective : ndarray, shape (..., n)
        The matching entries of ``mu``.
    bounds : ndarray, shape (L,) or (..., L)
        ``cbar``.
    layout : BasisLayout
        From :func:`basis_layout` ``(n, L+1)``.
    pinned : ndarray of bool, shape (n,) or (..., n), optional
        Columns that must be zero in a feasible basic solution (slacks outside the arm set; module notes).
    diagnostics : bool, default True
        Also compute the weighted values, the Hadamard ratios and the determinants. Without them (the hot loop
        of the algorithms, which only needs ``feasible`` and ``values``) those fields are None; the feasibility
        test is the same.
    """
    n_costs = columns.shape[-2] - 1
    bounds = np.asarray(bounds, dtype=float)
    ones = columns[..., n_costs, :]
    scale = _row_scale(columns, bounds)
    exact_scale = _power_of_two(scale)
    scaled_costs = columns[..., :n_costs, :] / exact_scale[..., :, None]
    scaled_bounds = bounds / exact_scale
    shifted = scaled_costs - scaled_bounds[..., :, None] * ones[..., None, :]
    magnitude = np.abs(scaled_costs) + np.abs(scaled_bounds)[..., :, None] * ones[..., None, :]
    slots = layout.slots  # (L+1, C): slot-major, the inner loops run over bases
    weights = np.take(_minors(shifted, layout.subsets), layout.slot_minor_ids, axis=-1)
    weights[..., 1::2, :] *= -1.0
    permanents = np.take(_minors(magnitude, layout.subsets, permanent=True), layout.slot_minor_ids, axis=-1)
    ones_j = np.take(ones, slots, axis=-1)
    denominator = _slot_sum(ones_j * weights)
    size = _slot_sum(ones_j * permanents)
    cancellation = np.abs(denominator) / np.where(size > 0, size, np.inf)
    invertible = cancellation > singular_tol
    x = weights
    x /= np.where(invertible, denominator, 1.0)[..., None, :]
    if not np.all(invertible):
        x = np.where(invertible[..., None, :], x, np.nan)
    values = _slot_sum(np.take(objective, slots, axis=-1) * x)
    # componentwise relative residual scale, row by row (L+1 small): |A_{l,j}| |x_j| / (|b_l| + sum_k |A_{l,k}| |x_k|)
    magnitude_x = np.abs(x)
    absolute_bounds = np.abs(scaled_bounds)
    if diagnostics or pinned is not None:
        largest_share = None
        for row in range(n_costs + 1):
            entries = np.take(np.abs(scaled_costs[..., row, :]), slots, axis=-1) if row < n_costs else ones_j
            spent = entries * magnitude_x
            involved = _slot_sum(spent) + (absolute_bounds[..., row, None] if row < n_costs else 1.0)
            share = spent / np.where(involved > 0, involved, 1.0)[..., None, :]  # spent = 0 where involved = 0
            largest_share = share if largest_share is None else np.maximum(largest_share, share)
        assert largest_share is not None  # (the loop above runs n_costs + 1 >= 1 times)
        weighted_x = np.copysign(largest_share, x)  # x_j u_j; NaN for singular bases
        feasible = np.all(weighted_x >= -feasibility_tol, axis=-2)  # NaN (singular) compares False
        if pinned is not None:
            pinned_j = np.asarray(pinned, dtype=bool)[..., slots]
            feasible &= np.all(~pinned_j | (weighted_x <= feasibility_tol), axis=-2)
    else:  # the same test without the shares: |A_{l,j}| max(-x_j, 0) <= tol (|b_l| + sum_k |A_{l,k}| |x_k|)
        weighted_x = None
        feasible = _feasible_without_shares(x, magnitude_x, invertible, np.abs(scaled_costs), ones, absolute_bounds,
                                            exact_scale, slots, feasibility_tol)
    if diagnostics:
        column_norm = np.sqrt(np.sum((columns[..., :n_costs, :] / scale[..., :, None]) ** 2, axis=-2) + ones**2)
        shift_factor = np.prod(exact_scale / scale, axis=-1)[..., None]
        ratio = np.abs(denominator) * shift_factor / np.prod(column_norm[..., slots], axis=-2)
        determinant = (-1.0) ** n_costs * denominator * np.prod(exact_scale, axis=-1)[..., None]
    else:
        ratio = determinant = None
    return BasisValues(x, values, invertible, feasible, ratio, determinant, weighted_x, cancellation)


@dataclass(frozen=True)
class OptimalBases:
    """The optimum of each matrix of a batch, read off its evaluated bases.

    Attributes
    ----------
    index : ndarray of int, shape (...)
        Position in ``layout.combos`` of the chosen optimal basis; ``-1`` when no basis is feasible.
    value : ndarray, shape (...)
        Optimal value (``-inf`` when infeasible).
    duals : ndarray, shape (..., L+1)
        ``lambda = A_B^{-T} mu_B`` of the chosen basis (NaN when infeasible).
    reduced_costs : ndarray, shape (..., n)
        ``A^T lambda - mu`` (the dual slacks; ``>= 0`` up to rounding at a dual-feasible basis).
    n_candidates : ndarray of int, shape (...)
        Number of feasible bases whose value ties with the optimum (more than one: degenerate vertex or
        several optimal vertices).
    """

    index: np.ndarray
    value: np.ndarray
    duals: np.ndarray
    reduced_costs: np.ndarray
    n_candidates: np.ndarray


def _basis_scaling(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Power-of-two row and column scalings ``(r, s)`` of a batch of square matrices: ``r_i = 1 / max_j |A_ij|``,
    then ``s_j = 1 / max_i |r_i A_ij|`` (exact; 1 for zero rows or columns)."""
    def power(largest: np.ndarray) -> np.ndarray:
        return np.ldexp(1.0, -np.frexp(np.where(largest > 0, largest, 1.0))[1])

    magnitude = np.abs(matrix)
    rows = power(np.max(magnitude, axis=-1))
    columns = power(np.max(magnitude * rows[..., :, None], axis=-2))
    return rows, columns


def _basis_duals(columns: np.ndarray, objective: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """``A_B^{-T} mu_B`` for a batch of bases (positions ``basis`` of shape (..., L+1)), solved on the
    equilibrated matrix ``R A_B S`` (``lambda = R (S A_B^T R)^{-1} S mu_B``) so that badly scaled rows keep their
    precision."""
    matrix = np.take_along_axis(columns, basis[..., None, :], axis=-1)
    rhs = np.take_along_axis(objective, basis, axis=-1)
    rows, scales = _basis_scaling(matrix)
    scaled = matrix * rows[..., :, None] * scales[..., None, :]
    solution = np.linalg.solve(np.swapaxes(scaled, -1, -2), (rhs * scales)[..., None])[..., 0]
    return solution * rows


def basis_duals(matrix: np.ndarray, objective: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """``A_B^{-T} mu_B`` for one basis (column positions ``basis``), solved on the equilibrated matrix."""
    return _basis_duals(matrix, objective, np.asarray(basis))


def dual_violation(matrix: np.ndarray, objective: np.ndarray, duals: np.ndarray, free: np.ndarray | None = None
                   ) -> float:
    """Largest relative dual infeasibility ``max_j -d_j / (|A_j|^T |lambda| + |mu_j| + |mu|_inf)`` over the columns
    ``free`` (default: all; pinned columns carry no dual constraint), 0 when dual feasible."""
    return float(_dual_violation(matrix, objective, duals, free))


def _dual_violation(columns: np.ndarray, objective: np.ndarray, duals: np.ndarray, free: np.ndarray | None
                    ) -> np.ndarray:
    """Largest relative dual infeasibility ``max_j -d_j / (|A_j|^T |lambda| + |mu_j| + |mu|_inf)`` over the free
    columns, ``d = A^T lambda - mu`` (0 when dual feasible; the last term is the objective's own scale, the floor
    under which a reduced cost is rounding); batched."""
    reduced = np.einsum("...ij,...i->...j", columns, duals) - objective
    involved = (np.einsum("...ij,...i->...j", np.abs(columns), np.abs(duals)) + np.abs(objective)
                + np.max(np.abs(objective), axis=-1, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(involved > 0, -reduced / np.where(involved > 0, involved, 1.0), 0.0)
    if free is not None:
        relative = np.where(free, relative, 0.0)
    return np.maximum(np.max(relative, axis=-1, initial=0.0), 0.0)


def select_optimal_bases(
    columns: np.ndarray,
    objective: np.ndarray,
    evaluated: BasisValues,
    layout: BasisLayout,
    *,
    value_tol: float = VALUE_TOL,
    dual_tol: float = FEASIBILITY_TOL,
    pinned: np.ndarray | None = None,
) -> OptimalBases:
    """Pick, for each matrix of a batch, an optimal basis whose dual solution is feasible.

    Among the feasible bases whose value is within ``value_tol * max(1, |v*|)`` of the best value ``v*``,
    the first one (in the lexicographic order of ``layout.combos``) whose ``lambda = A_B^{-T} mu_B`` satisfies
    ``A_j^T lambda - mu_j >= -dual_tol (|A_j|^T |lambda| + |mu_j| + |mu|_inf)`` for every column that is not
    ``pinned`` is chosen (the tolerance is relative to the magnitudes of each reduced cost, as for the primal).
    Such a basis
    exists at every optimum of a feasible bounded LP (the simplex method terminates at one), so the rule is
    deterministic and returns an optimal dual solution, also at degenerate optima where the dual is not unique.
    If rounding leaves every candidate slightly dual-infeasible, the candidate with the smallest violation is
    taken. Pinned columns (fixed at zero) carry no dual constraint.
    """
    batch_shape = evaluated.values.shape[:-1]
    n_rows = columns.shape[-2]
    free = None if pinned is None else ~np.asarray(pinned, dtype=bool)
    masked = np.where(evaluated.feasible, evaluated.values, -np.inf)
    best = np.max(masked, axis=-1, initial=-np.inf)
    finite = np.isfinite(best)
    threshold = np.where(finite, best - value_tol * np.maximum(1.0, np.abs(np.where(finite, best, 0.0))), np.inf)
    candidates = evaluated.feasible & (masked >= threshold[..., None])
    n_candidates = candidates.sum(axis=-1)
    index = np.where(finite, np.argmax(candidates, axis=-1) if candidates.shape[-1] else 0, -1)
    if layout.n_bases == 0:
        duals = np.full(batch_shape + (n_rows,), np.nan)
    else:
        safe_columns = np.where(finite[..., None, None], columns, _identity_like(columns, n_rows))
        duals = _basis_duals(safe_columns, objective, layout.combos[np.maximum(index, 0)])
    reduced = np.einsum("...ij,...i->...j", columns, duals) - objective
    violation = _dual_violation(columns, objective, duals, free)
    retry = finite & (n_candidates > 1) & (violation > dual_tol)
    for position in map(tuple, np.argwhere(retry)):
        chosen, chosen_duals, chosen_violation = None, None, np.inf
        for candidate in np.flatnonzero(candidates[position]):
            lam = _basis_duals(columns[position], objective[position], layout.combos[candidate])
            row_free = free if free is None or free.ndim == 1 else free[position]
            candidate_violation = float(_dual_violation(columns[position], objective[position], lam, row_free))
            if candidate_violation < chosen_violation:
                chosen, chosen_duals, chosen_violation = candidate, lam, candidate_violation
            if candidate_violation <= dual_tol:
                break
        index[position] = chosen
        duals[position] = chosen_duals
        reduced[position] = columns[position].T @ chosen_duals - objective[position]
    if layout.n_bases:  # A_B^T lambda = mu_B holds by construction: drop the rounding on the basis
        np.put_along_axis(reduced, layout.combos[np.maximum(index, 0)], 0.0, axis=-1)
    duals = np.where(finite[..., None], duals, np.nan)
    reduced = np.where(finite[..., None], reduced, np.nan)
    return OptimalBases(index, np.where(finite, best, -np.inf), duals, reduced, n_candidates)


def _identity_like(columns: np.ndarray, n_rows: int) -> np.ndarray:
    """A placeholder matrix (identity in the first columns) used for infeasible entries of a batch."""
    placeholder = np.zeros(columns.shape[-2:])
    placeholder[:, :min(n_rows, columns.shape[-1])] = np.eye(n_rows)[:, :min(n_rows, columns.shape[-1])]
    return placeholder


@dataclass(frozen=True)
class BasisEnumeration:
    """Every basis of the standard form (3) restricted to a set of columns.

    Attributes
    ----------
    arms : ndarray of int, shape (n,)
        The columns considered (true arms ``0..K-1``, slacks ``K..K+L-1``).
    bases : ndarray of int, shape (C(n, L+1), L+1)
        Each basis as sorted column indices of ``A`` (not positions in ``arms``).
    invertible, feasible : ndarray of bool, shape (C,)
        ``A_J`` invertible (Hadamard-ratio screen) and ``A_J^{-1} b >= 0``.
    x : ndarray, shape (C, L+1)
        Basic solution ``A_J^{-1} b`` in the order of ``bases`` (NaN when singular).
    values : ndarray, shape (C,)
        ``mu_J^T x_J`` (NaN when singular; also given for infeasible bases).
    hadamard_ratio, determinant : ndarray, shape (C,)
        Scale-free singularity measure and ``det A_J``.
    singular_tol, feasibility_tol : float
        The tolerances used.
    """

    arms: np.ndarray
    bases: np.ndarray
    invertible: np.ndarray
    feasible: np.ndarray
    x: np.ndarray
    values: np.ndarray
    hadamard_ratio: np.ndarray
    determinant: np.ndarray
    singular_tol: float
    feasibility_tol: float

    @property
    def n_bases(self) -> int:
        """Number of bases ``C(n, L+1)``."""
        return int(self.bases.shape[0])

    @property
    def feasible_bases(self) -> np.ndarray:
        """The feasible bases (rows of :attr:`bases`)."""
        return self.bases[self.feasible]

    def best_value(self) -> float:
        """Largest value over feasible bases (``-inf`` when there is none): the optimum of the restricted LP."""
        return float(np.max(self.values[self.feasible], initial=-np.inf))


def weighted_values(matrix: np.ndarray, rhs: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x_j u_j`` with ``u_j = max_l |A_{l,j}| / (|b_l| + sum_k |A_{l,k}| |x_k|)`` for a point ``x`` of
    ``A x = b``: the signed share of ``x_j`` in the rows it enters, on which zero is judged (module notes)."""
    involved = np.abs(rhs) + np.abs(matrix) @ np.abs(x)
    spent = np.abs(matrix) * np.abs(x)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(spent > 0, spent / involved[:, None], 0.0)
    return np.sign(x) * np.max(share, axis=0, initial=0.0)


def restricted_columns(problem: CBMAIProblem, arms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A_X, b, mu_X)`` for the columns ``arms``."""
    matrix, rhs, objective = problem.standard_form()
    return matrix[:, arms], rhs, objective[arms]


class ExtendedSystem(NamedTuple):
    """The standard form restricted to ``subset``, followed by the slack columns missing from it (module notes).

    Attributes
    ----------
    subset : ndarray of int
        The (sorted) columns of the restricted LP.
    column_ids : ndarray of int
        ``subset`` then the missing slack columns (when extended).
    pinned : ndarray of bool
        True for the appended slack columns, which must be zero in a feasible basic solution.
    columns : ndarray, shape (L+1, n)
        ``A`` on ``column_ids``.
    rhs : ndarray, shape (L+1,)
    objective : ndarray, shape (n,)
        ``mu`` on ``column_ids``.
    """

    subset: np.ndarray
    column_ids: np.ndarray
    pinned: np.ndarray
    columns: np.ndarray
    rhs: np.ndarray
    objective: np.ndarray

    @property
    def n_free(self) -> int:
        """Number of columns of ``subset`` (the first ones of ``columns``)."""
        return int(self.subset.size)


def extended_system(problem: CBMAIProblem, subset: np.ndarray, *, extend: bool = True) -> ExtendedSystem:
    """``(A_X, b, mu_X)`` for the columns ``subset``, with the missing slack columns appended as pinned columns
    when ``extend`` (so that subsets without a basis of their own have bases)."""
    present = set(subset.tolist())
    missing = np.array([column for column in range(problem.n_arms, problem.n_columns) if column not in present]
                       if extend else [], dtype=int)
    column_ids = np.concatenate([subset, missing]).astype(int)
    pinned = np.arange(column_ids.size) >= subset.size
    columns, rhs, objective = restricted_columns(problem, column_ids)
    return ExtendedSystem(subset, column_ids, pinned, columns, rhs, objective)


@dataclass(frozen=True)
class SubsetEvaluation:
    """Every basis of ``(A_X, b)`` for one instance, with what produced it (internal).

    ``columns`` are those of ``subset`` followed, when ``extend`` was asked and ``subset`` lacks slacks, by the
    missing slack columns (``pinned``: they must be zero; module notes); ``positions`` index ``columns``.
    """

    subset: np.ndarray
    columns: np.ndarray
    rhs: np.ndarray
    objective: np.ndarray
    layout: BasisLayout
    evaluated: BasisValues
    column_ids: np.ndarray
    pinned: np.ndarray

    @property
    def n_free(self) -> int:
        """Number of columns of ``subset`` (the first ones of ``columns``)."""
        return int(self.subset.size)


def evaluate_subset(problem: CBMAIProblem, subset: np.ndarray, singular_tol: float = SINGULAR_TOL,
                    feasibility_tol: float = FEASIBILITY_TOL, *, extend: bool = True) -> SubsetEvaluation:
    """Evaluate all bases of the (validated, sorted) column subset ``subset`` of ``problem``.

    With ``extend`` (default), the slack columns missing from ``subset`` are appended as pinned columns, so that
    subsets without a basis of their own (fewer than ``L+1`` independent columns) are solved correctly.
    """
    system = extended_system(problem, subset, extend=extend)
    layout = basis_layout(system.column_ids.size, problem.n_costs + 1)
    evaluated = evaluate_bases(system.columns, system.objective, system.rhs[:-1], layout, singular_tol=singular_tol,
                               feasibility_tol=feasibility_tol, pinned=system.pinned if system.pinned.any() else None)
    return SubsetEvaluation(subset, system.columns, system.rhs, system.objective, layout, evaluated,
                            system.column_ids, system.pinned)


def checked_evaluation(problem: Any, arms: Any, func: str, singular_tol: Any, feasibility_tol: Any, *,
                       extend: bool = True) -> SubsetEvaluation:
    """Validate the arguments shared by the public enumeration functions, then :func:`evaluate_subset`."""
    check_problem(problem, func)
    singular_tol, feasibility_tol = check_tolerances(func, singular_tol, feasibility_tol)
    return evaluate_subset(problem, as_arm_subset(arms, problem, func), singular_tol, feasibility_tol,
                           extend=extend)


def check_problem(problem: Any, func: str) -> CBMAIProblem:
    """``problem`` itself when it is a :class:`CBMAIProblem`; an ``InvalidArgumentError`` otherwise."""
    if not isinstance(problem, CBMAIProblem):
        fail(func, "problem", "a CBMAIProblem", problem)
    return problem


def check_tolerances(func: str, singular_tol: Any, feasibility_tol: Any) -> tuple[float, float]:
    """Validate the two enumeration tolerances (``0 <= singular_tol < 1``, ``feasibility_tol >= 0``)."""
    singular = as_float(singular_tol, func, "singular_tol", low=0.0, high=1.0, high_open=True)
    feasibility = as_float(feasibility_tol, func, "feasibility_tol", low=0.0)
    return singular, feasibility


def enumerate_bases(
    problem: CBMAIProblem,
    arms: Any = None,
    *,
    singular_tol: float = SINGULAR_TOL,
    feasibility_tol: float = FEASIBILITY_TOL,
) -> BasisEnumeration:
    """Evaluate every basis of ``(A_X, b)`` at once, ``X`` = ``arms`` (default: all ``K + L`` columns).

    A basis ``J`` is a set of ``L+1`` columns; when ``A_J`` is invertible its basic solution is
    ``x_J = A_J^{-1} b`` (zero elsewhere), feasible when ``x_J >= 0``, with value ``mu_J^T x_J``. The optimum of
    (3) restricted to ``X`` is the best value over feasible bases (fundamental theorem of LP).

    All ``C(|X|, L+1)`` bases are evaluated in one vectorised pass from the ``L x L`` minors of the shifted
    cost matrix (see the module notes); singular bases are screened by the Hadamard ratio of the
    row-equilibrated matrix.

    Parameters
    ----------
    problem : CBMAIProblem
    arms : sequence of int, optional
        Columns of ``A`` to use: true arms ``0..K-1`` and slacks ``K..K+L-1``.
    singular_tol : float, default 1e-11
        Hadamard-ratio threshold for singularity.
    feasibility_tol : float, default 1e-9
        Tolerance on ``x_j ||A~_j||`` for nonnegativity.

    Returns
    -------
    BasisEnumeration

    Examples
    --------
    >>> import allocopt
    >>> problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    >>> table = allocopt.enumerate_bases(problem)
    >>> table.bases.tolist()
    [[0, 1], [0, 2], [1, 2]]
    >>> table.feasible.tolist(), table.values.round(3).tolist()
    ([True, False, True], [0.6, 1.0, 0.2])
    """
    table = checked_evaluation(problem, arms, "enumerate_bases", singular_tol, feasibility_tol, extend=False)
    evaluated = table.evaluated
    # (checked_evaluation evaluates with diagnostics: the ratios and determinants are there)
    assert evaluated.hadamard_ratio is not None and evaluated.determinant is not None
    arrays = (table.subset, table.subset[table.layout.combos], evaluated.invertible, evaluated.feasible,
              np.ascontiguousarray(evaluated.x), evaluated.values, evaluated.hadamard_ratio, evaluated.determinant)
    for array in arrays:
        array.setflags(write=False)
    return BasisEnumeration(*arrays, singular_tol=float(singular_tol), feasibility_tol=float(feasibility_tol))
