r"""The all-pairs minimum of the costs through two lower envelopes: :math:`O(K\log K)`, not :math:`k(K-k)`.

Every pair cost is an infimum over one common point :math:`x` of the mean domain. With the effective weights
:math:`w_a = \psi_a/\phi_a` and the unit divergence :math:`d` of the family,

.. math::
    C_{ij}(\psi) = \inf_x\, [f_i(x) + f_j(x)], \qquad f_a(x) = w_a\, d(\theta_a, x)

(for the budget costs :math:`B_{ij}`, :math:`f_a(x) = w_a\, d(x, \theta_a)`), so the minimum over all pairs
separates into the two sides:

.. math::
    \min_{i \in I,\, j \in J} C_{ij}(\psi) = \inf_x\, [F_I(x) + F_J(x)], \qquad
    F_I = \min_{i \in I} f_i, \quad F_J = \min_{j \in J} f_j .

Cut the line into the *elementary intervals* on which both lower envelopes have one arm each, :math:`f_i` and
:math:`f_j`. On such an interval the sum is at least :math:`\inf_x (f_i + f_j) = C_{ij}`, and every pair cost
is at least the minimum, so

.. math::
    \min_{i, j} C_{ij}(\psi) = \min_{\text{elementary intervals}} C_{i(I)\, j(I)} :

only the pairs that meet on the envelopes need their cost, at most :math:`4K` of them, and the minimum is
exact (each cost is evaluated by the family's exact pair kernel, like every other cost in the solver).

The envelopes. In the natural parameter :math:`z` (confidence costs) or the mean :math:`x` (budget costs)
the difference of two arms' functions is :math:`(w_a - w_b)\,G - (\cdot)\,z + (\cdot)` with :math:`G` the
log-partition function (resp. its conjugate), strictly convex: convex, concave or affine, so two arms cross at
most twice (a Davenport-Schinzel sequence of order 2: an envelope of :math:`n` arms has at most :math:`2n-1`
pieces). The envelope of a side is built by divide and conquer, merging two envelopes interval by interval;
on each interval the difference of the two arms is split at its stationary point (in closed form: where
:math:`w_a(x - \theta_a) = w_b(x - \theta_b)` for the confidence costs, where
:math:`w_a(\eta(x) - \eta_a) = w_b(\eta(x) - \eta_b)` for the budget costs) into monotone parts, and a sign
change in a part is located by bisection to the last bit.

Rounding. A crossing located to the last bit can still be misplaced by rounding in the divergences; where it
is, the two arms' values agree to rounding, so the pair found instead costs the same to rounding. As a
safeguard the pairs of the neighbouring pieces of each envelope are evaluated too.

The envelopes are used where the means are strictly inside the mean domain (so that every divergence is finite
on the hull of the means) and for the built-in families (those with a compiled pair kernel).

Examples
--------
>>> import numpy as np
>>> from allocopt import TopKProblem
>>> from allocopt.topk._groups import reduce_problem
>>> rng = np.random.default_rng(1)
>>> problem = TopKProblem(np.concatenate([0.6 + 0.01 * rng.normal(size=30), 0.4 + 0.01 * rng.normal(size=30)]),
...                       30, family="bernoulli")
>>> reduced = reduce_problem(problem, "confidence")
>>> psi = rng.uniform(0.5, 1.5, reduced.n_groups)
>>> rows, cols = envelope_pairs(reduced, psi)
>>> rows.size < reduced.n_top * reduced.n_bottom  # a few pairs, not all 900
True
>>> every = reduced.terms(psi, *np.divmod(np.arange(900), 30)).cost.min()  # every pair's cost
>>> bool(reduced.terms(psi, rows, cols).cost.min() == every)
True
"""

from __future__ import annotations

import math

import numpy as np

from ..families import kernels as _families
from ..families.kernels import _entropy, _ratio_divergence, kernel_code  # noqa: F401 (compiled: shared below)
from .._numba import compile_once
from ._groups import Reduced

__all__ = ["envelope_pairs", "envelope_code"]

# family kernel codes of allocopt.families.kernels: 0 Gaussian, 1/2 Bernoulli, 3/4 Poisson, 5/6 exponential
# (odd: confidence, even: budget, except the Gaussian's 0 for both)
_BUDGET_CODES = (2, 4, 6)


def envelope_code(reduced: Reduced) -> int | None:
    """The family kernel code the envelopes evaluate for ``reduced`` (its family and kind), or ``None`` when
    they do not apply: a family without a compiled pair kernel, compiled kernels switched off, or a mean on the
    boundary of the domain (an infinite divergence on the hull of the means)."""
    code = kernel_code(reduced.family.compiled_pair(reduced.kind))
    if code is None:
        return None
    theta = reduced.theta
    if not np.all(np.isfinite(theta)):
        return None
    if code in (1, 2) and not (theta.min() > 0.0 and theta.max() < 1.0):
        return None
    if code in (3, 4, 5, 6) and not theta.min() > 0.0:
        return None
    return code


def envelope_pairs(reduced: Reduced, psi: np.ndarray, code: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""The pairs ``(rows, cols)`` (positions in ``reduced.top_groups`` / ``reduced.bottom_groups``) that meet
    on the two lower envelopes at the group allocation ``psi``, with their neighbours (module docstring): the
    smallest cost over all pairs is the smallest cost over these.

    Parameters
    ----------
    reduced : Reduced
        The tie-merged problem.
    psi : ndarray
        Allocation per group, nonnegative and finite.
    code : int, optional
        :func:`envelope_code` of ``reduced`` when already known; it must not be ``None``.

    Returns
    -------
    rows, cols : ndarray of int
        Distinct pairs, sorted by row then column.
    """
    if code is None:
        code = envelope_code(reduced)
        if code is None:
            raise ValueError("the envelopes do not apply to this problem (see envelope_code)")
    weights = np.asarray(psi, dtype=float) / reduced.dispersion
    top, bottom = reduced.top_groups, reduced.bottom_groups
    theta, eta = reduced.theta, reduced.eta
    low, high = float(theta.min()), float(theta.max())
    kernels = _kernels()
    top_breaks, top_arms = kernels["envelope"](code, theta[top], eta[top], weights[top], low, high)
    bottom_breaks, bottom_arms = kernels["envelope"](code, theta[bottom], eta[bottom], weights[bottom], low, high)
    rows, cols = kernels["meetings"](top_breaks, top_arms, bottom_breaks, bottom_arms)
    keys = np.sort(rows * np.int64(reduced.n_bottom) + cols)
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    return keys // reduced.n_bottom, keys % reduced.n_bottom


# ------------------------------------------------------------------------------------------ compiled parts
def _divergence(code, mean, x):
    # the unit divergence d(mean, x) (confidence codes) or d(x, mean) (budget codes), in the forms of the pair
    # kernels (allocopt.families.kernels: a log(a/b) - (a - b) from the difference, t - 1 - log t from t - 1),
    # which keep their relative precision for nearly equal arguments
    if code == 2 or code == 4 or code == 6:
        mean, x = x, mean
    if code == 0:
        return 0.5 * (mean - x) * (mean - x)
    if code == 1 or code == 2:
        return (_entropy(mean, x, mean - x, 0.0, False)
                + _entropy(1.0 - mean, 1.0 - x, x - mean, 0.0, False))
    if code == 3 or code == 4:
        return _entropy(mean, x, mean - x, 0.0, False)
    return _ratio_divergence(mean / x, (mean - x) / x)


def _mean_of_natural(code, eta):
    # the mean of natural parameter eta (unit Gaussian: eta = x); nan outside the natural domain
    if code == 0:
        return eta
    if code == 1 or code == 2:
        return 1.0 / (1.0 + math.exp(-eta))
    if code == 3 or code == 4:
        return math.exp(eta)
    if eta < 0.0:
        return -1.0 / eta
    return math.nan


def _difference(code, theta, w, a, b, x):
    # f_a(x) - f_b(x); a zero weight makes the arm's function zero (also where its divergence is infinite)
    value_a = 0.0 if w[a] == 0.0 else w[a] * _divergence(code, theta[a], x)
    value_b = 0.0 if w[b] == 0.0 else w[b] * _divergence(code, theta[b], x)
    return value_a - value_b


def _stationary(code, theta, eta, w, a, b):
    # the point where the derivative of f_a - f_b vanishes (nan: none, the difference is monotone)
    spread = w[a] - w[b]
    if spread == 0.0:
        return math.nan
    if code == 2 or code == 4 or code == 6:
        return _mean_of_natural(code, (w[a] * eta[a] - w[b] * eta[b]) / spread)
    return (w[a] * theta[a] - w[b] * theta[b]) / spread


def _crossing(code, theta, w, a, b, start, end, value_start):
    # the sign change of the monotone difference on [start, end]: regula falsi with the Illinois modification
    # (superlinear), kept inside the bracket, until the bracket is a few ulps wide
    value_end = _difference(code, theta, w, a, b, end)
    side = 0
    for _ in range(200):
        middle = (start * value_end - end * value_start) / (value_end - value_start)
        if not (middle > start and middle < end):
            middle = 0.5 * (start + end)
            if middle <= start or middle >= end:
                break
        value = _difference(code, theta, w, a, b, middle)
        if value == 0.0:
            return middle
        if (value < 0.0) == (value_start < 0.0):
            start = middle
            value_start = value
            if side == -1:
                value_end *= 0.5
            side = -1
        else:
            end = middle
            value_end = value
            if side == 1:
                value_start *= 0.5
            side = 1
        if end - start <= 4e-16 * max(abs(start), abs(end)):
            break
    return 0.5 * (start + end)


def _append(breaks, arms, count, end, arm):
    # add the piece (breaks[count], end] of ``arm``, extending the last piece when it has the same arm
    if count > 0 and arms[count - 1] == arm:
        breaks[count] = end
        return count
    arms[count] = arm
    breaks[count + 1] = end
    return count + 1


def _merge(code, theta, eta, w, breaks_a, arms_a, count_a, breaks_b, arms_b, count_b, breaks, arms):
    # the lower envelope of two envelopes over the same interval; returns the number of pieces written
    breaks[0] = breaks_a[0]
    count = 0
    i = 0
    j = 0
    start = breaks_a[0]
    points = np.empty(3)
    while i < count_a and j < count_b:
        end = min(breaks_a[i + 1], breaks_b[j + 1])
        a = arms_a[i]
        b = arms_b[j]
        if a == b:
            count = _append(breaks, arms, count, end, a)
        else:
            # cut [start, end] at the stationary point and at the crossings of the monotone parts
            points[0] = start
            n_points = 1
            stationary = _stationary(code, theta, eta, w, a, b)
            if stationary > start and stationary < end:
                points[1] = stationary
                n_points = 2
            points[n_points] = end
            n_points += 1
            # each monotone part: one arm below throughout, or a crossing with one arm on each side of it (the
            # sign at an end that is zero is the sign at the other end)
            for p in range(n_points - 1):
                left = points[p]
                right = points[p + 1]
                value_left = _difference(code, theta, w, a, b, left)
                value_right = _difference(code, theta, w, a, b, right)
                if value_left == 0.0:
                    value_left = value_right
                if value_right == 0.0:
                    value_right = value_left
                if (value_left < 0.0) != (value_right < 0.0):
                    crossing = _crossing(code, theta, w, a, b, left, right, value_left)
                    count = _append(breaks, arms, count, crossing, a if value_left < 0.0 else b)
                count = _append(breaks, arms, count, right, a if value_right <= 0.0 else b)
        start = end
        if breaks_a[i + 1] == end:
            i += 1
        if breaks_b[j + 1] == end:
            j += 1
    return count


def _envelope(code, theta, eta, w, low, high):
    # the lower envelope of the arms' functions on [low, high]: breaks (pieces + 1) and arms (pieces), by
    # merging envelopes pairwise, level by level. Envelope e of a level has the pieces
    # arms[starts[e]: starts[e] + counts[e]] and the breaks breaks[starts[e] + e: starts[e] + e + counts[e] + 1]
    # (one more break than pieces, laid out in the same order)
    n = theta.shape[0]
    capacity = 4 * n + 4
    breaks = np.empty(capacity)
    arms = np.empty(capacity, dtype=np.int64)
    starts = np.empty(n, dtype=np.int64)
    counts = np.empty(n, dtype=np.int64)
    for a in range(n):
        starts[a] = a
        counts[a] = 1
        arms[a] = a
        breaks[2 * a] = low
        breaks[2 * a + 1] = high
    n_envelopes = n
    while n_envelopes > 1:
        new_breaks = np.empty(capacity)
        new_arms = np.empty(capacity, dtype=np.int64)
        new_starts = np.empty(n, dtype=np.int64)
        new_counts = np.empty(n, dtype=np.int64)
        position = 0
        merged = 0
        for e in range(0, n_envelopes, 2):
            new_starts[merged] = position
            break_position = position + merged
            first = starts[e] + e
            if e + 1 == n_envelopes:
                count = counts[e]
                for p in range(count):
                    new_arms[position + p] = arms[starts[e] + p]
                for p in range(count + 1):
                    new_breaks[break_position + p] = breaks[first + p]
            else:
                second = starts[e + 1] + e + 1
                limit = 3 * (counts[e] + counts[e + 1]) + 2
                if position + limit > new_arms.shape[0] or break_position + limit + 1 > new_breaks.shape[0]:
                    grown = max(2 * new_arms.shape[0], position + limit + 1, break_position + limit + 2)
                    extended_arms = np.empty(grown, dtype=np.int64)
                    extended_arms[:position] = new_arms[:position]
                    new_arms = extended_arms
                    extended_breaks = np.empty(grown)
                    extended_breaks[:break_position] = new_breaks[:break_position]
                    new_breaks = extended_breaks
                count = _merge(code, theta, eta, w,
                               breaks[first:first + counts[e] + 1], arms[starts[e]:starts[e] + counts[e]], counts[e],
                               breaks[second:second + counts[e + 1] + 1],
                               arms[starts[e + 1]:starts[e + 1] + counts[e + 1]], counts[e + 1],
                               new_breaks[break_position:], new_arms[position:])
            new_counts[merged] = count
            position += count
            merged += 1
        breaks, arms, starts, counts = new_breaks, new_arms, new_starts, new_counts
        n_envelopes = merged
    count = counts[0]
    return breaks[:count + 1].copy(), arms[:count].copy()


def _meetings(breaks_top, arms_top, breaks_bottom, arms_bottom):
    # the pairs of the elementary intervals, each with the neighbouring pieces of both envelopes
    count_top = arms_top.shape[0]
    count_bottom = arms_bottom.shape[0]
    capacity = 5 * (count_top + count_bottom)
    rows = np.empty(capacity, dtype=np.int64)
    cols = np.empty(capacity, dtype=np.int64)
    n = 0
    i = 0
    j = 0
    while i < count_top and j < count_bottom:
        top = arms_top[i]
        bottom = arms_bottom[j]
        rows[n] = top
        cols[n] = bottom
        n += 1
        if i > 0:
            rows[n] = arms_top[i - 1]
            cols[n] = bottom
            n += 1
        if i + 1 < count_top:
            rows[n] = arms_top[i + 1]
            cols[n] = bottom
            n += 1
        if j > 0:
            rows[n] = top
            cols[n] = arms_bottom[j - 1]
            n += 1
        if j + 1 < count_bottom:
            rows[n] = top
            cols[n] = arms_bottom[j + 1]
            n += 1
        end = min(breaks_top[i + 1], breaks_bottom[j + 1])
        if breaks_top[i + 1] == end:
            i += 1
        if breaks_bottom[j + 1] == end:
            j += 1
    return rows[:n], cols[:n]


_kernels = compile_once(
    globals(),
    needs=(_families._kernels,),
    shared=((_families, ("_entropy", "_ratio_divergence")),),
    rebind=("_divergence", "_mean_of_natural", "_difference", "_stationary", "_crossing", "_append", "_merge"),
    kernels={"envelope": "_envelope", "meetings": "_meetings"})
