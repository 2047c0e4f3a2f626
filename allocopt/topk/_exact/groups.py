r"""Tie merging: arms with equal means (and equal dispersion) on the same side of the top-k boundary.

Tied arms are interchangeable, and the problem is concave and symmetric under exchanging them, so the
average of an optimal allocation over the exchanges is optimal: there is an optimum giving tied arms equal
allocations. Merging each tie class into one *group* with multiplicity :math:`n_g` gives the reduced
homogeneous problem

.. math::
    T^* = \min \Big\{ \sum_g n_g \psi_g : C_{gh}(\psi_g, \psi_h) \ge 1 \ \forall g \in I', h \in J' \Big\},

whose KKT conditions read :math:`n_g = \sum_h \nu_{gh}\, \partial_g C_{gh}`; a group multiplier
:math:`\nu_{gh}` is the sum of the multipliers of its :math:`n_g n_h` member pairs, split evenly when
expanding back to arms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._numba import compile_once
from ...families import ExponentialFamily
from ..pairs import PairTerms, allocation_pair_terms
from ..problem import TopKProblem

__all__ = ["Reduced", "reduce_problem", "merge_ties", "spread_star", "spread_edge"]


@dataclass(frozen=True)
class Reduced:
    """The tie-merged problem: groups sorted by decreasing mean on each side.

    ``top_groups`` and ``bottom_groups`` index the group arrays; ``arm_group[a]`` is the group of arm ``a``.
    Pair ``(r, c)`` of the reduced problem is the top group ``top_groups[r]`` with the bottom group
    ``bottom_groups[c]``.
    """

    family: ExponentialFamily
    kind: str
    theta: np.ndarray
    eta: np.ndarray
    dispersion: np.ndarray
    multiplicity: np.ndarray
    top_groups: np.ndarray
    bottom_groups: np.ndarray
    arm_group: np.ndarray

    @property
    def n_groups(self) -> int:
        return self.theta.shape[0]

    @property
    def n_top(self) -> int:
        return self.top_groups.shape[0]

    @property
    def n_bottom(self) -> int:
        return self.bottom_groups.shape[0]

    def terms(self, psi: np.ndarray, rows: np.ndarray, cols: np.ndarray, second_order: bool = False,
              compiled: bool = False) -> PairTerms:
        """Costs and psi-derivatives of the pairs ``(top_groups[rows], bottom_groups[cols])`` (``compiled``: see
        :func:`~allocopt.topk.pairs.pair_terms`)."""
        top, bottom = self.top_groups[rows], self.bottom_groups[cols]
        inverse_top, inverse_bottom = 1.0 / self.dispersion[top], 1.0 / self.dispersion[bottom]
        return allocation_pair_terms(self.family, self.kind, self.theta[top], self.theta[bottom], self.eta[top],
                                     self.eta[bottom], psi[top] * inverse_top, psi[bottom] * inverse_bottom,
                                     inverse_top, inverse_bottom, second_order, compiled)

    def expand_allocation(self, psi_groups: np.ndarray) -> np.ndarray:
        """Allocation per arm (each member of a group gets the group's value), normalised to the simplex."""
        psi = psi_groups[self.arm_group]
        return psi / psi.sum()


def reduce_problem(problem: TopKProblem, kind: str) -> Reduced:
    """Merge the tie classes of ``problem`` (equal mean and dispersion, necessarily on the same side)."""
    theta, dispersion = problem.theta, problem.dispersion
    order = np.lexsort((dispersion, theta))
    new_group = np.ones(theta.shape[0], dtype=bool)
    new_group[1:] = (np.diff(theta[order]) != 0) | (np.diff(dispersion[order]) != 0)
    group_of_sorted = np.cumsum(new_group) - 1
    arm_group = np.empty(theta.shape[0], dtype=int)
    arm_group[order] = group_of_sorted
    first = order[new_group]
    group_theta, group_dispersion = theta[first], dispersion[first]
    counts = np.bincount(arm_group, minlength=first.shape[0])
    is_top = np.zeros(problem.n_arms, dtype=bool)
    is_top[problem.top] = True
    group_is_top = np.zeros(first.shape[0], dtype=bool)
    group_is_top[arm_group[is_top]] = True
    # order each side by decreasing mean (ties in mean with different dispersion: by dispersion, then index)
    order = np.lexsort((group_dispersion, -group_theta))
    top_groups = order[group_is_top[order]]
    bottom_groups = order[~group_is_top[order]]
    return Reduced(family=problem.family, kind=kind, theta=group_theta,
                   eta=problem.family.unit_natural(group_theta), dispersion=group_dispersion,
                   multiplicity=counts.astype(float), top_groups=top_groups, bottom_groups=bottom_groups,
                   arm_group=arm_group)


def merge_ties(theta, order, dispersion, k, group_theta, group_dispersion, first, count):
    r"""The tie classes of an instance in its arms' ``order`` (top arms, then bottom arms, each by decreasing
    mean: :attr:`~allocopt.topk.TopKProblem.order`), for the double star of the merged problem: group ``g`` is
    the arms ``order[first[g]:first[g] + count[g]]``, of mean ``group_theta[g]`` and dispersion
    ``group_dispersion[g]`` :math:`= n_g \phi_g` (a group of :math:`n_g` arms with a common weight :math:`w_g`
    costs :math:`n_g \phi_g w_g` in the objective, so that the group's allocation is the sum of its members').
    Writes the arrays (of length K) and returns ``(n_groups, n_top)``, the top groups first; ``(0, 0)`` when
    tied arms differ in dispersion (the active set's groups separate them). Plain Python, compiled by the
    double stars' tied kernels.

    Examples
    --------
    >>> theta, dispersion = np.array([0.5, 0.9, 0.5, 0.2, 0.2]), np.ones(5)
    >>> group_theta, group_dispersion = np.empty(5), np.empty(5)
    >>> first, count = np.empty(5, dtype=int), np.empty(5, dtype=int)
    >>> merge_ties(theta, np.array([1, 0, 2, 3, 4]), dispersion, 2, group_theta, group_dispersion, first, count)
    (4, 2)
    >>> group_theta[:4].tolist(), first[:4].tolist(), count[:4].tolist(), group_dispersion[:4].tolist()
    ([0.9, 0.5, 0.5, 0.2], [0, 1, 2, 3], [1, 1, 1, 2], [1.0, 1.0, 1.0, 2.0])
    """
    n_groups = n_top = 0
    for position in range(theta.shape[0]):
        arm = order[position]
        if position == 0 or position == k or theta[arm] != theta[order[position - 1]]:
            group_theta[n_groups] = theta[arm]
            group_dispersion[n_groups] = dispersion[arm]
            first[n_groups] = position
            count[n_groups] = 1
            n_groups += 1
            if position < k:
                n_top += 1
        elif dispersion[arm] != dispersion[order[position - 1]]:
            return 0, 0
        else:
            count[n_groups - 1] += 1
    for group in range(n_groups):
        group_dispersion[group] *= count[group]
    return n_groups, n_top


def spread_star(order, k, n_top, n_groups, first, count, group_psi, mu, keep, psi, rows, cols, values):
    r"""The double star of the tie groups (:func:`merge_ties`) expanded to the arms: each member gets
    :math:`1/n_g` of its group's allocation ``group_psi`` (written to ``psi`` in the arms' order), and each kept
    edge's multiplier (``mu`` holds the kept ones first, ``keep`` flags the edges in the order of
    :func:`~allocopt.topk._exact.star.double_star_edges`) is spread over member pairs by :func:`spread_edge`
    (positions in the problem's top and bottom orders written to ``rows`` and ``cols``, the multipliers,
    normalised to sum one, to ``values``). Returns the number of member pairs and the largest number of them at
    one arm (the rounding terms of the certificate's arm sums). Plain Python, compiled by the tied kernels."""
    n_arms = order.shape[0]
    for group in range(n_groups):
        share = group_psi[group] / count[group]
        for member in range(count[group]):
            psi[order[first[group] + member]] = share
    n_bottom = n_groups - n_top
    n_pairs = kept = 0
    for edge in range(n_groups - 1):
        if keep[edge]:
            top = n_top - 1 if edge < n_bottom else edge - n_bottom  # (i_k, j) for every j, then (i, j_1)
            bottom = n_top + (edge if edge < n_bottom else 0)
            n_pairs = spread_edge(count[top], count[bottom], first[top], first[bottom] - k, mu[kept], rows, cols,
                                  values, n_pairs)
            kept += 1
    total = 0.0
    for pair in range(n_pairs):
        total += values[pair]
    top_degree, bottom_degree = np.zeros(k, dtype=np.int64), np.zeros(n_arms - k, dtype=np.int64)
    for pair in range(n_pairs):
        values[pair] /= total
        top_degree[rows[pair]] += 1
        bottom_degree[cols[pair]] += 1
    return n_pairs, max(top_degree.max(), bottom_degree.max())


def spread_edge(n_top, n_bottom, top_first, bottom_first, nu, rows, cols, values, position):
    r"""A group pair's multiplier :math:`\nu` spread over its member pairs so that each of the :math:`n_g`
    (``n_top``) members of the top group carries :math:`\nu/n_g` and each of the :math:`n_h` members of the
    bottom group :math:`\nu/n_h` (then every member's sum in the certificate is its group's, by symmetry): the
    north-west corner rule of that transport problem, on at most :math:`n_g + n_h - 1` member pairs, not
    :math:`n_g n_h` (massive ties would otherwise expand a forest into tens of millions of pairs). Each pair is a
    segment between consecutive breakpoints of :math:`\{i n_h\} \cup \{j n_g\}` on :math:`[0, n_g n_h]`, and
    carries :math:`\nu` times the segment's length over :math:`n_g n_h`.

    The members are the slots ``top_first + 0 .. n_top - 1`` and ``bottom_first + 0 .. n_bottom - 1``; the pairs
    are written to ``rows``, ``cols``, ``values`` from index ``position``, and the index after the last is
    returned (plain Python, compiled by the exact solver's tied double star too).

    Examples
    --------
    >>> rows, cols, values = np.empty(4, dtype=int), np.empty(4, dtype=int), np.empty(4)
    >>> spread_edge(2, 3, 0, 5, 6.0, rows, cols, values, 0)
    4
    >>> rows.tolist(), cols.tolist(), values.tolist()
    ([0, 0, 1, 1], [5, 6, 6, 7], [2.0, 1.0, 1.0, 2.0])
    """
    total = n_top * n_bottom
    top = bottom = lower = 0
    while lower < total:
        upper = min((top + 1) * n_bottom, (bottom + 1) * n_top)
        rows[position] = top_first + top
        cols[position] = bottom_first + bottom
        values[position] = nu * (upper - lower) / total
        position += 1
        if upper == (top + 1) * n_bottom:
            top += 1
        if upper == (bottom + 1) * n_top:
            bottom += 1
        lower = upper
    return position


# compiled (in this module, where spread_star calls spread_edge by name) by the tied double stars' kernels
TIE_KERNELS = compile_once(globals(), rebind=("spread_edge", "merge_ties", "spread_star"))
