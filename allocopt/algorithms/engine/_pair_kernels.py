r"""Pair costs on a (top, bottom) grid for the engine's hot path: a closed form when the family declares
harmonic costs (:meth:`allocopt.families.ExponentialFamily.harmonic_costs`: Gaussian arms), the top-k layer's
kernel (:func:`allocopt.topk.pairs.pair_terms`) otherwise.

For Gaussian arms with effective weights :math:`w_a = N_a/\sigma_a^2` (or :math:`\psi_a/\sigma_a^2`) and
:math:`v_a = 1/w_a`, both kinds coincide (:math:`B_{ij} = C_{ij}`, Wang, Yang, You 2022, Remark 1):

.. math::
    C_{ij} = \frac{(\theta_i - \theta_j)^2}{2 (v_i + v_j)}, \qquad
    h_{i;j} = \frac{w_i\, \partial_{w_i} C_{ij}}{C_{ij}} = \frac{v_i}{v_i + v_j},

four array operations per pair instead of the general kernel's twenty, which is what makes vectorised
replications fast. The tests check both forms against :meth:`allocopt.TopKProblem.costs` and
:meth:`allocopt.TopKProblem.sampling_functions`.
"""

from __future__ import annotations

import numpy as np

from ...families import ExponentialFamily
from ...topk.pairs import pair_terms
from ...topk.problem import sampling_function_top
from .statistics import top_k_order

__all__ = ["gather", "SortedArms", "sort_arms", "pair_cost_grid", "pull_probability"]


def gather(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``values[..., indices]`` row by row for (K,) or (R, K) arrays (``take_along_axis`` without its overhead)."""
    if values.ndim == 1:
        return values[indices]
    return values[np.arange(values.shape[0])[:, None], indices]


class SortedArms:
    """Values and weights of the arms split into the top-k and the others (last axis; see
    :func:`~allocopt.algorithms.engine.statistics.top_k_order`), shaped as grid columns and rows."""

    __slots__ = ("top", "bottom", "value_top", "value_bottom", "weight_top", "weight_bottom")

    def __init__(self, values: np.ndarray, weights: np.ndarray, k: int):
        self.top, self.bottom = top_k_order(values, k)
        self.value_top, self.value_bottom = gather(values, self.top)[..., :, None], gather(values, self.bottom)[..., None, :]
        self.weight_top = gather(weights, self.top)[..., :, None]
        self.weight_bottom = gather(weights, self.bottom)[..., None, :]


def sort_arms(values: np.ndarray, weights: np.ndarray, k: int) -> SortedArms:
    """:class:`SortedArms` of ``values`` (one run (K,) or a batch (R, K))."""
    return SortedArms(values, weights, k)


def pair_cost_grid(family: ExponentialFamily, kind: str, arms: SortedArms) -> tuple[np.ndarray, np.ndarray | None]:
    """Costs of every (top, bottom) pair, shape (..., k, K-k), and the derivatives in the top weight
    (None for harmonic costs, whose pull probability has a closed form: :func:`pull_probability`)."""
    if family.harmonic_costs(kind):
        gap = arms.value_top - arms.value_bottom
        return 0.5 * (gap * gap) / (1.0 / arms.weight_top + 1.0 / arms.weight_bottom), None
    eta_top: np.ndarray | None = None
    eta_bottom: np.ndarray | None = None
    if kind == "budget":
        eta_top, eta_bottom = family.unit_natural(arms.value_top), family.unit_natural(arms.value_bottom)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = pair_terms(family, kind, arms.value_top, arms.value_bottom, eta_top, eta_bottom, arms.weight_top,
                           arms.weight_bottom)
    return terms.cost, terms.grad_top


def pull_probability(family: ExponentialFamily, cost, grad_top, weight_top, weight_bottom):
    r""":math:`h_{i;j}` of selected pairs (elementwise over the given entries); ``grad_top`` is that of
    :func:`pair_cost_grid`, ``None`` for harmonic costs (closed form :math:`v_i/(v_i + v_j)`)."""
    if grad_top is None:
        inverse_top, inverse_bottom = 1.0 / weight_top, 1.0 / weight_bottom
        return inverse_top / (inverse_top + inverse_bottom)
    return sampling_function_top(cost, grad_top, weight_top, weight_bottom)
