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

Both are concave and 1-homogeneous, so the Hessian is :math:`-f f^\top / s` for a vector :math:`f` of two
*Hessian factors* (:math:`(\theta_a - m)/\sqrt{V(m)}`, respectively :math:`\sqrt{V(x)}(\eta_a - \bar\eta)`);
the kernels return the three entries. The families evaluate the divergences to the infimum point
(:class:`~allocopt.families.PairDivergences`) from the shares :math:`w_a/s`, with full relative precision over
their whole mean domain: offsets from differences of the means (nearly tied means), complements of Bernoulli
points as share-weighted sums of the means' complements (means within :math:`10^{-15}` of 1), and ratios
rather than offsets for means many orders of magnitude apart. At :math:`s = 0` the cost is 0 and the
midpoint serves as infimum point (any point gives valid supergradients).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..families.kernels import pair_values
from ..families import ExponentialFamily, PairDivergences

__all__ = ["PairTerms", "pair_terms", "allocation_pair_terms", "KINDS"]

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


def pair_terms(
    family: ExponentialFamily,
    kind: str,
    theta_top: np.ndarray,
    theta_bottom: np.ndarray,
    eta_top: np.ndarray | None,
    eta_bottom: np.ndarray | None,
    w_top: np.ndarray,
    w_bottom: np.ndarray,
    second_order: bool = False,
    compiled: bool = False,
) -> PairTerms:
    """Evaluate a batch of pairs (all array arguments broadcast together).

    ``eta_*`` are the *unit* natural parameters of the means (only used for ``kind="budget"``; may be None
    otherwise). The family evaluates the divergences to the infimum point from the shares
    :math:`s_a = w_a/(w_i + w_j)` (:meth:`~allocopt.families.ExponentialFamily.unit_confidence_pair`,
    :meth:`~allocopt.families.ExponentialFamily.unit_budget_pair`) in forms that keep full relative precision
    over the whole mean domain: nearly tied means, Bernoulli means within :math:`10^{-15}` of 0 or 1 (the
    complement of the infimum point is formed as a share-weighted sum, never as ``1 - point``), and means
    many orders of magnitude apart (ratios, never offsets from the larger mean).

    With ``compiled``, the divergences come from the family's compiled pair kernel where it has one
    (:meth:`~allocopt.families.ExponentialFamily.compiled_pair`: the same operations, agreeing with the numpy
    kernel to a few ulps, within the evaluation-error allowance of every certificate) and several times faster
    on large batches; for callers whose numbers are then certified independently (the barrier).
    """
    total = w_top + w_bottom
    empty = total <= 0
    safe_total = np.where(empty, 1.0, total)
    share_top = np.where(empty, 0.5, w_top / safe_total)
    share_bottom = np.where(empty, 0.5, w_bottom / safe_total)
    code = family._compiled_pair_code(kind) if compiled else None
    if code is not None:
        pair = PairDivergences(*pair_values(code, theta_top, theta_bottom, share_top, share_bottom))
    elif kind == "confidence":
        pair = family.unit_confidence_pair(theta_top, theta_bottom, share_top, share_bottom)
    else:
        assert eta_top is not None and eta_bottom is not None, "budget costs need the natural parameters"
        pair = family.unit_budget_pair(theta_top, theta_bottom, eta_top, eta_bottom, share_top, share_bottom)
    cost = w_top * pair.top + w_bottom * pair.bottom
    if not second_order:
        return PairTerms(cost, pair.top, pair.bottom, pair.point)
    # Hessian -f f^T / s with f the family's Hessian factors. An arm with a vanishing share next to a far-away
    # mean has a second derivative beyond the floating-point range (it grows like 1/share^2): -inf is then its
    # correctly rounded value, and the Newton-type callers treat non-finite systems as a failed step
    factor_top = pair.hessian_factor_top / np.sqrt(safe_total)
    factor_bottom = pair.hessian_factor_bottom / np.sqrt(safe_total)
    with np.errstate(over="ignore"):
        return PairTerms(cost, pair.top, pair.bottom, pair.point, -factor_top * factor_top,
                         -factor_top * factor_bottom, -factor_bottom * factor_bottom)


def allocation_pair_terms(
    family: ExponentialFamily,
    kind: str,
    theta_top: np.ndarray,
    theta_bottom: np.ndarray,
    eta_top: np.ndarray,
    eta_bottom: np.ndarray,
    w_top: np.ndarray,
    w_bottom: np.ndarray,
    inverse_top: np.ndarray,
    inverse_bottom: np.ndarray,
    second_order: bool = False,
    compiled: bool = False,
) -> PairTerms:
    r""":func:`pair_terms` with the derivatives taken with respect to the allocations :math:`\psi` instead of
    the effective weights :math:`w_a = \psi_a / \phi_a`: by the chain rule
    :math:`\partial_{\psi_a} = \partial_{w_a} / \phi_a` and :math:`\partial^2_{\psi_a \psi_b} =
    \partial^2_{w_a w_b} / (\phi_a \phi_b)`. ``inverse_*`` are :math:`1/\phi` of the pairs' arms (or tie
    groups), ``w_*`` their effective weights."""
    terms = pair_terms(family, kind, theta_top, theta_bottom, eta_top, eta_bottom, w_top, w_bottom, second_order,
                       compiled)
    if not second_order:
        return PairTerms(terms.cost, terms.grad_top * inverse_top, terms.grad_bottom * inverse_bottom, terms.point)
    assert terms.hess_top is not None and terms.hess_cross is not None and terms.hess_bottom is not None
    return PairTerms(terms.cost, terms.grad_top * inverse_top, terms.grad_bottom * inverse_bottom, terms.point,
                     terms.hess_top * inverse_top**2, terms.hess_cross * inverse_top * inverse_bottom,
                     terms.hess_bottom * inverse_bottom**2)
