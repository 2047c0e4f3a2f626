r"""The exact checks of a forest solution: the all-pairs scans of :mod:`allocopt.topk._scan`, the envelopes, the compiled
Gaussian scan."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..._numba import compile_once
from ...families import kernels as _families
from ...families.kernels import kernel_code, unit_divergence  # noqa: F401 (compiled: shared below)
from .._scan import BOUND_MARGIN, PairScan, _listed, scan_pairs, trusted
from .groups import Reduced

__all__ = ["Checker", "envelope_pairs", "envelope_code", "harmonic_scan", "ENVELOPE_PAIRS", "CONFIRM_PAIRS", "ENVELOPE_ROUNDING"]

# ------------------------------------------------------------------------------- the exact solver's checks
# relative tolerances of the internal checks (costs are 1 on the forest): rounding-level violations of
# degenerate binding pairs are not pivoted on; the final certificate accounts for them exactly
_FEASIBILITY = 1e-10


# Gaussian arms: above this many pairs the exact checks scan with the compiled kernel
_COMPILED_SCAN_PAIRS = 1 << 20


# above this many group pairs the pivots' all-pairs checks run on the lower envelopes (below it the pruned scan
# is about as fast: 1 ms at 128 x 128 pairs)
ENVELOPE_PAIRS = 1 << 15


# above this many group pairs (K about 4000 at k = K/2) a forest that passes the envelope check is not
# confirmed by the scan over every pair (2.5e7 logarithmic costs at K = 10^4, a second or more; 2.5e9 at 10^5,
# minutes), and the certificate's value is the envelope minimum less ENVELOPE_ROUNDING (relative): each of the
# envelopes' decisions between two arms errs only where their values agree to rounding (a few ulps, relative),
# and over the log2 K levels of merging the envelopes' error stays below 1e-13 relative; the allowance is ten
# times that
CONFIRM_PAIRS = 1 << 22


ENVELOPE_ROUNDING = 1e-12


class Checker:
    """Exact check of a forest solution: multipliers and all-pairs feasibility."""

    def __init__(self, reduced: Reduced):
        self.reduced = reduced
        self.theta_top = reduced.theta[reduced.top_groups]
        self.theta_bottom = reduced.theta[reduced.bottom_groups]
        # Gaussian arms above BLOCK_PAIRS pairs: the compiled scan (the family's costs bit for bit)
        self.compiled = (reduced.family.harmonic_costs(reduced.kind)
                         and reduced.n_top * reduced.n_bottom > _COMPILED_SCAN_PAIRS)
        # other families above ENVELOPE_PAIRS pairs: the pivots' checks evaluate only the pairs that meet on the
        # two lower envelopes (allocopt.topk._exact.checks: the same minimum, in O(K log K)); Gaussian arms keep the
        # scans (closed-form costs, compiled above _COMPILED_SCAN_PAIRS), whose transport start rarely pivots
        self.envelope = (envelope_code(reduced) if reduced.n_top * reduced.n_bottom > ENVELOPE_PAIRS
                         and not reduced.family.harmonic_costs(reduced.kind) else None)
        # the envelope checks are confirmed by the scan over every pair up to CONFIRM_PAIRS pairs
        self.confirmed = self.envelope is None or reduced.n_top * reduced.n_bottom <= CONFIRM_PAIRS

    def _envelope_costs(self, psi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pairs that meet on the lower envelopes at ``psi`` and their costs (the smallest of which is the
        minimum over all pairs)."""
        rows, cols = envelope_pairs(self.reduced, psi, self.envelope)
        return rows, cols, self.reduced.terms(psi, rows, cols).cost

    def certified_minimum(self, psi: np.ndarray) -> float | None:
        """The all-pairs minimum a certificate may use where no scan over every pair confirms the checks
        (above ``CONFIRM_PAIRS`` pairs): the envelope minimum at ``psi``, computed afresh, less its rounding
        allowance ``ENVELOPE_ROUNDING``; None where the certificate evaluates every pair."""
        if self.confirmed:
            return None
        return float(self._envelope_costs(psi)[2].min()) * (1.0 - ENVELOPE_ROUNDING)

    def _envelope_scan(self, psi: np.ndarray, threshold: float, limit: int) -> PairScan:
        """The exact minimum over all pairs from the pairs that meet on the lower envelopes, listing those of
        them below ``threshold`` (a subset of all the pairs below it, which always holds the smallest)."""
        rows, cols, costs = self._envelope_costs(psi)
        best = int(np.argmin(costs))
        below = costs < threshold
        listed = _listed(float(costs[best]), int(rows[best]), int(cols[best]), [rows[below]], [cols[below]],
                         [costs[below]], limit)
        return dataclasses.replace(listed, every_pair=False)

    def _compiled_scan(self, psi: np.ndarray, threshold, limit: int):
        """The all-pairs scan by :func:`~allocopt.topk._exact.starts.harmonic_scan` (the same minimum and
        listed pairs as ``scan_pairs``); None when more pairs lie below the threshold than it keeps."""
        reduced = self.reduced
        top, bottom = reduced.top_groups, reduced.bottom_groups
        capacity = 2 * limit + 65_536
        best, row, col, count, rows, cols, costs = _SCAN()["scan"](
            self.theta_top, self.theta_bottom, psi[top] * (1.0 / reduced.dispersion[top]),
            psi[bottom] * (1.0 / reduced.dispersion[bottom]), -np.inf if threshold is None else float(threshold),
            capacity)
        if count > capacity:
            return None
        return _listed(float(best), int(row), int(col), [rows[:count]], [cols[:count]], [costs[:count]], limit)

    def scan(self, psi: np.ndarray, every_pair: bool = False):
        """The check at a forest solution: the exact minimum over all pairs and the pairs below 1 (on the
        envelopes above ``ENVELOPE_PAIRS`` pairs unless ``every_pair``)."""
        if self.envelope is not None and not every_pair:
            return self._envelope_scan(psi, 1.0 - _FEASIBILITY, 4096)
        if self.compiled:
            found = self._compiled_scan(psi, 1.0 - _FEASIBILITY, 4096)
            if found is not None:
                return found
        reduced = self.reduced
        weights = psi / reduced.dispersion

        def evaluate(rows, cols):
            return reduced.terms(psi, rows, cols).cost

        return scan_pairs(evaluate, reduced.family, self.theta_top, self.theta_bottom,
                          weights[reduced.top_groups], weights[reduced.bottom_groups], 1.0 - _FEASIBILITY,
                          limit=4096)

    def scan_below(self, psi: np.ndarray, threshold, limit: int = 1_000_000):
        """All-pairs scan at ``psi`` listing the pairs of cost below ``threshold`` (None: the exact minimum only)."""
        if self.compiled:
            found = self._compiled_scan(psi, threshold, limit)
            if found is not None:
                return found
        reduced = self.reduced
        weights = psi / reduced.dispersion
        return scan_pairs(lambda rows, cols: reduced.terms(psi, rows, cols).cost, reduced.family, self.theta_top,
                          self.theta_bottom, weights[reduced.top_groups], weights[reduced.bottom_groups], threshold,
                          limit=limit)


# --------------------------------------------- the all-pairs minimum through two lower envelopes (compiled)
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
    kernels = _ENVELOPE()
    top_breaks, top_arms = kernels["envelope"](code, theta[top], eta[top], weights[top], low, high)
    bottom_breaks, bottom_arms = kernels["envelope"](code, theta[bottom], eta[bottom], weights[bottom], low, high)
    rows, cols = kernels["meetings"](top_breaks, top_arms, bottom_breaks, bottom_arms)
    keys = np.sort(rows * np.int64(reduced.n_bottom) + cols)
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    return keys // reduced.n_bottom, keys % reduced.n_bottom


# ------------------------------------------------------------------------------------------ compiled parts
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
    value_a = 0.0 if w[a] == 0.0 else w[a] * unit_divergence(code, theta[a], x)
    value_b = 0.0 if w[b] == 0.0 else w[b] * unit_divergence(code, theta[b], x)
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


_ENVELOPE = compile_once(
    globals(),
    needs=(_families._kernels,),
    shared=((_families, ("unit_divergence",)),),
    rebind=("_mean_of_natural", "_difference", "_stationary", "_crossing", "_append", "_merge"),
    kernels={"envelope": "_envelope", "meetings": "_meetings"})


# --------------------------------------------------------------------- Gaussian arms: the compiled scan
# the Gaussian pair kernel's number in the families' shared kernels (allocopt.families.kernels.pair_by_code)
_GAUSSIAN_CODE = _families._CODES.index("_gaussian_pair")


def harmonic_scan(theta_top, theta_bottom, w_top, w_bottom, threshold, capacity):
    """Every pair's Gaussian cost :math:`C_{ij} = w_i d_i + w_j d_j`, formed by the families' shared scalar pair
    kernel (:func:`allocopt.families.kernels.weighted_pair`, the Gaussian one), whose operations are those of
    :meth:`allocopt.families.Gaussian.unit_confidence_pair` in the same order (shares
    :math:`s = w/(w_i + w_j)`, spreads :math:`s_j \\Delta` and :math:`-s_i\\Delta`, halves of their squares),
    so that each cost is the one the family computes, bit for bit. The means are in decreasing order on each
    side (the exact solver's order), so :math:`\\Delta_{ij}` grows along a row, and a row stops at the first
    block of 64 columns whose lower bound :math:`\\Delta_{ij}^2 w_i m_j/(2(w_i + m_j))` (:math:`m_j` the
    smallest weight from column :math:`j` on; used only where its factors are normal numbers) reaches the larger
    of ``threshold`` and the smallest cost so far.
    Returns the smallest cost, its pair, the number of pairs below ``threshold`` and the first ``capacity`` of
    them (rows, columns, costs)."""
    p, q = theta_top.shape[0], theta_bottom.shape[0]
    smallest_after = np.empty(q)
    running = np.inf
    for j in range(q - 1, -1, -1):
        if w_bottom[j] < running:
            running = w_bottom[j]
        smallest_after[j] = running
    best = np.inf
    best_row = -1
    best_col = -1
    count = 0
    rows = np.empty(capacity, dtype=np.int64)
    cols = np.empty(capacity, dtype=np.int64)
    costs = np.empty(capacity)
    for i in range(p):
        w_i = w_top[i]
        for j in range(q):
            if j % 64 == 0 and best < np.inf:
                cutoff = best if best > threshold else threshold
                gap = theta_top[i] - theta_bottom[j]
                half_square = 0.5 * gap * gap
                harmonic = w_i * (smallest_after[j] / (w_i + smallest_after[j]))
                bound = half_square * harmonic
                # (used only where its factors are normal numbers: _allpairs.trusted)
                if trusted(half_square) and trusted(harmonic) and trusted(bound) and bound * BOUND_MARGIN >= cutoff:
                    break
            cost = _families.weighted_pair(_GAUSSIAN_CODE, theta_top[i], theta_bottom[j], w_i, w_bottom[j])[0]
            if cost < best:
                best = cost
                best_row = i
                best_col = j
            if cost < threshold:
                if count < capacity:
                    rows[count] = i
                    cols[count] = j
                    costs[count] = cost
                count += 1
    return best, best_row, best_col, count, rows, cols, costs


_SCAN = compile_once(globals(), needs=(_families._kernels,), rebind=("trusted",), kernels={"scan": "harmonic_scan"})
