"""Closed-form complexity measures of the papers, as report providers: the instance's gaps, exact top-k
identification (:math:`H_1`, :math:`H_2`, :math:`H(p)` and the fixed-budget sample complexities and budgets of
Shahrampour and Tarokh 2017), their best-arm bounds of Table I, and the epsilon-top-k measures of Chen, Chen,
Zhang, Zhou (2017). Each group is a :class:`~allocopt.complexity.measures.MeasureProvider`."""

from __future__ import annotations

from .eps_top_k import (adaptive_topk_sample_complexity, clucb_pac_sample_complexity, h_0_eps, h_t_eps,
                        improved_topk_sample_complexity, spread_constant, zhou_sample_complexity)
from .fixed_budget import (at_lucb_sample_complexity, nonlinear_sequential_elimination_bound,
                           nsar_error_bound, nsar_sample_complexity, sar_sample_complexity, sequential_halving_bound,
                           successive_rejects_bound)
from ._inputs import ranked_descending, require_unique_top
from .measures import GroupBuilder, Measure, MeasureNotApplicable, MeasureProvider, ReportContext
from .top_m import c_p, gaps, h1, h1_bai, h2, h_p, logbar

__all__ = ["GROUP_INSTANCE", "GROUP_EXACT", "GROUP_BEST_ARM", "GROUP_EPS", "INSTANCE_PROVIDER", "EXACT_PROVIDER",
           "BEST_ARM_PROVIDER", "EPS_PROVIDER"]

GROUP_INSTANCE = "instance"
GROUP_EXACT = "exact top-k identification (Shahrampour & Tarokh 2017; Chen et al. 2017; Jiang et al. 2017)"
GROUP_BEST_ARM = "best arm, fixed budget (Shahrampour & Tarokh 2017, Table I)"
GROUP_EPS = "epsilon-top-k, aggregate regret (Chen et al. 2017)"


def _instance_measures(context: ReportContext) -> list[Measure]:
    out = GroupBuilder(GROUP_INSTANCE)
    theta, k = context.theta, context.k
    gap_values = gaps(theta, k)
    out.add("gaps", "Delta_i^(k)", gap_values, "Shahrampour & Tarokh 2017, eq. (4); Jiang et al. 2017, Sec. 2",
            "per-arm gaps to the top-k boundary, in input order")
    out.add("boundary_gap", "mu_[k] - mu_[k+1]", gap_values.min(), "Shahrampour & Tarokh 2017, eq. (4)",
            "smallest gap; 0 means the top-k set is not unique")
    out.add("spread_constant", "c (c-spread)", spread_constant(theta), "Chen et al. 2017, Def. 1",
            "Lemma 1 (H(t,eps) = O(n/sqrt(eps))) needs c = O(1)")
    return out.measures


def _exact_measures(context: ReportContext) -> list[Measure]:
    out = GroupBuilder(GROUP_EXACT)
    theta, k, delta, n_arms = context.theta, context.k, context.delta, context.n_arms
    require_unique_top(theta, ranked_descending(theta), k, "report", "theta")
    out.add("h1", "H1^(k)", h1(theta, k), "Shahrampour & Tarokh 2017, eq. (4) (= H of Jiang et al. 2017)",
            "AT-LUCB, lil'RandLUCB, lil'CLUCB sample complexity")
    out.add("h2", "H2^(k)", h2(theta, k), "Shahrampour & Tarokh 2017, eq. (4)", "SAR sample complexity (Table II)")
    for p in context.p:
        out.add(f"h_p[p={p:g}]", f"H^(k)(p={p:g})", h_p(theta, p, k), "Shahrampour & Tarokh 2017, eq. (4)",
                "NSAR sample complexity (Table II)")
    out.add("logbar", "logbar(K)", logbar(n_arms), "Shahrampour & Tarokh 2017, Table I",
            "SR and SAR budget division, = C_1")
    for p in context.p:
        out.add(f"c_p[p={p:g}]", f"C_p (p={p:g})", c_p(n_arms, p), "Shahrampour & Tarokh 2017, eq. (3)",
                "NSAR budget division")
    out.add("sar_sample_complexity", "SAR order", sar_sample_complexity(theta, k, delta),
            "Shahrampour & Tarokh 2017, Table II",
            "H2^(k) logbar(K) log(K/delta)")
    out.add("at_lucb_sample_complexity", "AT-LUCB order", at_lucb_sample_complexity(theta, k, delta),
            "Shahrampour & Tarokh 2017, Table II", "H1^(k) log(H1^(k)/delta)")
    for p in context.p:
        out.add(f"nsar_sample_complexity[p={p:g}]", f"NSAR order (p={p:g})",
                nsar_sample_complexity(theta, k, delta, p), "Shahrampour & Tarokh 2017, Table II",
                "H^(k)(p) C_p log(K/delta)")
    out.add("sar_budget", "SAR budget", nsar_error_bound(theta, k, 1.0).required_budget(delta),
            "Shahrampour & Tarokh 2017, Prop. 2, p = 1", "budget with 2K^2 exp(-(T-K)/(8 logbar H2)) <= delta")
    for p in context.p:
        out.add(f"nsar_budget[p={p:g}]", f"NSAR budget (p={p:g})", nsar_error_bound(theta, k, p).required_budget(delta),
                "Shahrampour & Tarokh 2017, Prop. 2", "budget with 2K^2 exp(-(T-K)/(8 C_p H^(k)(p))) <= delta")
    return out.measures


def _best_arm_measures(context: ReportContext) -> list[Measure]:
    if context.k != 1:
        raise MeasureNotApplicable(f"Table I is about best-arm identification, k = 1; this report has k = {context.k}")
    out = GroupBuilder(GROUP_BEST_ARM)
    theta = context.theta
    out.add("h1_bai", "H1", h1_bai(theta), "Shahrampour & Tarokh 2017, eq. (2)", "sum over arms 2..K of Delta_i^-2")
    bounds = [("successive_rejects", "SR", successive_rejects_bound(theta)),
              ("sequential_halving", "SH", sequential_halving_bound(theta))]
    bounds += [(f"nonlinear_sequential_elimination[p={p:g}]", f"NSE (p={p:g})",
                nonlinear_sequential_elimination_bound(theta, p)) for p in context.p]
    for key, label, bound in bounds:
        out.add(f"{key}.alpha", f"{label} alpha", bound.alpha, bound.source, "error <= beta exp(-T/alpha)")
        out.add(f"{key}.beta", f"{label} beta", bound.beta, bound.source, "error <= beta exp(-T/alpha)")
    return out.measures


def _eps_measures(context: ReportContext) -> list[Measure]:
    out = GroupBuilder(GROUP_EPS)
    theta, k, eps, delta, n_arms = context.theta, context.k, context.eps, context.delta, context.n_arms
    hardness = h_t_eps(theta, k, eps)
    out.add("t_eps", "t(eps, k)", hardness.t, "Chen et al. 2017, eq. (3)",
            "arms that may be exchanged within the regret")
    out.add("psi_t", "Psi_t", hardness.psi_t, "Chen et al. 2017, eq. (4)", "min(Delta_[k-t], Delta_[k+t+1])")
    out.add("psi_t_eps", "Psi_t^eps", hardness.psi_t_eps, "Chen et al. 2017, eq. (5)", "max(eps, Psi_t)")
    out.add("h_t_eps", "H(t, eps)", hardness.value, "Chen et al. 2017, eq. (6)",
            "AdaptiveTopK sample complexity (Thm 1-2)")
    out.add("h_0_eps", "H(0, eps)", h_0_eps(theta, k, eps), "Chen et al. 2017, Sec. 1", "CLUCB-PAC sample complexity")
    out.add("n_over_eps_squared", "n eps^-2", n_arms / eps**2, "Chen et al. 2017, Sec. 1.1", "upper bound of H(0, eps)")
    out.add("adaptive_topk_sample_complexity", "Theorem 1 order",
            adaptive_topk_sample_complexity(theta, k, eps, delta), "Chen et al. 2017, Thm 1",
            "(log log 1/eps + log n + log 1/delta) H(t, eps)")
    out.add("improved_topk_sample_complexity", "Theorem 2 order",
            improved_topk_sample_complexity(theta, k, eps, delta), "Chen et al. 2017, Thm 2",
            "(log 1/eps + log 1/delta) H(t, eps)")
    out.add("clucb_pac_sample_complexity", "CLUCB-PAC order", clucb_pac_sample_complexity(theta, k, eps, delta),
            "Chen et al. 2017, Sec. 1 (Chen et al. 2014)", "(log H(0, eps) + log 1/delta) H(0, eps)")
    out.add("zhou_sample_complexity", "OptMAI order", zhou_sample_complexity(n_arms, k, eps, delta),
            "Chen et al. 2017, Sec. 1 (Zhou et al. 2014)", "(n/eps^2)(1 + log(1/delta)/k), instance-independent")
    return out.measures


INSTANCE_PROVIDER = MeasureProvider(GROUP_INSTANCE, _instance_measures)
EXACT_PROVIDER = MeasureProvider(GROUP_EXACT, _exact_measures)
BEST_ARM_PROVIDER = MeasureProvider(GROUP_BEST_ARM, _best_arm_measures)
EPS_PROVIDER = MeasureProvider(GROUP_EPS, _eps_measures)
