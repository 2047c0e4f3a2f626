"""Hardness of a CBMAI instance (Section 4.1): the gaps Delta_0^2, Delta_J^2, Delta_a^2 and the bounds (12)-(15).

Only the means of the unknown arms ``U = {0..K0-1}`` can be perturbed; ``sigma_r`` and ``sigma_c`` weight
reward and cost moves. ``I*`` is the optimal support (Assumption 1 is required).

Basis value gap (9), reduced to a low-dimensional problem
    Write the BFS of ``J`` as ``x = (p^x, s^x)`` and that of ``I*`` as ``y = (p^y, s^y)``; ``p^x`` lies in the
    simplex of the true arms of ``J`` and ``p^y`` in that of ``I*``. For *fixed* weights ``(p^x, p^y)`` the
    constraints of (9) are linear in the perturbed means and separate:

    * rewards: ``r~ . (p^x - p^y) >= 0``, a half-space, so the reward cost is
      ``sigma_r^-2 max(0, -g)^2 / ||d_U||^2`` with ``d = p^x - p^y`` and ``g = r . d``;
    * cost row ``l``: ``c~_l . p^x <= cbar_l`` (``=`` when the slack ``l`` is not in ``J``) and the same with
      ``p^y`` and ``I*``; the cost is ``sigma_c^-2`` times the squared distance from ``c_{l,U}`` to the
      intersection of these two half-spaces/hyperplanes, computed exactly by enumerating its active sets.

    Hence ``Delta_J^2 = inf over (p^x, p^y) in a product of two simplices of F(p^x, p^y)`` with ``F`` in
    closed form, a problem in at most ``2L`` dimensions (the invertibility of ``A~_J`` and ``A~_I*`` is dropped,
    i.e. the infimum is taken over the closure of the feasible set of (9), which changes nothing except in
    non-generic configurations). ``F`` is continuous but not convex, so it is minimised globally by brute
    force and then refined: ``F`` is evaluated on a lattice of the two simplices (``resolution`` steps per
    edge, every basis at once), and from the ``n_starts`` best lattice points a vectorised pattern search
    (all ``3^d - 1`` lattice directions, step halved on failure down to ``1e-12``) converges to a local
    minimum. The returned value is attained by an explicit perturbation (:meth:`CBMAIHardness.witness`), so
    it is an upper bound on the infimum whose feasibility can be checked independently; it equals the
    infimum whenever the global minimiser lies in the basin of one of the starts (see docs/cbmai.md for the
    observed accuracy).

Infeasibility gap (11), exact
    ``I*`` stops being a feasible basis when some ``y_i`` reaches 0 or ``A~_I*`` becomes singular. With
    ``h_l(z) = (c_l - cbar_l 1)^T z`` the distance to ``{y_i = 0}`` is ``min_z sum_{l in E_i} h_l(z)^2 /
    ||z_U||^2`` over the arms of ``I* \\ {i}`` (``E_i``: rows whose slack is not in ``I* \\ {i}``), and the
    distance to the singular set is the same Rayleigh quotient over the arms of ``I*`` restricted to
    ``1^T z = 0``. Both are smallest generalised eigenvalues, computed exactly.

Bounds
    With ``N~ = (N - K0) / (3((L+1)/2 + log K0))``, Theorem 1 (12) with the constants of its proof (34)-(35):
    ``P(error) <= (K-1) 3^{L(L+1)/2} exp(-N~ Delta_0^2 / K)
    + K(K+1)/2 C(K+L-1, L) 3^{(L+1)^2} exp(-N~ min_{2<=i<=K} Delta_(L+i)^2 / i)``.
    (The proof writes ``L/2`` in (34)-(35); ``(L+1)/2``, as in (12) and (37), is the one the proof supports.)
    Exponents: (13) ``1/2 min(Delta_0^2, Delta_(L+2)^2)`` bounds every consistent algorithm, (14) the same
    over ``K`` for USLP, (15) ``min(Delta_0^2/K, min_i Delta_(L+i)^2/i) / (3((L+1)/2 + log K0))`` is SFSR's.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._result import Result, omit_from_dict
from .._validation import as_int, as_positive_float, fail
from ..exceptions import InvalidInstanceError
from .bases import basis_layout, check_problem
from .problem import CBMAIProblem
from .solve import solve_cbmai

__all__ = ["CBMAIHardness", "cbmai_hardness", "SIGMA_R", "SIGMA_C"]

SIGMA_R = 1.0
"""Default reward noise level of :func:`cbmai_hardness` (the paper's experiments)."""
SIGMA_C = 0.5
"""Default cost noise level of :func:`cbmai_hardness` (the paper's experiments)."""

_FEASIBILITY_SLACK = 1e-12  # tolerance (relative to the cost scale) of the closed-form constraint checks
_MIN_STEP = 1e-12
_COARSE_STEP = 1e-4
_FINITE_CAP = 1e100  # stands for an infeasible point inside scalar searches (keeps their arithmetic finite)


# ---------------------------------------------------------------------------------------------------------
# the objective F(p^x, p^y) of the reduced basis-gap problem, for a batch of bases and points
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _GapData:
    """Arrays describing a batch of ``B`` bases with the same numbers of true arms ``m_x`` (J) and ``m_y`` (I*)."""

    rewards_x: np.ndarray  # (B, m_x)
    rewards_y: np.ndarray  # (B, m_y)
    costs_x: np.ndarray  # (B, L, m_x)
    costs_y: np.ndarray  # (B, L, m_y)
    unknown_x: np.ndarray  # (B, m_x) float 0/1
    unknown_y: np.ndarray  # (B, m_y)
    shared: np.ndarray  # (B, m_x, m_y) float: same unknown arm
    equality_x: np.ndarray  # (B, L) bool: slack l not in J
    equality_y: np.ndarray  # (L,) bool: slack l not in I*
    bounds: np.ndarray  # (L,)
    weight_r: float  # sigma_r^-2
    weight_c: float  # sigma_c^-2
    tolerance: float

    def take(self, rows: np.ndarray) -> "_GapData":
        return _GapData(self.rewards_x[rows], self.rewards_y[rows], self.costs_x[rows], self.costs_y[rows],
                        self.unknown_x[rows], self.unknown_y[rows], self.shared[rows], self.equality_x[rows],
                        self.equality_y, self.bounds, self.weight_r, self.weight_c, self.tolerance)


def _satisfied(residual: np.ndarray, equality: np.ndarray, tol: float) -> np.ndarray:
    """Constraint ``a . w <= b`` (or ``=``) holds when its residual ``a . w - b`` is ``<= tol`` (``|.| <= tol``)."""
    return np.where(equality, np.abs(residual) <= tol, residual <= tol)


def _projection_terms(delta_x, delta_y, n_xx, n_yy, n_xy, equality_x, equality_y, tol):
    """Squared distance to ``{a_x . w (<=|=) b_x, a_y . w (<=|=) b_y}`` and the active set attaining it.

    ``delta_*`` are the residuals ``a_* . v - b_*`` at the current point ``v``; ``n_**`` the Gram entries of the
    normals. Returns ``(distance2, code)`` with code 0 = none active, 1 = x, 2 = y, 3 = both, -1 = empty set.
    """
    big = np.inf
    candidates = []
    # nothing active
    ok = _satisfied(delta_x, equality_x, tol) & _satisfied(delta_y, equality_y, tol)
    candidates.append(np.where(ok, 0.0, big))
    # x active
    with np.errstate(divide="ignore", invalid="ignore"):
        usable = n_xx > 0
        shift = np.where(usable, delta_x / np.where(usable, n_xx, 1.0), 0.0)
        moved_y = delta_y - shift * n_xy
        ok = usable & _satisfied(moved_y, equality_y, tol)
        candidates.append(np.where(ok, delta_x * shift, big))
        # y active
        usable = n_yy > 0
        shift = np.where(usable, delta_y / np.where(usable, n_yy, 1.0), 0.0)
        moved_x = delta_x - shift * n_xy
        ok = usable & _satisfied(moved_x, equality_x, tol)
        candidates.append(np.where(ok, delta_y * shift, big))
        # both active
        determinant = n_xx * n_yy - n_xy**2
        usable = determinant > 1e-14 * np.maximum(n_xx * n_yy, 1e-300)
        value = (n_yy * delta_x**2 - 2 * n_xy * delta_x * delta_y + n_xx * delta_y**2) / np.where(usable,
                                                                                                 determinant, 1.0)
        candidates.append(np.where(usable, np.maximum(value, 0.0), big))
    stacked = np.stack(candidates, axis=-1)
    code = np.argmin(stacked, axis=-1)
    distance = np.min(stacked, axis=-1)
    return distance, np.where(np.isfinite(distance), code, -1)


class _GapTerms(NamedTuple):
    """``F(p^x, p^y)`` at a batch of points (shape (B, P)) and the pieces a witness is built from."""

    total: np.ndarray
    reward_gap: np.ndarray  # r~ . (p^x - p^y) before perturbation, g
    direction: np.ndarray  # ||d_U||^2 with d = p^x - p^y
    delta_x: np.ndarray  # c_l . p^x - cbar_l, shape (B, P, L)
    delta_y: np.ndarray  # c_l . p^y - cbar_l, shape (B, P, L)
    n_xx: np.ndarray  # ||p^x_U||^2
    n_yy: np.ndarray  # ||p^y_U||^2
    n_xy: np.ndarray  # p^x_U . p^y_U (over the arms both bases share)
    codes: np.ndarray  # active constraints of each cost row: 0 none, 1 x, 2 y, 3 both, -1 empty set


def _gap_objective(data: _GapData, weights_x: np.ndarray, weights_y: np.ndarray) -> np.ndarray:
    """``F(p^x, p^y)`` for points of shape (B, P, m_x) and (B, P, m_y); returns (B, P)."""
    return _gap_terms(data, weights_x, weights_y).total


def _gap_terms(data: _GapData, weights_x: np.ndarray, weights_y: np.ndarray) -> _GapTerms:
    """:func:`_gap_objective` with the terms it is made of."""
    # batched matrix products: (B, P, m) @ (B, m, 1 + L) gives r . p and c_l . p at every point at once
    features_x = weights_x @ np.concatenate([data.rewards_x[:, :, None], np.swapaxes(data.costs_x, 1, 2)], axis=2)
    features_y = weights_y @ np.concatenate([data.rewards_y[:, :, None], np.swapaxes(data.costs_y, 1, 2)], axis=2)
    reward_gap = features_x[..., 0] - features_y[..., 0]
    n_xx = (weights_x**2 @ data.unknown_x[:, :, None])[..., 0]
    n_yy = (weights_y**2 @ data.unknown_y[:, :, None])[..., 0]
    n_xy = np.sum((weights_x @ data.shared) * weights_y, axis=-1)
    direction = np.maximum(n_xx + n_yy - 2 * n_xy, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        reward_term = np.where(reward_gap >= 0, 0.0,
                               np.where(direction > 0, reward_gap**2 / np.where(direction > 0, direction, 1.0),
                                        np.inf))
    delta_x = features_x[..., 1:] - data.bounds
    delta_y = features_y[..., 1:] - data.bounds
    cost_terms, codes = _projection_terms(delta_x, delta_y, n_xx[..., None], n_yy[..., None], n_xy[..., None],
                                          data.equality_x[:, None, :], data.equality_y, data.tolerance)
    total = data.weight_r * reward_term + data.weight_c * np.sum(cost_terms, axis=-1)
    return _GapTerms(total=total, reward_gap=reward_gap, direction=direction, delta_x=delta_x, delta_y=delta_y,
                     n_xx=n_xx, n_yy=n_yy, n_xy=n_xy, codes=codes)


# ---------------------------------------------------------------------------------------------------------
# global minimisation over a product of two simplices: lattice, then vectorised pattern search
# ---------------------------------------------------------------------------------------------------------
def _simplex_lattice(size: int, resolution: int) -> np.ndarray:
    """Points of the simplex in R^size whose coordinates are multiples of 1/resolution."""
    if size == 1:
        return np.ones((1, 1))
    points = []
    for bars in itertools.combinations(range(resolution + size - 1), size - 1):
        edges = (-1,) + bars + (resolution + size - 1,)
        points.append([edges[i + 1] - edges[i] - 1 for i in range(size)])
    return np.array(points, dtype=float) / resolution


def _lattice_size(size: int, resolution: int) -> int:
    return math.comb(resolution + size - 1, size - 1)


def _lattice_resolution(size_x: int, size_y: int, max_points: int, cap: int = 256) -> int:
    """The largest resolution (at least 1, at most ``cap``) whose product lattice has ``<= max_points`` points."""
    resolution = 1
    while resolution < cap and (_lattice_size(size_x, resolution + 1) * _lattice_size(size_y, resolution + 1)
                                <= max_points):
        resolution += 1
    return resolution


def _stencil(size_x: int, size_y: int) -> tuple[np.ndarray, np.ndarray]:
    """All moves ``sum_i s_i (e_i - e_0)``, ``s in {-1,0,1}^d \\ {0}``, split into the x and y parts."""
    dims = (size_x - 1) + (size_y - 1)
    if dims == 0:
        return np.zeros((0, size_x)), np.zeros((0, size_y))
    signs = np.array([s for s in itertools.product((-1.0, 0.0, 1.0), repeat=dims) if any(s)])
    move_x = np.zeros((signs.shape[0], size_x))
    move_y = np.zeros((signs.shape[0], size_y))
    move_x[:, 1:] = signs[:, :size_x - 1]
    move_x[:, 0] = -signs[:, :size_x - 1].sum(axis=1)
    move_y[:, 1:] = signs[:, size_x - 1:]
    move_y[:, 0] = -signs[:, size_x - 1:].sum(axis=1)
    return move_x, move_y


def _sign_vectors(dims: int) -> np.ndarray:
    """``{-1, 0, 1}^dims`` (the zero vector first)."""
    return np.array(sorted(itertools.product((-1, 0, 1), repeat=dims), key=lambda s: any(s)), dtype=np.intp)


@lru_cache(maxsize=32)
def _lattice_neighbours(size_x: int, size_y: int, resolution: int) -> np.ndarray:
    """For the product lattice of :func:`_simplex_lattice`, the index of each point's neighbours one lattice step
    away in one of the two simplices (``-1`` outside); shape (G, 3^(m_x-1) + 3^(m_y-1) - 2)."""

    def moves_of(size: int) -> tuple[np.ndarray, np.ndarray]:
        points = np.rint(_simplex_lattice(size, resolution) * resolution).astype(np.intp)
        index = {tuple(point): i for i, point in enumerate(points)}
        signs = _sign_vectors(size - 1)
        table = np.full((points.shape[0], signs.shape[0]), -1, dtype=np.intp)
        for i, point in enumerate(points):
            for k, sign in enumerate(signs):
                moved = point.copy()
                moved[1:] += sign
                moved[0] -= sign.sum()
                table[i, k] = index.get(tuple(moved), -1)
        return table, signs

    table_x, signs_x = moves_of(size_x)
    table_y, signs_y = moves_of(size_y)
    n_y = table_y.shape[0]
    # moves of one simplex at a time (the other fixed): enough to flag local minima, far fewer than 3^d - 1
    pairs = [(kx, 0) for kx in range(1, signs_x.shape[0])] + [(0, ky) for ky in range(1, signs_y.shape[0])]
    grid_x = np.repeat(np.arange(table_x.shape[0]), n_y)
    grid_y = np.tile(np.arange(n_y), table_x.shape[0])
    neighbours = np.full((grid_x.size, len(pairs)), -1, dtype=np.intp)
    for column, (kx, ky) in enumerate(pairs):
        nx, ny = table_x[grid_x, kx], table_y[grid_y, ky]
        neighbours[:, column] = np.where((nx >= 0) & (ny >= 0), nx * n_y + ny, -1)
    neighbours.setflags(write=False)
    return neighbours


def _lattice_starts(data: _GapData, resolution: int, n_starts: int) -> tuple[np.ndarray, np.ndarray]:
    """Start points: the ``n_starts`` lowest local minima of ``F`` on the product lattice (then the lowest
    other lattice points when there are fewer minima). Returns arrays (B, n_starts, m_x) and (B, n_starts, m_y)."""
    n_bases, size_x, size_y = data.rewards_x.shape[0], data.rewards_x.shape[1], data.rewards_y.shape[1]
    lattice_x, lattice_y = _simplex_lattice(size_x, resolution), _simplex_lattice(size_y, resolution)
    grid_x = np.repeat(lattice_x, lattice_y.shape[0], axis=0)
    grid_y = np.tile(lattice_y, (lattice_x.shape[0], 1))
    neighbours = _lattice_neighbours(size_x, size_y, resolution)
    n_grid = grid_x.shape[0]
    starts = min(n_starts, n_grid)
    chosen = np.zeros((n_bases, starts), dtype=np.intp)
    chunk = max(1, 400_000 // max(n_grid * max(1, neighbours.shape[1] // 4), 1))
    for first in range(0, n_bases, chunk):
        rows = np.arange(first, min(first + chunk, n_bases))
        values = _gap_objective(data.take(rows), np.broadcast_to(grid_x, (rows.size,) + grid_x.shape),
                                np.broadcast_to(grid_y, (rows.size,) + grid_y.shape))
        padded = np.concatenate([values, np.full((rows.size, 1), np.inf)], axis=1)
        lowest_neighbour = np.min(padded[:, neighbours], axis=2, initial=np.inf)
        local_minimum = values <= lowest_neighbour
        # local minima first (by value), then every other point (by value): two stable sorts
        order = np.argsort(values, axis=1, kind="stable")
        order = np.take_along_axis(order, np.argsort(~np.take_along_axis(local_minimum, order, axis=1), axis=1,
                                                     kind="stable"), axis=1)
        chosen[rows] = order[:, :starts]
    return grid_x[chosen], grid_y[chosen]


def _anchored_starts(data: _GapData, anchor_y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """One start per basis: ``p^y`` at ``I*``'s true BFS weights and ``p^x`` the best point of a fine lattice of
    its simplex (small perturbations keep ``I*``'s weights close to the true ones)."""
    n_bases, size_x = data.rewards_x.shape
    resolution = _lattice_resolution(size_x, 1, max_points)
    lattice_x = _simplex_lattice(size_x, resolution)
    point_y = np.broadcast_to(anchor_y, (n_bases, 1, anchor_y.size))
    chosen = np.zeros(n_bases, dtype=np.intp)
    chunk = max(1, 200_000 // lattice_x.shape[0])
    for first in range(0, n_bases, chunk):
        rows = np.arange(first, min(first + chunk, n_bases))
        values = _gap_objective(data.take(rows), np.broadcast_to(lattice_x, (rows.size,) + lattice_x.shape),
                                np.broadcast_to(anchor_y, (rows.size, lattice_x.shape[0], anchor_y.size)))
        chosen[rows] = np.argmin(values, axis=1)
    return lattice_x[chosen][:, None, :], point_y


def _pattern_search(data: _GapData, point_x: np.ndarray, point_y: np.ndarray, steps: np.ndarray,
                    min_step: float = _MIN_STEP, max_iterations: int = 400, fixed: str | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised pattern search from one start per row of ``data`` until every step is below ``min_step``.

    Each iteration tries all ``3^d - 1`` moves of :func:`_stencil` at the row's step (only those of ``p^y`` when
    ``fixed="x"``, of ``p^x`` when ``fixed="y"``), moves to the best improvement or halves the step. Returns
    (values, p^x, p^y, steps); the arrays passed in are updated."""
    size_x, size_y = point_x.shape[1], point_y.shape[1]
    value = _gap_objective(data, point_x[:, None, :], point_y[:, None, :])[:, 0]
    move_x, move_y = _stencil(size_x, size_y)
    if fixed is not None:  # only the other simplex moves
        still = ~np.any(move_x != 0, axis=1) if fixed == "x" else ~np.any(move_y != 0, axis=1)
        move_x, move_y = move_x[still], move_y[still]
    active = np.isfinite(value) & (move_x.shape[0] > 0) & (steps >= min_step)
    for _ in range(max_iterations):
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        trial_x = point_x[rows, None, :] + steps[rows, None, None] * move_x
        trial_y = point_y[rows, None, :] + steps[rows, None, None] * move_y
        inside = (np.min(trial_x, axis=-1) >= -1e-15) & (np.min(trial_y, axis=-1) >= -1e-15)
        trial_x, trial_y = np.clip(trial_x, 0.0, None), np.clip(trial_y, 0.0, None)
        trial_x /= trial_x.sum(axis=-1, keepdims=True)
        trial_y /= trial_y.sum(axis=-1, keepdims=True)
        trial_value = np.where(inside, _gap_objective(data.take(rows), trial_x, trial_y), np.inf)
        best = np.argmin(trial_value, axis=1)
        best_value = trial_value[np.arange(rows.size), best]
        improved = best_value < value[rows] - 1e-15 * np.maximum(1.0, np.abs(value[rows]))
        moved = rows[improved]
        point_x[moved] = trial_x[improved, best[improved]]
        point_y[moved] = trial_y[improved, best[improved]]
        value[moved] = best_value[improved]
        halved = rows[~improved]
        steps[halved] *= 0.5
        active[halved[steps[halved] < min_step]] = False
    return value, point_x, point_y, steps


def _minimise_gaps(data: _GapData, resolution: int, n_starts: int, anchor_y: np.ndarray, max_points: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Global minimisation of ``F`` for every basis of ``data``; returns (values, p^x, p^y)."""
    n_bases, size_x, size_y = data.rewards_x.shape[0], data.rewards_x.shape[1], data.rewards_y.shape[1]
    lattice_x, lattice_y = _lattice_starts(data, resolution, n_starts)
    anchored_x, anchored_y = _anchored_starts(data, anchor_y, max_points)
    start_x = np.concatenate([lattice_x, anchored_x], axis=1)
    start_y = np.concatenate([lattice_y, anchored_y], axis=1)
    per_basis = start_x.shape[1]
    owner = np.repeat(np.arange(n_bases), per_basis)
    point_x, point_y = start_x.reshape(-1, size_x).copy(), start_y.reshape(-1, size_y).copy()
    steps = np.full(owner.size, 1.0 / resolution)
    # coarse phase from every start, then only the starts within 1% of their basis's best continue
    value, point_x, point_y, steps = _pattern_search(data.take(owner), point_x, point_y, steps, _COARSE_STEP)
    grouped = value.reshape(n_bases, per_basis)
    best = np.min(grouped, axis=1, keepdims=True)
    keep = (grouped <= best + 1e-2 * np.abs(best) + 1e-300).ravel() & np.isfinite(value)
    rows = np.flatnonzero(keep)
    value[rows], point_x[rows], point_y[rows], _ = _pattern_search(data.take(owner[rows]), point_x[rows],
                                                                   point_y[rows], steps[rows])
    value = value.reshape(n_bases, per_basis)
    winner = np.argmin(value, axis=1)
    pick = np.arange(n_bases) * per_basis + winner
    return value[np.arange(n_bases), winner], point_x[pick], point_y[pick]


# ---------------------------------------------------------------------------------------------------------
# infeasibility gap: smallest generalised Rayleigh quotients
# ---------------------------------------------------------------------------------------------------------
def _min_rayleigh(numerator: np.ndarray, denominator: np.ndarray, subspace: np.ndarray | None = None
                  ) -> tuple[float, np.ndarray | None]:
    """``min z^T P z / z^T Q z`` over ``z != 0`` (in ``range(subspace)``), ``Q`` PSD; also a minimiser."""
    if subspace is not None:
        numerator = subspace.T @ numerator @ subspace
        denominator = subspace.T @ denominator @ subspace
    size = numerator.shape[0]
    if size == 0:
        return np.inf, None
    q_values, q_vectors = np.linalg.eigh(denominator)
    scale = max(1.0, float(np.max(np.abs(numerator), initial=0.0)))
    positive = q_values > 1e-12 * max(1.0, float(np.max(q_values, initial=0.0)))
    range_basis, null_basis = q_vectors[:, positive], q_vectors[:, ~positive]
    p_rr = range_basis.T @ numerator @ range_basis
    if null_basis.shape[1]:
        p_nn = null_basis.T @ numerator @ null_basis
        p_rn = range_basis.T @ numerator @ null_basis
        nn_values, nn_vectors = np.linalg.eigh(p_nn)
        if nn_values[0] <= 1e-12 * scale:  # z supported off the movable arms already on the boundary
            z = null_basis @ nn_vectors[:, 0]
            return 0.0, (subspace @ z if subspace is not None else z)
        p_rr = p_rr - p_rn @ np.linalg.solve(p_nn, p_rn.T)
    if range_basis.shape[1] == 0:
        return np.inf, None
    inv_sqrt = 1.0 / np.sqrt(q_values[positive])
    scaled = inv_sqrt[:, None] * p_rr * inv_sqrt[None, :]
    values, vectors = np.linalg.eigh((scaled + scaled.T) / 2)
    w_range = inv_sqrt * vectors[:, 0]
    z = range_basis @ w_range
    if null_basis.shape[1]:
        z = z - null_basis @ np.linalg.solve(null_basis.T @ numerator @ null_basis,
                                             null_basis.T @ numerator @ range_basis @ w_range)
    return max(0.0, float(values[0])), (subspace @ z if subspace is not None else z)


# ---------------------------------------------------------------------------------------------------------
# low-dimensional cases the lattice cannot reach, treated exactly
# ---------------------------------------------------------------------------------------------------------
def _basic_solution(problem: CBMAIProblem, costs: np.ndarray, basis: np.ndarray) -> np.ndarray | None:
    """``A_J^{-1} b`` for the costs ``costs`` (None when ``A_J`` is singular)."""
    matrix, rhs, _ = problem.with_means(costs=costs).standard_form()
    sub = matrix[:, basis]
    if abs(np.linalg.det(sub)) <= 1e-13 * max(1.0, float(np.prod(np.linalg.norm(sub, axis=0)))):
        return None
    return np.linalg.solve(sub, rhs)


def _one_side_fixed(data: _GapData, fixed: str, point: np.ndarray, n_starts: int, max_points: int
                    ) -> tuple[float, np.ndarray, np.ndarray]:
    """``min F`` over one simplex with the other weights fixed at ``point`` (a basis whose true arms are all
    known has the fixed BFS ``A_J^{-1} b``: its weights cannot move, and no lattice point need reach them).
    Fine lattice of the free simplex, then pattern search on it alone."""
    size_free = data.rewards_y.shape[1] if fixed == "x" else data.rewards_x.shape[1]
    resolution = _lattice_resolution(size_free, 1, max_points, cap=4096)
    lattice = _simplex_lattice(size_free, resolution)
    fixed_points = np.broadcast_to(point, (1, lattice.shape[0], point.size))
    if fixed == "x":
        values = _gap_objective(data, fixed_points, lattice[None])[0]
    else:
        values = _gap_objective(data, lattice[None], fixed_points)[0]
    order = np.argsort(values, kind="stable")[:n_starts]
    order = order[np.isfinite(values[order])]
    if order.size == 0:
        return np.inf, np.full(data.rewards_x.shape[1], np.nan), np.full(data.rewards_y.shape[1], np.nan)
    owner = np.zeros(order.size, dtype=np.intp)
    free = lattice[order].copy()
    held = np.repeat(point[None, :], order.size, axis=0)
    point_x, point_y = (held, free) if fixed == "x" else (free, held)
    value, point_x, point_y, _ = _pattern_search(data.take(owner), point_x.copy(), point_y.copy(),
                                                 np.full(order.size, 1.0 / resolution), fixed=fixed)
    best = int(np.argmin(value))
    return float(value[best]), point_x[best], point_y[best]


def _shared_single_arm_gap(problem: CBMAIProblem, support: np.ndarray, basis: np.ndarray, arm: int,
                           sigma_r: float, sigma_c: float, upper: float
                           ) -> tuple[float, tuple[np.ndarray, np.ndarray] | None]:
    """Exact ``Delta_J^2`` when ``L = 1`` and the only unknown arm of ``J u I*`` is ``arm``, in both bases.

    The perturbation is ``(r~_a, t)`` with ``t = c~_{0,a}``. For fixed ``t`` both BFSs are fixed; each
    coordinate is a ratio of affine functions of ``t`` (Cramer's rule with one column affine in ``t``), so the
    set where both are feasible is a union of intervals whose ends are the roots of those affine functions.
    Given ``t``, the cheapest reward move is in closed form: with ``g(t)`` the value of ``J`` minus that of
    ``I*`` at the true rewards and ``delta(t) = x^J_a - x^{I*}_a``, it is ``max(0, -g)^2 / delta^2``. Hence
    ``Delta_J^2 = min_t sigma_c^-2 (t - c_a)^2 + sigma_r^-2 max(0, -g(t))^2 / delta(t)^2`` over the feasible
    intervals, a one-dimensional problem: the minimum of each interval is bracketed on a fine grid and refined
    by bounded Brent iterations, and the interval ends are evaluated too (the infimum over the closure).
    Returns the value and the witness ``(r~, c~)``."""
    from scipy.optimize import minimize_scalar

    rewards, costs = problem.rewards, problem.costs
    cost_a = float(costs[0, arm])
    matrix, rhs, objective_vector = problem.standard_form()

    def affine(basis_columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(value at t = 0, slope)`` of ``det A_J(t)`` (first entry) and of Cramer's numerators (then)."""
        position = list(basis_columns).index(arm)
        samples = []
        for t in (0.0, 1.0):
            sub = np.array(matrix[:, basis_columns], dtype=float)
            sub[0, position] = t
            row = [np.linalg.det(sub)]
            for i in range(sub.shape[1]):
                replaced = sub.copy()
                replaced[:, i] = rhs
                row.append(np.linalg.det(replaced))
            samples.append(row)
        at_zero, at_one = np.array(samples[0]), np.array(samples[1])
        return at_zero, at_one - at_zero

    def solutions(t: np.ndarray, coefficients: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        at_zero, slope = coefficients
        values = at_zero[:, None] + slope[:, None] * t[None, :]
        determinant = values[0]
        usable = np.abs(determinant) > 1e-13 * (np.abs(at_zero[0]) + np.abs(slope[0]) * np.abs(t) + 1e-300)
        x = values[1:] / np.where(usable, determinant, 1.0)
        return x, usable

    basis_affine, support_affine = affine(basis), affine(support)
    mu_basis, mu_support = objective_vector[basis], objective_vector[support]
    slot_basis, slot_support = list(basis).index(arm), list(support).index(arm)

    def evaluate(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``G(t)`` and the reward move, vectorised over ``t``."""
        x_basis, ok_basis = solutions(t, basis_affine)
        x_support, ok_support = solutions(t, support_affine)
        feasible = ok_basis & ok_support & (x_basis.min(axis=0) >= 0) & (x_support.min(axis=0) >= 0)
        gap = mu_basis @ x_basis - mu_support @ x_support
        delta = x_basis[slot_basis] - x_support[slot_support]
        with np.errstate(divide="ignore", invalid="ignore"):
            move = np.where(gap >= 0, 0.0, np.where(delta != 0, -gap / np.where(delta != 0, delta, 1.0), np.inf))
        value = sigma_c**-2 * (t - cost_a) ** 2 + np.where(np.isfinite(move), sigma_r**-2 * move**2, np.inf)
        return np.where(feasible, value, np.inf), move

    def roots(coefficients: tuple[np.ndarray, np.ndarray]) -> list[float]:
        at_zero, slope = coefficients
        return [float(-a / b) for a, b in zip(at_zero, slope) if b != 0]

    scale = max(1.0, abs(cost_a), float(np.max(np.abs(problem.bounds))))
    radius = sigma_c * math.sqrt(upper) * 1.001 if np.isfinite(upper) else 1e3 * scale
    breaks = sorted({cost_a - radius, cost_a + radius}
                    | {root for root in roots(basis_affine) + roots(support_affine) if abs(root - cost_a) < radius})
    candidates = []
    for low, high in zip(breaks[:-1], breaks[1:]):
        if high - low <= 1e-15 * scale:
            continue
        grid = np.linspace(low, high, 2001)[1:-1]
        values, _ = evaluate(grid)
        finite = np.flatnonzero(np.isfinite(values))
        if finite.size == 0:
            continue
        # the interval ends, approached from inside (the infimum over the closure)
        for end, inside in ((low, grid[finite[0]]), (high, grid[finite[-1]])):
            candidates += [end + (inside - end) * fraction for fraction in (1e-4, 1e-8, 1e-12)]
        local = int(np.argmin(values))
        left, right = grid[max(local - 1, 0)], grid[min(local + 1, grid.size - 1)]
        refined = minimize_scalar(lambda t: min(float(evaluate(np.array([t]))[0][0]), _FINITE_CAP),
                                  bounds=(float(left), float(right)), method="bounded",
                                  options={"xatol": 1e-14 * scale, "maxiter": 500})
        candidates += [float(grid[local]), float(refined.x)]
    if not candidates:
        return np.inf, None
    points = np.array(candidates)
    values, moves = evaluate(points)
    pick = int(np.argmin(values))
    if not np.isfinite(values[pick]):
        return np.inf, None
    best, best_t, best_move = float(values[pick]), float(points[pick]), float(moves[pick])
    witness_costs = costs.copy()
    witness_costs[0, arm] = best_t
    witness_rewards = rewards.copy()
    witness_rewards[arm] += best_move * (1 + 1e-12)
    return best, (witness_rewards, witness_costs)


def _exact_low_dimensional(problem: CBMAIProblem, support: tuple[int, ...], bases: np.ndarray, gaps: np.ndarray,
                           weights_x: np.ndarray, weights_y: np.ndarray, sigma_r: float, sigma_c: float,
                           n_starts: int, max_points: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Replace the lattice values of the bases the lattice cannot reach by exact ones (in place); returns the
    explicit witnesses of the one-dimensional cases, by basis row.

    * A basis whose true arms are all known has a fixed BFS: its weights are fixed at it (``inf`` when that BFS
      is infeasible), and ``F`` is minimised over the other simplex only. Likewise when every arm of ``I*`` is
      known.
    * ``L = 1`` and the only unknown arm of ``J u I*`` belongs to both: :func:`_shared_single_arm_gap`.
    """
    n_arms, unknown = problem.n_arms, problem.n_unknown
    support_array = np.array(support)
    support_arms = support_array[support_array < n_arms]
    support_known = bool(np.all(support_arms >= unknown))
    support_point = _basic_solution(problem, problem.costs, support_array)
    witnesses: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for row, basis in enumerate(bases):
        if np.array_equal(basis, support_array):
            continue
        arms = basis[basis < n_arms]
        basis_known = bool(np.all(arms >= unknown))
        moving = sorted(set(arms[arms < unknown].tolist()) | set(support_arms[support_arms < unknown].tolist()))
        if not moving:
            continue  # nothing can move: the lattice value (inf unless J already overtakes I*) stands
        if (problem.n_costs == 1 and len(moving) == 1 and moving[0] in arms and moving[0] in support_arms):
            value, witness = _shared_single_arm_gap(problem, support_array, basis, moving[0], sigma_r, sigma_c,
                                                    float(gaps[row]))
            if value <= gaps[row] or not np.isfinite(gaps[row]):
                gaps[row] = value
                if witness is not None:
                    witnesses[row] = witness
            continue
        if not (basis_known or support_known):
            continue
        data, _, _ = _gap_batch(problem, support, bases[row:row + 1], sigma_r, sigma_c)
        if basis_known:
            point = _basic_solution(problem, problem.costs, basis)
            if point is None or point.min() < 0:
                gaps[row] = np.inf
                continue
            fixed, held = "x", point[basis < n_arms]
        else:
            assert support_point is not None  # (the optimal support's basis matrix is invertible)
            fixed, held = "y", support_point[support_array < n_arms]
        value, point_x, point_y = _one_side_fixed(data, fixed, held, n_starts, max_points)
        gaps[row] = value
        weights_x[row, :point_x.size] = point_x
        weights_y[row] = point_y
    return witnesses


# ---------------------------------------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class CBMAIHardness(Result):
    """Hardness gaps and error bounds of a CBMAI instance (Section 4 of the paper).

    The core fields (:class:`~allocopt._result.Result`) come first. :func:`cbmai_hardness` raises instead of
    returning when the gaps are not defined, so the status is always ``"computed"``.

    Attributes
    ----------
    status : {"computed"}
    success : bool
    message : str
        The search settings behind the basis gaps.
    method : {"lattice-pattern-search"}
        How the basis gaps were minimised (the infeasibility gap is exact).
    time : float
        Seconds spent. ``elapsed`` is a deprecated alias.
    problem : CBMAIProblem
        The instance (not part of :meth:`to_dict`).
    optimal_support : tuple of int
        ``I*`` (true arms and slacks ``K + l``).
    sigma_r, sigma_c : float
    bases : ndarray of int, shape (C(K+L, L+1), L+1)
        Every basis (sorted columns).
    basis_gaps : ndarray, shape (C,)
        ``Delta_J^2`` (9) of each basis (0 for ``I*``; ``inf`` when no perturbation of the unknown arms can
        make ``J`` overtake ``I*``).
    arm_gaps : ndarray, shape (K+L,)
        ``Delta_a^2 = min_{J ∋ a} Delta_J^2`` (10).
    sorted_arms, sorted_gaps : ndarray, shape (K+L,)
        Columns in increasing order of ``Delta_a^2`` (ties by column index) and the gaps
        ``Delta_(1)^2 <= ... <= Delta_(K+L)^2``.
    infeasibility_gap : float
        ``Delta_0^2`` (11).
    consistent_exponent : float
        (13): ``1/2 min(Delta_0^2, Delta_(L+2)^2)``, an upper bound on ``limsup -(1/N) log P(error)`` of every
        consistent algorithm.
    uslp_exponent : float
        (14): the same divided by ``K``, an upper bound on USLP's exponent.
    sfsr_exponent : float
        (15): a lower bound on SFSR's ``liminf -(1/N) log P(error)``.
    resolution, n_starts : int
        Lattice resolution and number of pattern-search starts used for the basis gaps.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"computed"})

    problem: CBMAIProblem = omit_from_dict()
    optimal_support: tuple[int, ...]
    sigma_r: float
    sigma_c: float
    bases: np.ndarray
    basis_gaps: np.ndarray
    arm_gaps: np.ndarray
    sorted_arms: np.ndarray
    sorted_gaps: np.ndarray
    infeasibility_gap: float
    consistent_exponent: float
    uslp_exponent: float
    sfsr_exponent: float
    resolution: int
    n_starts: int
    _weights_x: np.ndarray = omit_from_dict(repr=False)
    _weights_y: np.ndarray = omit_from_dict(repr=False)
    _infeasibility_witness: np.ndarray | None = omit_from_dict(repr=False)
    _exact_witnesses: dict = omit_from_dict(default_factory=dict, repr=False)

    @property
    def elapsed(self) -> float:
        """Deprecated alias of :attr:`time` (removed in the next release)."""
        warnings.warn("CBMAIHardness.elapsed is deprecated; use CBMAIHardness.time", DeprecationWarning,
                      stacklevel=2)
        return self.time

    def _scaled_budget(self, budget: Any) -> np.ndarray:
        problem = self.problem
        requirement = f"a number or array of numbers >= n_unknown = {problem.n_unknown} (a budget N)"
        if isinstance(budget, (str, bytes, bool, np.bool_)):
            fail("CBMAIHardness.bound", "budget", requirement, budget)
        given = budget
        try:
            budget = np.asarray(budget, dtype=float)
        except (TypeError, ValueError):
            fail("CBMAIHardness.bound", "budget", requirement, given)
        if not np.all(np.isfinite(budget)) or np.any(budget < problem.n_unknown):
            fail("CBMAIHardness.bound", "budget", requirement, given)
        return (budget - problem.n_unknown) / (3 * ((problem.n_costs + 1) / 2 + math.log(problem.n_unknown)))

    def bound(self, budget: ArrayLike) -> np.ndarray:
        """Theorem 1 (12) with the constants of its proof: an upper bound on SFSR's error probability at
        budget ``N`` (array-like; the bound exceeds 1 for small ``N``)."""
        problem = self.problem
        n_arms, n_costs = problem.n_arms, problem.n_costs
        scaled = self._scaled_budget(budget)
        tail = self._elimination_rate()
        infeasibility = (n_arms - 1) * 3.0 ** (n_costs * (n_costs + 1) / 2) * np.exp(
            -scaled * self.infeasibility_gap / n_arms)
        elimination = (n_arms * (n_arms + 1) / 2 * math.comb(n_arms + n_costs - 1, n_costs)
                       * 3.0 ** ((n_costs + 1) ** 2) * np.exp(-scaled * tail))
        return infeasibility + elimination

    def _elimination_rate(self) -> float:
        return _elimination_rate(self.sorted_gaps, self.problem.n_arms, self.problem.n_costs)

    def basis_gap(self, basis: ArrayLike) -> float:
        """``Delta_J^2`` of the basis ``J`` (any order of its columns)."""
        return float(self.basis_gaps[self._basis_row(basis)])

    def _basis_row(self, basis: Any, func: str = "CBMAIHardness.basis_gap") -> int:
        size, n_columns = self.bases.shape[1], self.problem.n_columns
        requirement = (f"a basis of this instance, L+1 = {size} distinct column indices in 0..{n_columns - 1} "
                       f"(what was given is not a basis)")
        if isinstance(basis, (str, bytes)):
            fail(func, "basis", requirement, basis)
        try:
            array = np.asarray(basis)
        except (TypeError, ValueError):
            fail(func, "basis", requirement, basis)
        if (array.ndim != 1 or array.size != size or array.dtype == bool
                or not np.issubdtype(array.dtype, np.integer)):
            fail(func, "basis", requirement, basis)
        wanted = np.sort(array.astype(int))
        matches = np.flatnonzero(np.all(self.bases == wanted, axis=1))
        if matches.size != 1:
            fail(func, "basis", requirement, [int(column) for column in array])
        return int(matches[0])

    def witness(self, basis: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Perturbed means ``(r~, c~)`` attaining :meth:`basis_gap` (``J``'s BFS value reaches ``I*``'s, both
        feasible). Known arms are unchanged. Raises :class:`~allocopt.exceptions.InvalidArgumentError` (a
        ``ValueError``) when the gap is infinite."""
        func = "CBMAIHardness.witness"
        row = self._basis_row(basis, func)
        if not np.isfinite(self.basis_gaps[row]):
            fail(func, "basis", "a basis with a finite gap (this gap is infinite: no perturbation of the unknown arms "
                 "makes this basis overtake I*)", [int(column) for column in self.bases[row]])
        if row in self._exact_witnesses:
            rewards, costs = self._exact_witnesses[row]
            return rewards.copy(), costs.copy()
        data, arms_x, arms_y = _gap_batch(self.problem, self.optimal_support, self.bases[row:row + 1],
                                          self.sigma_r, self.sigma_c)
        wx, wy = self._weights_x[row][None, None, :arms_x.shape[1]], self._weights_y[row][None, None, :]
        terms = _gap_terms(data, wx, wy)
        problem = self.problem
        rewards, costs = problem.rewards.copy(), problem.costs.copy()
        unknown = problem.n_unknown
        px = np.zeros(problem.n_arms)
        py = np.zeros(problem.n_arms)
        px[arms_x[0]] = wx[0, 0]
        py[arms_y[0]] = wy[0, 0]
        px_u, py_u = px * (np.arange(problem.n_arms) < unknown), py * (np.arange(problem.n_arms) < unknown)
        if terms.reward_gap[0, 0] < 0:
            rewards = rewards + (-terms.reward_gap[0, 0] / terms.direction[0, 0]) * (px_u - py_u)
        gram = np.array([[terms.n_xx[0, 0], terms.n_xy[0, 0]], [terms.n_xy[0, 0], terms.n_yy[0, 0]]])
        for cost_row in range(problem.n_costs):
            code = terms.codes[0, 0, cost_row]
            residual = np.array([terms.delta_x[0, 0, cost_row], terms.delta_y[0, 0, cost_row]])
            if code == 1:
                costs[cost_row] -= residual[0] / gram[0, 0] * px_u
            elif code == 2:
                costs[cost_row] -= residual[1] / gram[1, 1] * py_u
            elif code == 3:
                multipliers = np.linalg.solve(gram, residual)
                costs[cost_row] -= multipliers[0] * px_u + multipliers[1] * py_u
        return rewards, costs

    def infeasibility_witness(self) -> np.ndarray:
        """Perturbed costs ``c~`` at distance ``Delta_0`` that make ``I*`` singular or give it a zero coordinate.

        Raises :class:`~allocopt.exceptions.InvalidInstanceError` (a ``ValueError``) when ``Delta_0^2`` is
        infinite."""
        if self._infeasibility_witness is None:
            fail("CBMAIHardness.infeasibility_witness", "problem",
                 "an instance with a finite infeasibility gap Delta_0^2 (no perturbation of the unknown costs makes "
                 "I* infeasible here, so there is no witness)", self.infeasibility_gap, error=InvalidInstanceError)
        return self._infeasibility_witness.copy()


def _elimination_rate(sorted_gaps: np.ndarray, n_arms: int, n_costs: int) -> float:
    """``min_{2<=i<=K} Delta_(L+i)^2 / i`` (``inf`` when ``K = 1``)."""
    if n_arms < 2:
        return np.inf
    ranks = np.arange(2, n_arms + 1)
    return float(np.min(sorted_gaps[n_costs + ranks - 1] / ranks))


def _gap_batch(problem: CBMAIProblem, support: tuple[int, ...], bases: np.ndarray, sigma_r: float, sigma_c: float
               ) -> tuple[_GapData, np.ndarray, np.ndarray]:
    """The :class:`_GapData` of ``bases`` (all with the same number of true arms), padded arm lists."""
    n_arms, n_costs, unknown = problem.n_arms, problem.n_costs, problem.n_unknown
    arms_x = np.stack([basis[basis < n_arms] for basis in bases])
    support_array = np.array(support)
    arms_y = support_array[support_array < n_arms]
    slack_y = support_array[support_array >= n_arms] - n_arms
    equality_x = np.ones((bases.shape[0], n_costs), dtype=bool)
    for row, basis in enumerate(bases):
        equality_x[row, basis[basis >= n_arms] - n_arms] = False
    equality_y = np.ones(n_costs, dtype=bool)
    equality_y[slack_y] = False
    unknown_x = (arms_x < unknown).astype(float)
    unknown_y = np.broadcast_to((arms_y < unknown).astype(float), (bases.shape[0], arms_y.size))
    shared = ((arms_x[:, :, None] == arms_y[None, None, :]) & (arms_x[:, :, None] < unknown)).astype(float)
    scale = max(1.0, float(np.max(np.abs(problem.costs))), float(np.max(np.abs(problem.bounds))))
    data = _GapData(problem.rewards[arms_x], np.broadcast_to(problem.rewards[arms_y], unknown_y.shape),
                    problem.costs[:, arms_x].transpose(1, 0, 2),
                    np.broadcast_to(problem.costs[:, arms_y], (bases.shape[0], n_costs, arms_y.size)),
                    unknown_x, unknown_y, shared, equality_x, equality_y, problem.bounds, sigma_r**-2, sigma_c**-2,
                    _FEASIBILITY_SLACK * scale)
    return data, arms_x, np.broadcast_to(arms_y, (bases.shape[0], arms_y.size))


def _infeasibility_gap(problem: CBMAIProblem, support: tuple[int, ...]) -> tuple[float, np.ndarray | None]:
    """``sigma_c^2 Delta_0^2`` (unweighted) and the perturbed cost matrix attaining it."""
    n_arms, unknown = problem.n_arms, problem.n_unknown
    support_array = np.array(support)
    arms = support_array[support_array < n_arms]
    slacks = set((support_array[support_array >= n_arms] - n_arms).tolist())
    shifted = problem.costs - problem.bounds[:, None]
    best, best_witness = np.inf, None

    def consider(arm_set: np.ndarray, rows: list[int], subspace: np.ndarray | None) -> None:
        nonlocal best, best_witness
        if arm_set.size == 0 or not rows:
            return
        h = shifted[np.ix_(np.asarray(rows, dtype=int), arm_set)]
        numerator = h.T @ h
        denominator = np.diag((arm_set < unknown).astype(float))
        value, z = _min_rayleigh(numerator, denominator, subspace)
        if value < best and z is not None:
            best = value
            costs = problem.costs.copy()
            z_unknown = z * (arm_set < unknown)
            norm2 = float(z_unknown @ z_unknown)
            if norm2 > 0:
                for row in rows:
                    residual = shifted[row, arm_set] @ z  # = c_l . z - cbar_l 1^T z, zero after the move
                    costs[row, arm_set] -= residual / norm2 * z_unknown
            best_witness = costs

    all_rows = [row for row in range(problem.n_costs) if row not in slacks]
    for column in support:
        if column < n_arms:
            consider(arms[arms != column], all_rows, None)
        else:
            consider(arms, sorted(all_rows + [column - n_arms]), None)
    if arms.size >= 2 and all_rows:
        sum_zero = np.linalg.svd(np.ones((1, arms.size)))[2][1:].T  # orthonormal basis of {1^T z = 0}
        consider(arms, all_rows, sum_zero)
    return best, best_witness


def _assumption_1_solution(problem: CBMAIProblem, func: str) -> Any:
    """The certified LP solution of ``problem``; InvalidInstanceError when the LP is infeasible, uncertified, or
    Assumption 1 fails (the hardness gaps are then not defined)."""
    solution = solve_cbmai(problem)
    report = solution.assumption_1
    if solution.status == "optimal" and report is not None and report.holds:
        return solution
    if solution.status != "optimal":
        reason = ("the LP is infeasible" if solution.status == "infeasible"
                  else f"the LP's answer could not be certified ({solution.message})")
    else:
        reason = "; ".join(report.failures) if report is not None else "it has too many bases to check Assumption 1"
    raise InvalidInstanceError(f"The 'problem' parameter of {func} must satisfy Assumption 1 (a unique optimum "
                               f"with exactly L+1 nonzero coordinates). Got an instance where {reason}.")


def _basis_gaps(problem: CBMAIProblem, solution: Any, bases: np.ndarray, sigma_r: float, sigma_c: float,
                resolution: int, n_starts: int,
                max_lattice_points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[Any, Any]]:
    """Every basis's gap Delta^2 (0 for the optimal support), minimised over the lattice by groups of bases with
    the same number of true arms, then exactly where the dimension is low; with the minimisers and the exact
    witnesses."""
    support = solution.support
    n_arms, n_costs = problem.n_arms, problem.n_costs
    n_bases = bases.shape[0]
    true_arm_counts = np.sum(bases < n_arms, axis=1)
    support_arms = int(np.sum(np.array(support) < n_arms))
    anchor = solution.p[[column for column in support if column < n_arms]]
    gaps = np.full(n_bases, np.inf)
    weights_x = np.full((n_bases, n_costs + 1), np.nan)
    weights_y = np.full((n_bases, support_arms), np.nan)
    is_support = np.all(bases == np.array(support), axis=1)
    for count in np.unique(true_arm_counts):
        rows = np.flatnonzero((true_arm_counts == count) & ~is_support)
        if rows.size == 0:
            continue
        data, _, _ = _gap_batch(problem, support, bases[rows], sigma_r, sigma_c)
        values, point_x, point_y = _minimise_gaps(data, resolution, n_starts, anchor, max_lattice_points)
        gaps[rows] = values
        weights_x[rows, :count] = point_x
        weights_y[rows] = point_y
    exact_witnesses = _exact_low_dimensional(problem, support, bases, gaps, weights_x, weights_y, sigma_r,
                                             sigma_c, n_starts, max_lattice_points)
    gaps[np.flatnonzero(is_support)] = 0.0
    return gaps, weights_x, weights_y, exact_witnesses


def cbmai_hardness(
    problem: CBMAIProblem,
    sigma_r: float = SIGMA_R,
    sigma_c: float = SIGMA_C,
    *,
    resolution: int | None = None,
    n_starts: int = 3,
    max_lattice_points: int = 4000,
) -> CBMAIHardness:
    """The hardness gaps ``Delta_0^2``, ``Delta_J^2``, ``Delta_a^2`` and the bounds (12)-(15) of an instance.

    Parameters
    ----------
    problem : CBMAIProblem
        Must satisfy Assumption 1 (a unique, non-degenerate optimum).
    sigma_r, sigma_c : float
        Noise levels (``> 0``) weighting reward and cost perturbations.
    resolution : int, optional
        Lattice steps per simplex edge for the basis gaps; default: the largest with at most
        ``max_lattice_points`` points for the largest pair of simplices.
    n_starts : int, default 3
        Pattern-search starts per basis (the best lattice points).
    max_lattice_points : int, default 4000

    Returns
    -------
    CBMAIHardness

    Raises
    ------
    InvalidInstanceError
        When the LP is infeasible or Assumption 1 fails (the gaps are then not defined).

    Examples
    --------
    Two unknown arms, one cost; arm 0 alone is optimal and arm 1 is feasible but worse. Basis {arm 1, slack}
    overtakes when the reward gap 0.4 is split between the two arms: ``Delta^2 = 0.4^2 / 2 / sigma_r^2``;
    ``I*`` loses feasibility when arm 0's cost rises by 0.5: ``Delta_0^2 = 0.5^2 / sigma_c^2``.

    >>> import allocopt
    >>> problem = allocopt.CBMAIProblem([1.0, 0.6], [[0.5, 0.2]], [1.0])
    >>> hardness = allocopt.cbmai_hardness(problem, sigma_r=1.0, sigma_c=0.5)
    >>> hardness.optimal_support, round(hardness.basis_gap([1, 2]), 12), round(hardness.infeasibility_gap, 12)
    ((0, 2), 0.08, 1.0)
    """
    func = "cbmai_hardness"
    check_problem(problem, func)
    sigma_r = as_positive_float(sigma_r, func, "sigma_r")
    sigma_c = as_positive_float(sigma_c, func, "sigma_c")
    n_starts = as_int(n_starts, func, "n_starts", low=1)
    max_lattice_points = as_int(max_lattice_points, func, "max_lattice_points", low=1)
    if resolution is not None:
        resolution = as_int(resolution, func, "resolution", low=1)
    start = time.perf_counter()
    solution = _assumption_1_solution(problem, func)
    support = solution.support
    n_arms, n_costs, n_columns = problem.n_arms, problem.n_costs, problem.n_columns
    bases = basis_layout(n_columns, n_costs + 1).combos
    if resolution is None:
        resolution = _lattice_resolution(int(np.sum(bases < n_arms, axis=1).max()),
                                         int(np.sum(np.array(support) < n_arms)), max_lattice_points)
    gaps, weights_x, weights_y, exact_witnesses = _basis_gaps(problem, solution, bases, sigma_r, sigma_c,
                                                              resolution, n_starts, max_lattice_points)
    arm_gaps = np.full(n_columns, np.inf)
    for column in range(n_columns):
        arm_gaps[column] = np.min(gaps[np.any(bases == column, axis=1)])
    order = np.argsort(arm_gaps, kind="stable")
    sorted_gaps = arm_gaps[order]
    raw_infeasibility, witness = _infeasibility_gap(problem, support)
    infeasibility = raw_infeasibility / sigma_c**2
    second = float(sorted_gaps[n_costs + 1]) if n_columns > n_costs + 1 else np.inf
    consistent = 0.5 * min(infeasibility, second)
    rate = min(infeasibility / n_arms, _elimination_rate(sorted_gaps, n_arms, n_costs))
    sfsr_exponent = rate / (3 * ((n_costs + 1) / 2 + math.log(problem.n_unknown)))
    for array in (gaps, arm_gaps, order, sorted_gaps):
        array.setflags(write=False)
    message = (f"basis gaps minimised over a lattice of resolution {int(resolution)} with {int(n_starts)} "
               f"pattern-search starts per basis; the infeasibility gap is exact")
    return CBMAIHardness(status="computed", message=message, method="lattice-pattern-search",
                         time=time.perf_counter() - start, problem=problem, optimal_support=support,
                         sigma_r=sigma_r, sigma_c=sigma_c, bases=bases, basis_gaps=gaps, arm_gaps=arm_gaps,
                         sorted_arms=order, sorted_gaps=sorted_gaps, infeasibility_gap=float(infeasibility),
                         consistent_exponent=float(consistent), uslp_exponent=float(consistent / n_arms),
                         sfsr_exponent=float(sfsr_exponent), resolution=int(resolution), n_starts=int(n_starts),
                         _weights_x=weights_x, _weights_y=weights_y, _infeasibility_witness=witness,
                         _exact_witnesses=exact_witnesses)
