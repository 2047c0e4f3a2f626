r"""One report with every complexity measure that applies to an instance, built from measure providers.

:func:`report` evaluates a sequence of :class:`MeasureProvider` objects on a :class:`ReportContext` (the validated
instance and settings) and collects their :class:`Measure` values into one frozen :class:`ComplexityReport`. A
provider whose measures do not apply to the instance raises :class:`MeasureNotApplicable` (or the
:class:`~allocopt.exceptions.InvalidInstanceError` of the measure it calls, for example on a tie at the top-k
boundary); the report then lists its group under ``omitted`` with the reason.

The ``source`` of each :class:`Measure` names the paper by its first author(s) and year, then the equation, section,
table or theorem of that paper:

* Wang et al. 2022: Wang, Yang, You (2022), *Optimality Conditions and Algorithms for Top-K Arm Identification*;
* Tang et al. 2024: Tang, Jain, Nayyar, Nuzzo (2024), *Pure Exploration for Constrained Best Mixed Arm
  Identification with a Fixed Budget*;
* Shahrampour & Tarokh 2017: Shahrampour and Tarokh (2017), *Nonlinear Sequential Accepts and Rejects for
  Identification of Top Arms in Stochastic Bandits*;
* Chen et al. 2017: Chen, Chen, Zhang, Zhou (2017), *Adaptive Multiple-Arm Identification* (ICML 2017);
* Jiang et al. 2017: Jiang, Li, Qiao (2017), *Practical Algorithms for Best-K Identification in Multi-Armed
  Bandits*.

Where the other layers plug in
------------------------------
:data:`DEFAULT_PROVIDERS` is the single place that decides what a report contains. The measures that need the
other optimisation layers are providers there, with no change to :func:`report` or to the result type:

* the allocation-based measures of the top-k layer (group :data:`GROUP_ALLOCATION`, docs/topk.md): the top-k
  problem of ``context.theta``, ``context.k`` and ``context.family`` is solved by
  ``solve_topk(method="exact")`` for ``kind="confidence"`` and ``kind="budget"`` (``allocopt.topk`` is imported
  inside the compute function, so that importing this module stays cheap), giving

  .. math::
      \Gamma^* = \max_{\psi \in \Sigma_K} \min_{i \in I, j \in J} C_{ij}(\psi), \qquad T^* = 1/\Gamma^*, \qquad
      \Gamma_B^* = \max_{\psi \in \Sigma_K} \min_{i \in I, j \in J} B_{ij}(\psi),

  the optimal allocations, the certified gaps (:math:`\Gamma(\psi) \le \Gamma^* \le \Gamma(\psi) + \text{gap}`)
  and the lower bound of Lemma 2.1 (Wang, Yang, You 2022) on the expected sample complexity of any
  :math:`\delta`-correct algorithm, :math:`T^* \mathrm{kl}(\delta, 1-\delta)` with :math:`\mathrm{kl}(\delta, 1-\delta)
  = (1-2\delta) \log((1-\delta)/\delta)`, evaluated at the certified lower end :math:`1/(\Gamma(\psi) + \text{gap})` of
  :math:`T^*`. A tie at the top-k boundary omits the group;
* the CBMAI gaps of ``allocopt.cbmai`` (group :data:`GROUP_CBMAI`, docs/cbmai.md): :math:`\Delta_0^2`,
  :math:`\Delta_J^2` per basis, :math:`\Delta_a^2`, the sorted :math:`\Delta_{(i)}^2` and the exponents (13)-(15) of
  :func:`allocopt.cbmai.cbmai_hardness`, for the instance ``context.extra["cbmai"]`` (a
  :class:`~allocopt.cbmai.CBMAIProblem`: a CBMAI instance is not described by ``theta`` and ``k``), with the noise
  levels ``extra["sigma_r"]`` and ``extra["sigma_c"]`` when given and otherwise the paper's
  :math:`\sigma_r = 1`, :math:`\sigma_c = 0.5` (the defaults of ``cbmai_hardness``). Without an instance the group
  is omitted; an instance outside Assumption 1 omits it with the reason. ``cbmai_hardness`` takes seconds to tens
  of seconds on the paper's ``K = 24, L = 2`` instances.

Callers can also pass their own ``providers=`` (for example ``DEFAULT_PROVIDERS + (my_provider,)``).
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from .._json import jsonable
from .._result import CORE_FIELDS, Result
from .._validation import as_float, as_float_vector, as_positive_float, describe, fail
from ..exceptions import AllocoptError, InvalidArgumentError, InvalidInstanceError
from ..families import Bernoulli, ExponentialFamily, get_family
from ._inputs import as_confidence, as_subset_size, ranked_descending, require_unique_top
from .eps_top_k import (adaptive_topk_sample_complexity, clucb_pac_sample_complexity, h_0_eps, h_t_eps,
                        improved_topk_sample_complexity, spread_constant, zhou_sample_complexity)
from .fixed_budget import (at_lucb_sample_complexity, nonlinear_sequential_elimination_bound,
                           nsar_error_bound, nsar_sample_complexity, sar_sample_complexity, sequential_halving_bound,
                           successive_rejects_bound)
from .top_m import c_p, gaps, h1, h1_bai, h2, h_p, logbar

__all__ = [
    "Measure",
    "OmittedGroup",
    "ReportContext",
    "MeasureProvider",
    "MeasureNotApplicable",
    "ComplexityReport",
    "DEFAULT_PROVIDERS",
    "NSAR_EXPERIMENT_EXPONENTS",
    "GROUP_INSTANCE",
    "GROUP_EXACT",
    "GROUP_BEST_ARM",
    "GROUP_EPS",
    "GROUP_ALLOCATION",
    "GROUP_CBMAI",
    "report",
]

#: The exponents p of NSAR's experiments (Shahrampour and Tarokh 2017, Section IV.A, Figure 2).
NSAR_EXPERIMENT_EXPONENTS: tuple[float, ...] = (0.7, 0.85, 1.1, 1.2, 1.3)


@dataclass(frozen=True)
class Measure:
    """One number (or vector) of a report.

    Attributes
    ----------
    key : str
        Unique name in the report, used by ``report[key]`` (for example ``"h1"`` or ``"h_p[p=0.7]"``).
    symbol : str
        The paper's notation, for tables.
    value : float, int or numpy.ndarray
        The value; vectors (gaps, allocations) are read-only arrays.
    group : str
        The provider group the measure belongs to.
    source : str
        Paper and equation the definition comes from, in short form (for example
        ``"Shahrampour & Tarokh 2017, eq. (4)"``; the module docstring lists the papers).
    bounds : str
        What the measure bounds or describes.
    """

    key: str
    symbol: str
    value: Any
    group: str
    source: str
    bounds: str


@dataclass(frozen=True)
class OmittedGroup:
    """A provider group that does not apply to the instance, and why."""

    group: str
    reason: str


@dataclass(frozen=True, eq=False)
class ReportContext:
    """The validated instance and settings every provider receives.

    Attributes
    ----------
    theta : numpy.ndarray
        Means of the ``K`` arms (read-only, in the caller's order).
    k : int
        Size of the top set, in ``1..K-1``.
    family : ExponentialFamily
        Reward family (with its variance for Gaussian arms).
    delta : float
        Target error probability for sample complexities and budgets.
    eps : float
        Tolerance on the aggregate regret for the epsilon-top-k measures.
    p : tuple of float
        Exponents of the nonlinear complexities :math:`H^{(k)}(p)`.
    extra : mapping
        Further inputs for providers that need more than ``theta`` and ``k`` (read-only).
    """

    theta: np.ndarray
    k: int
    family: ExponentialFamily
    delta: float
    eps: float
    p: tuple[float, ...]
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def n_arms(self) -> int:
        """Number of arms ``K``."""
        return int(self.theta.shape[0])


class MeasureNotApplicable(AllocoptError):
    """Raised by a provider whose measures do not apply to the instance; the message says why."""


@dataclass(frozen=True)
class MeasureProvider:
    """A named group of measures: ``compute(context)`` returns the group's :class:`Measure` objects.

    ``compute`` raises :class:`MeasureNotApplicable` (or :class:`~allocopt.exceptions.InvalidInstanceError`) when
    the group does not apply to the instance.
    """

    group: str
    compute: Callable[[ReportContext], Sequence[Measure]]


def _format_value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        with np.printoptions(precision=4, threshold=8, edgeitems=3, suppress=False):
            lines = np.array2string(value, separator=", ").splitlines()
        return " ".join(line.strip() for line in lines)  # a matrix on one line
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return f"{float(value):.6g}"


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value)


@dataclass(frozen=True, eq=False, kw_only=True)
class ComplexityReport(Result):
    """Every complexity measure that applies to one instance (the result of :func:`report`).

    ``report[key]`` gives a value, :meth:`measure` the full :class:`Measure`, :meth:`to_table` a plain-text table
    grouped by provider and :meth:`to_dict` a JSON-ready dictionary.

    The core fields (:class:`~allocopt._result.Result`) come first: ``status`` is ``"complete"`` (providers
    that do not apply are listed in :attr:`omitted`, not failures), ``method`` is ``"report"`` and ``time`` the
    seconds spent computing every measure.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"complete"})

    theta: np.ndarray
    k: int
    family: str
    delta: float
    eps: float
    p: tuple[float, ...]
    measures: tuple[Measure, ...]
    omitted: tuple[OmittedGroup, ...]

    def keys(self) -> tuple[str, ...]:
        """The keys of the measures, in report order."""
        return tuple(item.key for item in self.measures)

    def measure(self, key: str) -> Measure:
        """The :class:`Measure` called ``key``."""
        for item in self.measures:
            if item.key == key:
                return item
        fail("ComplexityReport.measure", "key", "the key of a measure in this report (see .keys())", key,
             error=KeyError)

    def __getitem__(self, key: str) -> Any:
        return self.measure(key).value

    def __contains__(self, key: object) -> bool:
        return any(item.key == key for item in self.measures)

    def groups(self) -> tuple[str, ...]:
        """The groups that produced measures, in report order."""
        return tuple(dict.fromkeys(item.group for item in self.measures))

    def to_dict(self) -> dict[str, Any]:
        """Strict-JSON data (lists, floats, strings) with every field; non-finite numbers (an infinite spread
        constant with ties, for example) are written as ``"Infinity"``, ``"-Infinity"`` and ``"NaN"``."""
        core = {name: getattr(self, name) for name in CORE_FIELDS}
        return jsonable({
            **core,
            "theta": self.theta.tolist(),
            "k": self.k,
            "family": self.family,
            "settings": {"delta": self.delta, "eps": self.eps, "p": list(self.p)},
            "measures": [
                {"key": item.key, "symbol": item.symbol, "value": _plain(item.value), "group": item.group,
                 "source": item.source, "bounds": item.bounds}
                for item in self.measures
            ],
            "omitted": [{"group": item.group, "reason": item.reason} for item in self.omitted],
        })

    def to_table(self) -> str:
        """A plain-text table: one section per group with symbol, value, source and what the measure bounds."""
        header = ("measure", "value", "source", "bounds / meaning")
        rows = [(item.symbol, _format_value(item.value), item.source, item.bounds) for item in self.measures]
        widths = [max(len(row[column]) for row in rows + [header]) for column in range(3)]

        def line(row: tuple[str, ...]) -> str:
            return "  " + "  ".join(text.ljust(width) for text, width in zip(row[:3], widths)) + "  " + row[3]

        lines = [
            f"Complexity of a {self.theta.shape[0]}-arm instance, top {self.k}, family {self.family}",
            f"settings: delta = {self.delta:g}, eps = {self.eps:g}, p = {', '.join(f'{value:g}' for value in self.p)}",
        ]
        for group in self.groups():
            lines += ["", group, line(header).rstrip()]
            lines += [line(row).rstrip() for row, item in zip(rows, self.measures) if item.group == group]
        for item in self.omitted:
            lines += ["", f"{item.group}: not applicable ({' '.join(item.reason.split())})"]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_table()


class _GroupBuilder:
    """Collects the measures of one provider group."""

    def __init__(self, group: str):
        self.group = group
        self.measures: list[Measure] = []

    def add(self, key: str, symbol: str, value: Any, source: str, bounds: str) -> None:
        if isinstance(value, np.ndarray) and value.ndim > 0:
            value = value.copy()
            value.setflags(write=False)
        elif isinstance(value, np.integer):
            value = int(value)
        elif not isinstance(value, int):
            value = float(value)
        self.measures.append(Measure(key, symbol, value, self.group, source, bounds))


GROUP_INSTANCE = "instance"
GROUP_EXACT = "exact top-k identification (Shahrampour & Tarokh 2017; Chen et al. 2017; Jiang et al. 2017)"
GROUP_BEST_ARM = "best arm, fixed budget (Shahrampour & Tarokh 2017, Table I)"
GROUP_EPS = "epsilon-top-k, aggregate regret (Chen et al. 2017)"
GROUP_ALLOCATION = "optimal allocation, top-k layer (Wang et al. 2022)"
GROUP_CBMAI = "CBMAI hardness of extra['cbmai'] (Tang et al. 2024)"


def _instance_measures(context: ReportContext) -> list[Measure]:
    out = _GroupBuilder(GROUP_INSTANCE)
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
    out = _GroupBuilder(GROUP_EXACT)
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
    out = _GroupBuilder(GROUP_BEST_ARM)
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
    out = _GroupBuilder(GROUP_EPS)
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


def _allocation_measures(context: ReportContext) -> list[Measure]:
    r"""The optimal allocations of the top-k layer (Wang, Yang, You 2022, problems (5) and (11)).

    With :math:`I` the top ``k`` arms, :math:`J` the others and :math:`d` the family's divergence,

    .. math::
        \Gamma^* = \max_{\psi \in \Sigma_K} \min_{i \in I, j \in J} \inf_x [\psi_i d(\theta_i, x)
        + \psi_j d(\theta_j, x)], \qquad
        \Gamma_B^* = \max_{\psi \in \Sigma_K} \min_{i \in I, j \in J} \inf_x [\psi_i d(x, \theta_i)
        + \psi_j d(x, \theta_j)],

    both solved by ``solve_topk(method="exact")`` (docs/topk.md). Each :class:`~allocopt.topk.TopKResult` gives
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
    out = _GroupBuilder(GROUP_ALLOCATION)
    out.add("gamma_star", "Gamma*", confidence.value, "Wang et al. 2022, eq. (5)",
            "max_psi min_{i in I, j in J} C_ij(psi): Gamma(psi*) of the exact solver, <= Gamma*")
    out.add("gamma_star.gap", "Gamma* gap", confidence.gap, "Wang et al. 2022, Prop. 3.6",
            f"certified: Gamma(psi*) <= Gamma* <= Gamma(psi*) + gap (status {confidence.status})")
    out.add("psi_star", "psi*", confidence.psi, "Wang et al. 2022, eq. (5)",
            "optimal fixed-confidence allocation, in input order")
    out.add("t_star", "T* = 1/Gamma*", t_upper, "Wang et al. 2022, eq. (5)", "characteristic time 1/Gamma(psi*), >= T*")
    out.add("t_star.lower", "T* lower", t_lower, "Wang et al. 2022, Prop. 3.6",
            "certified: 1/(Gamma(psi*) + gap) <= T* <= 1/Gamma(psi*)")
    out.add("sample_complexity_lower_bound", "T* kl(delta, 1-delta)", t_lower * _kl_confidence(context.delta),
            "Wang et al. 2022, Lemma 2.1", "E[tau_delta] of every delta-correct algorithm (certified T* lower end)")
    out.add("gamma_b_star", "Gamma_B*", budget.value, "Wang et al. 2022, eq. (10)-(11)",
            "fixed-budget exponent max_psi min B_ij(psi): Gamma_B(psi_B*), <= Gamma_B*; = Gamma* for Gaussian")
    out.add("gamma_b_star.gap", "Gamma_B* gap", budget.gap, "Wang et al. 2022, Prop. 3.6",
            f"certified: Gamma_B(psi_B*) <= Gamma_B* <= Gamma_B(psi_B*) + gap (status {budget.status})")
    out.add("psi_b_star", "psi_B*", budget.psi, "Wang et al. 2022, eq. (11)",
            "optimal fixed-budget allocation, in input order")
    return out.measures


def _kl_confidence(delta: float) -> float:
    r""":math:`\mathrm{kl}(\delta, 1-\delta) = (1 - 2\delta)\log((1-\delta)/\delta)`, the Bernoulli divergence of
    Lemma 2.1 (Wang, Yang, You 2022); about :math:`\log(1/\delta)` for small :math:`\delta`."""
    return float(Bernoulli().kl(delta, 1.0 - delta))


#: The report entries of the CBMAI group: (attribute of CBMAIHardness, symbol, source, what it bounds); the key is
#: ``"cbmai." + attribute``.
_CBMAI_MEASURES: tuple[tuple[str, str, str, str], ...] = (
    ("sigma_r", "sigma_r", "Tang et al. 2024, Sec. 4.1",
     "noise level weighting reward moves (extra['sigma_r'], default 1)"),
    ("sigma_c", "sigma_c", "Tang et al. 2024, Sec. 4.1",
     "noise level weighting cost moves (extra['sigma_c'], default 0.5)"),
    ("optimal_support", "I*", "Tang et al. 2024, Assumption 1",
     "optimal basis: true arms and slacks K + l (0-based columns)"),
    ("infeasibility_gap", "Delta_0^2", "Tang et al. 2024, eq. (11)",
     "least cost move making I* singular or infeasible"),
    ("bases", "bases J", "Tang et al. 2024, Sec. 4.1",
     "every basis (L+1 sorted columns), the rows of cbmai.basis_gaps"),
    ("basis_gaps", "Delta_J^2", "Tang et al. 2024, eq. (9)",
     "least move making basis J feasible and at least as good as I* (attained by a witness)"),
    ("arm_gaps", "Delta_a^2", "Tang et al. 2024, eq. (10)", "min over bases J containing column a of Delta_J^2"),
    ("sorted_arms", "columns by Delta_a^2", "Tang et al. 2024, eq. (10)", "columns in increasing order of Delta_a^2"),
    ("sorted_gaps", "Delta_(i)^2", "Tang et al. 2024, eq. (10)",
     "0 = Delta_(1)^2 = ... = Delta_(L+1)^2 < Delta_(L+2)^2 <= ..."),
    ("consistent_exponent", "(1/2) min(Delta_0^2, Delta_(L+2)^2)", "Tang et al. 2024, Thm 2 (13)",
     "limsup -(1/N) log P(error) of every consistent algorithm"),
    ("uslp_exponent", "USLP exponent", "Tang et al. 2024, Thm 2 (14)",
     "(13) / K: USLP's error exponent is at most this"),
    ("sfsr_exponent", "SFSR exponent", "Tang et al. 2024, eq. (15)",
     "SFSR's liminf -(1/N) log P(error) is at least this"),
)


def _cbmai_measures(context: ReportContext) -> list[Measure]:
    r"""The hardness of the CBMAI instance ``context.extra["cbmai"]`` (Tang, Jain, Nayyar, Nuzzo 2024, Section 4.1).

    From :func:`allocopt.cbmai.cbmai_hardness` with ``extra["sigma_r"]`` and ``extra["sigma_c"]`` when given (else
    that function's defaults, the paper's experiments: :math:`\sigma_r = 1`, :math:`\sigma_c = 0.5`)."""
    func = "report"
    if "cbmai" not in context.extra:
        raise MeasureNotApplicable(
            "a CBMAI instance is not described by theta and k; pass one as "
            "report(..., extra={'cbmai': allocopt.CBMAIProblem(rewards, costs, bounds)})"
        )
    from ..cbmai import CBMAIProblem, cbmai_hardness  # here, not at the top: importing allocopt.complexity stays cheap

    problem = context.extra["cbmai"]
    if not isinstance(problem, CBMAIProblem):
        fail(func, "extra['cbmai']", "an allocopt.CBMAIProblem", problem)
    noise = {name: as_positive_float(context.extra[name], func, f"extra[{name!r}]")
             for name in ("sigma_r", "sigma_c") if name in context.extra}
    try:
        hardness = cbmai_hardness(problem, **noise)
    except InvalidInstanceError as error:
        raise MeasureNotApplicable(f"the instance extra['cbmai'] has no hardness gaps: {error}") from error
    out = _GroupBuilder(GROUP_CBMAI)
    for name, symbol, source, bounds in _CBMAI_MEASURES:
        value = getattr(hardness, name)
        out.add(f"cbmai.{name}", symbol, np.array(value) if isinstance(value, tuple) else value, source, bounds)
    return out.measures


#: The providers a report is built from, in report order (see the module docstring for where the top-k and
#: CBMAI layers add theirs).
DEFAULT_PROVIDERS: tuple[MeasureProvider, ...] = (
    MeasureProvider(GROUP_INSTANCE, _instance_measures),
    MeasureProvider(GROUP_EXACT, _exact_measures),
    MeasureProvider(GROUP_BEST_ARM, _best_arm_measures),
    MeasureProvider(GROUP_EPS, _eps_measures),
    MeasureProvider(GROUP_ALLOCATION, _allocation_measures),
    MeasureProvider(GROUP_CBMAI, _cbmai_measures),
)


def _as_exponents(p: Any, func: str) -> tuple[float, ...]:
    requirement = "a number > 0 or a non-empty sequence of numbers > 0"
    values = as_float_vector([p] if isinstance(p, numbers.Real) else p, func, "p")
    if np.any(values <= 0):
        fail(func, "p", requirement, p)
    return tuple(dict.fromkeys(float(value) for value in values))


def report(theta: Any, k: int, family: str | ExponentialFamily = "gaussian", *, variance: Any = None,
           delta: float = 0.01, eps: float = 0.01, p: Any = NSAR_EXPERIMENT_EXPONENTS,
           providers: Sequence[MeasureProvider] | None = None,
           extra: Mapping[str, Any] | None = None) -> ComplexityReport:
    r"""Every complexity measure that applies to the instance ``(theta, k, family)``, as one frozen result.

    The measures come from :data:`DEFAULT_PROVIDERS` (or ``providers``): the gaps, :math:`H_1^{(k)}`,
    :math:`H_2^{(k)}`, :math:`H^{(k)}(p)` and the fixed-budget sample complexities and budgets of Shahrampour and
    Tarokh (2017); their best-arm error bounds of Table I when ``k = 1``; :math:`t(\epsilon,k)`,
    :math:`\Psi_t^\epsilon`, :math:`H(t,\epsilon)`, :math:`H(0,\epsilon)` and the sample complexities of Chen,
    Chen, Zhang, Zhou (2017); the optimal
    allocations of the top-k layer, :math:`\Gamma^*`, :math:`T^* = 1/\Gamma^*`, the lower bound
    :math:`T^* \mathrm{kl}(\delta, 1-\delta)` on :math:`\mathbb E[\tau_\delta]` and the fixed-budget exponent
    :math:`\Gamma_B^*`, with certified gaps (Wang, Yang, You 2022); and the CBMAI gaps and exponents
    of ``extra["cbmai"]`` (Tang, Jain, Nayyar, Nuzzo 2024). A group that does not apply (a tie at the top-``k``
    boundary for exact identification and the allocations, ``k != 1`` for Table I, no ``extra["cbmai"]``) is listed in
    ``omitted`` with the reason. See ``docs/complexity.md`` for the formulas and the module docstring for the providers
    and the papers the ``source`` column cites.

    Parameters
    ----------
    theta : array_like, shape (K,)
        Means of the arms, in any order, inside the family's domain.
    k : int
        Size of the top set, in ``1..K-1``.
    family : str or ExponentialFamily
        ``"gaussian"`` (default), ``"bernoulli"``, ``"poisson"``, ``"exponential"`` or a family object.
    variance : float or array_like, optional
        Gaussian variance (scalar or one per arm).
    delta : float
        Target error probability in (0, 1) for sample complexities and budgets (default 0.01, the confidence of
        the experiments of Chen, Chen, Zhang, Zhou (2017) and Jiang, Li, Qiao (2017)).
    eps : float
        Tolerance on the aggregate regret in (0, 1) (default 0.01, as in the experiments of
        Chen, Chen, Zhang, Zhou 2017).
    p : float or sequence of float
        Exponents of :math:`H^{(k)}(p)` and NSAR (default: the five of the experiments
        of Shahrampour and Tarokh 2017).
    providers : sequence of MeasureProvider, optional
        Replaces :data:`DEFAULT_PROVIDERS`.
    extra : mapping, optional
        Further inputs passed to providers as ``context.extra``. The default providers read ``"cbmai"`` (an
        :class:`~allocopt.cbmai.CBMAIProblem` whose hardness gaps to report), ``"sigma_r"`` and ``"sigma_c"``
        (its noise levels, default 1 and 0.5 as in the paper's experiments).

    Returns
    -------
    ComplexityReport

    Examples
    --------
    >>> result = report([0.7, 0.7, 0.5, 0.5], 2, "bernoulli")
    >>> round(result["h1"], 6), round(result["h2"], 6), int(result["t_eps"])
    (100.0, 100.0, 0)
    >>> "best arm, fixed budget (Shahrampour & Tarokh 2017, Table I)" in {item.group for item in result.omitted}
    True
    """
    func = "report"
    start = time.perf_counter()
    family_object = get_family(family, variance, func=func)
    means = as_float_vector(theta, func, "theta", min_length=2)
    means = family_object.validate_means(means, func, "theta")
    family_object.arm_dispersion(means.shape[0], func)
    means.setflags(write=False)
    k = as_subset_size(k, means.shape[0], func, "k")
    delta = as_confidence(delta, func)
    eps = as_float(eps, func, "eps", low=0.0, high=1.0, low_open=True, high_open=True,
                   requirement="a tolerance in the open interval (0, 1)")
    exponents = _as_exponents(p, func)
    if extra is not None and not isinstance(extra, Mapping):
        fail(func, "extra", "a mapping or None", extra)
    context = ReportContext(means, k, family_object, delta, eps, exponents, MappingProxyType(dict(extra or {})))
    chosen = DEFAULT_PROVIDERS if providers is None else tuple(providers)
    if not all(isinstance(provider, MeasureProvider) for provider in chosen):
        fail(func, "providers", "a sequence of MeasureProvider objects", providers)

    measures: list[Measure] = []
    omitted: list[OmittedGroup] = []
    for provider in chosen:
        try:
            produced = tuple(provider.compute(context))
        except (MeasureNotApplicable, InvalidInstanceError) as reason:
            omitted.append(OmittedGroup(provider.group, str(reason)))
            continue
        measures.extend(produced)
    keys = [item.key for item in measures]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise InvalidArgumentError(
            f"The 'providers' parameter of {func} must give every measure a unique key. Got the keys "
            f"{describe(repeated)} more than once instead."
        )
    message = (f"{len(measures)} measures from {len(chosen) - len(omitted)} providers; "
               f"{len(omitted)} providers not applicable")
    return ComplexityReport(status="complete", message=message, method="report", time=time.perf_counter() - start,
                            theta=means, k=k, family=repr(family_object), delta=delta, eps=eps, p=exponents,
                            measures=tuple(measures), omitted=tuple(omitted))
