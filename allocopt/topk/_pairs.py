r"""Vectorised kernels for the pairwise costs :math:`C_{ij}` and :math:`B_{ij}`.

All functions work on *effective weights* :math:`w_a = \psi_a / \phi_a` (allocation over dispersion) and on
the *unit* family functions (see :mod:`allocopt.families`), and broadcast over any array shape, so the same
code evaluates one pair, a list of pairs or the full :math:`k \times (K-k)` matrix.

Confidence (``kind="confidence"``), with :math:`s = w_i + w_j` and :math:`m = (w_i\theta_i + w_j\theta_j)/s`:

.. math::
    C = w_i d(\theta_i, m) + w_j d(\theta_j, m), \qquad
    \partial_{w_i} C = d(\theta_i, m), \qquad
    \partial^2_{w_i w_i} C = -\frac{(\theta_i - m)^2}{V(m)\, s}.

Budget (``kind="budget"``), with :math:`\bar\eta = (w_i\eta_i + w_j\eta_j)/s` and :math:`x = A'(\bar\eta)`:

.. math::
    B = w_i d(x, \theta_i) + w_j d(x, \theta_j), \qquad
    \partial_{w_i} B = d(x, \theta_i), \qquad
    \partial^2_{w_i w_i} B = -\frac{V(x)(\eta_i - \bar\eta)^2}{s}.

Both are concave and 1-homogeneous, so the Hessian is :math:`\kappa\,(w_j, -w_i)^\top (w_j, -w_i)` with
:math:`\kappa = \partial^2_{w_i w_i} / w_j^2 \le 0`; the kernels return the three entries. The offsets
:math:`m - \theta_i = -w_j(\theta_i - \theta_j)/s` (and their natural-parameter analogues) are formed from
the difference of the means, so the costs keep full relative precision for nearly tied means. At
:math:`s = 0` the cost is 0 and the midpoint serves as infimum point (any point gives valid supergradients).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..families import ExponentialFamily, Gaussian

__all__ = ["PairTerms", "pair_terms", "KINDS"]

KINDS = ("confidence", "budget")


@dataclass(frozen=True)
class PairTerms:
    """Cost, first and (optionally) second derivatives of a batch of pairs, in effective-weight space.

    Attributes
    ----------
    cost : ndarray
        :math:`C_{ij}(w)` (or :math:`B_{ij}`).
    grad_top, grad_bottom : ndarray
        :math:`\\partial C/\\partial w_i` and :math:`\\partial C/\\partial w_j` (divergences to the
        infimum point, always >= 0).
    point : ndarray
        The infimum point (``m`` for confidence, ``x`` for budget).
    hess_top, hess_cross, hess_bottom : ndarray or None
        Second derivatives :math:`\\partial^2_{ii}`, :math:`\\partial^2_{ij}`, :math:`\\partial^2_{jj}`
        (present when requested).
    """

    cost: np.ndarray
    grad_top: np.ndarray
    grad_bottom: np.ndarray
    point: np.ndarray
    hess_top: np.ndarray | None = None
    hess_cross: np.ndarray | None = None
    hess_bottom: np.ndarray | None = None


def _both(divergence, first_top, first_bottom, second_top, second_bottom, stack: bool):
    """``divergence(first_top, second_top)`` and ``divergence(first_bottom, second_bottom)``, in one vectorised
    call when ``stack`` (the pair kernels run on small arrays, where the number of numpy calls dominates; for
    the Gaussian divergence two direct calls are cheaper)."""
    if not stack:
        return divergence(first_top, second_top), divergence(first_bottom, second_bottom)
    arrays = np.broadcast_arrays(first_top, first_bottom, second_top, second_bottom)
    values = divergence(np.stack(arrays[:2]), np.stack(arrays[2:]))
    return values[0], values[1]


def pair_terms(
    family: ExponentialFamily,
    kind: str,
    theta_top: np.ndarray,
    theta_bottom: np.ndarray,
    eta_top: np.ndarray,
    eta_bottom: np.ndarray,
    w_top: np.ndarray,
    w_bottom: np.ndarray,
    second_order: bool = False,
) -> PairTerms:
    """Evaluate a batch of pairs (all array arguments broadcast together).

    ``eta_*`` are the *unit* natural parameters of the means (only used for ``kind="budget"``). Every
    difference is formed without cancellation - :math:`m - \theta_i = -w_j(\theta_i - \theta_j)/s` from the
    difference of the means, natural-parameter and mean differences by the families' accurate difference
    functions - so costs keep full relative precision however close the two means are.
    """
    total = w_top + w_bottom
    empty = total <= 0
    safe_total = np.where(empty, 1.0, total)
    share_top = np.where(empty, 0.5, w_top / safe_total)
    share_bottom = np.where(empty, 0.5, w_bottom / safe_total)
    stack = not isinstance(family, Gaussian)
    if kind == "confidence":
        gap = theta_top - theta_bottom
        offset_top = -share_bottom * gap  # m - theta_i
        offset_bottom = share_top * gap  # m - theta_j
        point = theta_top + offset_top
        grad_top, grad_bottom = _both(family.unit_kl_offset, theta_top, theta_bottom, offset_top, offset_bottom,
                                      stack)
        spread_top, spread_bottom = -offset_top, -offset_bottom  # theta - m
    else:
        natural_gap = family.unit_natural_difference(theta_top, theta_bottom)
        natural_offset_top = -share_bottom * natural_gap  # eta_bar - eta_i
        natural_offset_bottom = share_top * natural_gap  # eta_bar - eta_j
        # x - theta_i and x - theta_j, with x = A'(eta_bar)
        mean_offset_top, mean_offset_bottom = _both(
            lambda eta, offset_and_mean: family.unit_mean_difference(eta, offset_and_mean[0], offset_and_mean[1]),
            eta_top, eta_bottom, np.stack(np.broadcast_arrays(natural_offset_top, theta_top)),
            np.stack(np.broadcast_arrays(natural_offset_bottom, theta_bottom)), stack=False)
        point = theta_top + mean_offset_top
        # d(x, theta) = d_1(theta + offset, theta) = unit_kl_offset(theta + offset, -offset)
        grad_top, grad_bottom = _both(family.unit_kl_offset, theta_top + mean_offset_top,
                                      theta_bottom + mean_offset_bottom, -mean_offset_top, -mean_offset_bottom,
                                      stack)
        spread_top, spread_bottom = -natural_offset_top, -natural_offset_bottom  # eta - eta_bar
    cost = w_top * grad_top + w_bottom * grad_bottom
    if not second_order:
        return PairTerms(cost, grad_top, grad_bottom, point)
    if kind == "confidence":
        curvature_scale = 1.0 / (family.unit_variance(point) * safe_total)
    else:
        curvature_scale = family.unit_variance(point) / safe_total
    hess_top = -curvature_scale * spread_top * spread_top
    hess_bottom = -curvature_scale * spread_bottom * spread_bottom
    hess_cross = -curvature_scale * spread_top * spread_bottom
    return PairTerms(cost, grad_top, grad_bottom, point, hess_top, hess_cross, hess_bottom)
