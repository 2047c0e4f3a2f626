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

Providers
---------
:data:`DEFAULT_PROVIDERS` composes the providers of the report, in order:

* :mod:`.formula_measures` - the closed-form measures of the papers (gaps, :math:`H_1`, :math:`H_2`,
  :math:`H(p)`, budgets and sample complexities, Table I for ``k = 1``, the epsilon-top-k measures);
* :mod:`.allocation_measures` - the top-k layer's optimal allocations, :math:`\Gamma^*`, :math:`T^*` and
  :math:`\Gamma_B^*` with certified gaps (two exact solves);
* :mod:`.cbmai_measures` - the CBMAI layer's hardness gaps and exponents of the instance passed as
  ``report(..., cbmai=...)`` (omitted without one).

Each provider module owns its group; :func:`report` knows none of them.
Callers can also pass their own ``providers=`` (for example ``DEFAULT_PROVIDERS + (my_provider,)``).
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._json import jsonable
from .._result import CORE_FIELDS, Result
from .._validation import as_float, as_float_vector, as_positive_float, describe, fail
from ..exceptions import InvalidArgumentError, InvalidInstanceError
from ..families import ExponentialFamily, get_family
from ._inputs import as_confidence, as_subset_size
from .allocation_measures import ALLOCATION_PROVIDER, GROUP_ALLOCATION
from .cbmai_measures import CBMAI_PROVIDER, GROUP_CBMAI
from .formula_measures import (BEST_ARM_PROVIDER, EPS_PROVIDER, EXACT_PROVIDER, GROUP_BEST_ARM, GROUP_EPS,
                               GROUP_EXACT, GROUP_INSTANCE, INSTANCE_PROVIDER)
from .measures import Measure, MeasureNotApplicable, MeasureProvider, OmittedGroup, ReportContext

if TYPE_CHECKING:
    from ..cbmai import CBMAIProblem

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


#: The providers a report is built from, in report order (see the module docstring).
DEFAULT_PROVIDERS: tuple[MeasureProvider, ...] = (INSTANCE_PROVIDER, EXACT_PROVIDER, BEST_ARM_PROVIDER, EPS_PROVIDER,
                                                  ALLOCATION_PROVIDER, CBMAI_PROVIDER)


def _as_exponents(p: Any, func: str) -> tuple[float, ...]:
    requirement = "a number > 0 or a non-empty sequence of numbers > 0"
    values = as_float_vector([p] if isinstance(p, numbers.Real) else p, func, "p")
    if np.any(values <= 0):
        fail(func, "p", requirement, p)
    return tuple(dict.fromkeys(float(value) for value in values))


def _run_providers(chosen: Sequence[MeasureProvider], context: ReportContext,
                   func: str) -> tuple[list[Measure], list[OmittedGroup]]:
    """The measures of every provider that applies, and the groups of those that do not, with the reason; every
    measure's key must be unique."""
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
    return measures, omitted


def report(theta: Any, k: int, family: str | ExponentialFamily = "gaussian", *, variance: Any = None,
           delta: float = 0.01, eps: float = 0.01, p: Any = NSAR_EXPERIMENT_EXPONENTS,
           cbmai: CBMAIProblem | None = None, sigma_r: float | None = None, sigma_c: float | None = None,
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
    of ``cbmai`` (Tang, Jain, Nayyar, Nuzzo 2024). A group that does not apply (a tie at the top-``k``
    boundary for exact identification and the allocations, ``k != 1`` for Table I, no ``cbmai`` instance) is listed
    in ``omitted`` with the reason. The module docstring lists the providers and the papers the ``source`` column
    cites.

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
    cbmai : CBMAIProblem, optional
        A CBMAI instance whose hardness gaps and exponents to report (a CBMAI instance is not described by
        ``theta`` and ``k``).
    sigma_r, sigma_c : float, optional
        Noise levels of the CBMAI hardness (default 1 and 0.5, as in the paper's experiments).
    providers : sequence of MeasureProvider, optional
        Replaces :data:`DEFAULT_PROVIDERS` (for example ``DEFAULT_PROVIDERS + (my_provider,)``).
    extra : mapping, optional
        Further inputs for a caller's own providers, passed as ``context.extra``.

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
    if extra is not None and any(key in extra for key in ("cbmai", "sigma_r", "sigma_c")):
        fail(func, "extra", "inputs of the caller's own providers (pass a CBMAI instance and its noise levels as "
             "report(..., cbmai=..., sigma_r=..., sigma_c=...))", dict(extra))
    if cbmai is not None:
        from ..cbmai import CBMAIProblem  # here, not at the top: importing allocopt.complexity stays cheap

        if not isinstance(cbmai, CBMAIProblem):
            fail(func, "cbmai", "an allocopt.CBMAIProblem or None", cbmai)
    noise = {name: None if value is None else as_positive_float(value, func, name)
             for name, value in (("sigma_r", sigma_r), ("sigma_c", sigma_c))}
    context = ReportContext(means, k, family_object, delta, eps, exponents, cbmai=cbmai, **noise,
                            extra=MappingProxyType(dict(extra or {})))
    chosen = DEFAULT_PROVIDERS if providers is None else tuple(providers)
    if not all(isinstance(provider, MeasureProvider) for provider in chosen):
        fail(func, "providers", "a sequence of MeasureProvider objects", providers)

    measures, omitted = _run_providers(chosen, context, func)
    message = (f"{len(measures)} measures from {len(chosen) - len(omitted)} providers; "
               f"{len(omitted)} providers not applicable")
    return ComplexityReport(status="complete", message=message, method="report", time=time.perf_counter() - start,
                            theta=means, k=k, family=repr(family_object), delta=delta, eps=eps, p=exponents,
                            measures=tuple(measures), omitted=tuple(omitted))
