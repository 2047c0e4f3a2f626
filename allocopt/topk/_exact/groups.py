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

from ...families import ExponentialFamily
from ..pairs import PairTerms, allocation_pair_terms
from ..problem import TopKProblem

__all__ = ["Reduced", "reduce_problem"]


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
