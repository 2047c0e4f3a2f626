r"""The top-k layer's measures for complexity reports: the optimal allocations of Wang, Yang, You (2022),
:math:`\Gamma^*`, :math:`T^* = 1/\Gamma^*`, the lower bound :math:`T^* \mathrm{kl}(\delta, 1-\delta)` and the
fixed-budget exponent :math:`\Gamma_B^*`, each with its certified gap (two exact solves, one per kind).

The top-k layer is imported when the provider runs, so that importing :mod:`allocopt.complexity` stays cheap.
"""

from __future__ import annotations

import math

from ._inputs import ranked_descending, require_unique_top
from .measures import GroupBuilder, Measure, MeasureProvider, ReportContext

__all__ = ["GROUP_ALLOCATION", "ALLOCATION_PROVIDER", "kl_confidence"]

GROUP_ALLOCATION = "optimal allocation, top-k layer (Wang et al. 2022)"


def _allocation_measures(context: ReportContext) -> list[Measure]:
    r"""The optimal allocations of the top-k layer (Wang, Yang, You 2022, problems (5) and (11)).

    With :math:`I` the top ``k`` arms, :math:`J` the others and :math:`d` the family's divergence,

    .. math::
        \Gamma^* = \max_{\psi \in \Sigma_K} \min_{i \in I, j \in J} \inf_x [\psi_i d(\theta_i, x)
        + \psi_j d(\theta_j, x)], \qquad
        \Gamma_B^* = \max_{\psi \in \Sigma_K} \min_{i \in I, j \in J} \inf_x [\psi_i d(x, \theta_i)
        + \psi_j d(x, \theta_j)],

    both solved by ``solve_topk(method="exact")``. Each :class:`~allocopt.topk.TopKResult` gives
    :math:`\Gamma(\psi) \le \Gamma^* \le \Gamma(\psi) + \text{gap}`, hence
    :math:`T^* = 1/\Gamma^* \in [1/(\Gamma(\psi) + \text{gap}), 1/\Gamma(\psi)]`; Lemma 2.1's bound
    :math:`\mathbb E[\tau_\delta] \ge T^* \mathrm{kl}(\delta, 1-\delta)` is evaluated at the lower end.

    Raises :class:`~allocopt.exceptions.InvalidInstanceError` on a tie at the top-``k`` boundary. Boundary
    means as close as adjacent doubles are fine: the pair costs are evaluated from the offsets
    :math:`m_{ij} - \theta_i`, never from a rounded transportation point.
    """
    from ..topk import TopKProblem, solve_topk  # here, not at the top: importing allocopt.complexity stays cheap

    theta, k = context.theta, context.k
    ranked = ranked_descending(theta)
    require_unique_top(theta, ranked, k, "report", "theta")
    problem = TopKProblem(theta, k, family=context.family)
    confidence = solve_topk(problem, method="exact", kind="confidence")
    budget = solve_topk(problem, method="exact", kind="budget")
    t_lower, t_upper = confidence.characteristic_time_bounds
    out = GroupBuilder(GROUP_ALLOCATION)
    out.add("gamma_star", "Gamma*", confidence.value, "Wang et al. 2022, eq. (5)",
            "max_psi min_{i in I, j in J} C_ij(psi): Gamma(psi*) of the exact solver, <= Gamma*")
    out.add("gamma_star.gap", "Gamma* gap", confidence.gap, "Wang et al. 2022, Prop. 3.6",
            f"certified: Gamma(psi*) <= Gamma* <= Gamma(psi*) + gap (status {confidence.status})")
    out.add("psi_star", "psi*", confidence.psi, "Wang et al. 2022, eq. (5)",
            "optimal fixed-confidence allocation, in input order")
    out.add("t_star", "T* = 1/Gamma*", t_upper, "Wang et al. 2022, eq. (5)", "characteristic time 1/Gamma(psi*), >= T*")
    out.add("t_star.lower", "T* lower", t_lower, "Wang et al. 2022, Prop. 3.6",
            "certified: 1/(Gamma(psi*) + gap) <= T* <= 1/Gamma(psi*)")
    out.add("sample_complexity_lower_bound", "T* kl(delta, 1-delta)", t_lower * kl_confidence(context.delta),
            "Wang et al. 2022, Lemma 2.1", "E[tau_delta] of every delta-correct algorithm (certified T* lower end)")
    out.add("gamma_b_star", "Gamma_B*", budget.value, "Wang et al. 2022, eq. (10)-(11)",
            "fixed-budget exponent max_psi min B_ij(psi): Gamma_B(psi_B*), <= Gamma_B*; = Gamma* for Gaussian")
    out.add("gamma_b_star.gap", "Gamma_B* gap", budget.gap, "Wang et al. 2022, Prop. 3.6",
            f"certified: Gamma_B(psi_B*) <= Gamma_B* <= Gamma_B(psi_B*) + gap (status {budget.status})")
    out.add("psi_b_star", "psi_B*", budget.psi, "Wang et al. 2022, eq. (11)",
            "optimal fixed-budget allocation, in input order")
    return out.measures


def kl_confidence(delta: float) -> float:
    r""":math:`\mathrm{kl}(\delta, 1-\delta) = (1 - 2\delta)\log((1-\delta)/\delta)`, the Bernoulli divergence of
    Lemma 2.1 (Wang, Yang, You 2022); about :math:`\log(1/\delta)` for small :math:`\delta`.

    Computed as :math:`(1 - 2\delta)(\mathrm{log1p}(-\delta) - \log\delta)`, so that it stays finite and
    accurate for every :math:`\delta` in (0, 1), down to the smallest subnormal (where :math:`1 - \delta`
    rounds to 1 and the textbook formula divides by zero).

    Examples
    --------
    >>> round(kl_confidence(0.1), 12)  # 0.8 log 9
    1.757779661869
    >>> round(kl_confidence(1e-300), 6)  # 300 log 10
    690.775528
    """
    delta = float(delta)
    return (1.0 - 2.0 * delta) * (math.log1p(-delta) - math.log(delta))


ALLOCATION_PROVIDER = MeasureProvider(GROUP_ALLOCATION, _allocation_measures)
