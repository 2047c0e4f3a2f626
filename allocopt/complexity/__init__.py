r"""Complexity measures of bandit instances (the formulas are tabulated in docs/complexity.md).

Pure, vectorised functions of the arms' means. Every function accepts unsorted means and states its sorted-index
convention; the gap-based measures also accept a batch of instances as an array of shape ``(..., K)``.

* :mod:`~allocopt.complexity.top_m` - best-arm and top-``m`` gaps, :math:`H_1`, :math:`H_2`, :math:`H(p)`,
  :math:`C_p`, :math:`\overline{\log}(K)` (Shahrampour and Tarokh 2017, eq. (2)-(4);
  the :math:`H` of Jiang, Li, Qiao 2017).
* :mod:`~allocopt.complexity.fixed_budget` - Table I error bounds (Successive Rejects, Sequential Halving,
  Nonlinear Sequential Elimination), NSAR's Proposition 2 and Table II sample complexities (SAR, AT-LUCB, NSAR).
* :mod:`~allocopt.complexity.eps_top_k` - aggregate regret, :math:`t(\epsilon, K)`, :math:`\Psi_t^\epsilon`,
  :math:`H(t,\epsilon)`, :math:`H(0,\epsilon)`, c-spread constant, Theorems 1-2, CLUCB-PAC and Zhou et al.
  (Chen, Chen, Zhang, Zhou 2017).
* :mod:`~allocopt.complexity.lil` - the LIL confidence radius :math:`U(t,\omega)` and :math:`c_\epsilon`
  (Jiang, Li, Qiao 2017).
* :mod:`~allocopt.complexity.combinatorial` - combinatorial pure exploration gaps and hardness for a decision
  class, the top-:math:`K` class and its width (Jiang, Li, Qiao 2017).
* :mod:`~allocopt.complexity.reporting` - :func:`report`: every measure that applies to an instance, as one
  :class:`ComplexityReport` built from :class:`MeasureProvider` objects (the top-k and CBMAI layers plug in there).

Examples
--------
>>> from allocopt import complexity
>>> round(float(complexity.h1([0.5, 0.9, 0.8], 1)), 6)  # 0.1**-2 + 0.1**-2 + 0.4**-2
206.25
"""

from __future__ import annotations

from .combinatorial import cpe_gaps, cpe_h, top_k_decision_class, top_k_width
from .eps_top_k import (EpsTopKHardness, adaptive_topk_sample_complexity, aggregate_regret,
                        clucb_pac_sample_complexity, h_0_eps, h_t_eps, improved_topk_sample_complexity,
                        spread_constant, zhou_sample_complexity)
from .fixed_budget import (ErrorBound, at_lucb_sample_complexity, nonlinear_sequential_elimination_bound,
                           nsar_error_bound, nsar_sample_complexity, sar_sample_complexity, sequential_halving_bound,
                           successive_rejects_bound)
from .lil import LIL_FORMS, c_eps, lil_radius
from .reporting import (DEFAULT_PROVIDERS, NSAR_EXPERIMENT_EXPONENTS, ComplexityReport, Measure, MeasureNotApplicable,
                        MeasureProvider, OmittedGroup, ReportContext, report)
from .top_m import c_p, gaps, h1, h1_bai, h2, h_p, lil_sample_complexity, logbar, sorted_gaps

__all__ = [
    # top_m
    "gaps", "sorted_gaps", "h1", "h1_bai", "h2", "h_p", "c_p", "logbar", "lil_sample_complexity",
    # fixed_budget
    "ErrorBound", "successive_rejects_bound", "sequential_halving_bound", "nonlinear_sequential_elimination_bound",
    "nsar_error_bound", "sar_sample_complexity", "at_lucb_sample_complexity", "nsar_sample_complexity",
    # eps_top_k
    "aggregate_regret", "h_0_eps", "h_t_eps", "EpsTopKHardness", "spread_constant",
    "adaptive_topk_sample_complexity", "improved_topk_sample_complexity", "clucb_pac_sample_complexity",
    "zhou_sample_complexity",
    # lil
    "lil_radius", "c_eps", "LIL_FORMS",
    # combinatorial
    "cpe_gaps", "cpe_h", "top_k_decision_class", "top_k_width",
    # reporting
    "report", "ComplexityReport", "Measure", "OmittedGroup", "ReportContext", "MeasureProvider",
    "MeasureNotApplicable", "DEFAULT_PROVIDERS", "NSAR_EXPERIMENT_EXPONENTS",
]
