"""The result type returned by every top-k solver."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .._json import jsonable
from .._result import Result
from .certificate import Certificate, certify
from .multipliers import PairMultipliers
from .problem import TopKProblem

if TYPE_CHECKING:
    from ._exact.forest import ForestLayout
    from ._exact.groups import Reduced

__all__ = ["TopKResult", "IterationHistory", "STATUSES", "build_result"]

STATUSES = ("optimal", "iteration_limit", "inaccurate", "not_certified")


@dataclass(frozen=True)
class BindingForest:
    """The exact solver's final binding forest, kept on its result so that the next solve of a nearby
    instance can start from it (``solve_topk(..., warm_start=result)``).

    Attributes
    ----------
    kind : str
        The cost type it was solved for.
    double_star : bool
        Whether it is Theorem 3.4's double star (then only that fact is needed: the next instance's double
        star is built directly).
    arm_group, top_groups : ndarray of int or None
        The tie groups of the instance (group of each arm; top groups in order): the forest and its layout
        carry over only to an instance with the same groups.
    layout : ForestLayout or None
        The forest's breadth-first layout over the groups.
    psi : ndarray or None
        The group allocation on the homogeneous scale (every forest cost equal to one).
    """

    kind: str
    double_star: bool
    arm_group: np.ndarray | None = None
    top_groups: np.ndarray | None = None
    layout: "ForestLayout | None" = None
    psi: np.ndarray | None = None

    def carries_over(self, reduced: "Reduced") -> bool:
        """Whether the forest and its layout apply as they are to ``reduced`` (same kind and tie groups)."""
        return (self.layout is not None and self.psi is not None and self.kind == reduced.kind
                and self.arm_group is not None and np.array_equal(self.arm_group, reduced.arm_group)
                and self.top_groups is not None and np.array_equal(self.top_groups, reduced.top_groups))

    def rescaled(self, exponent: int) -> BindingForest:
        """The forest of the same instance with its costs scaled by :math:`2^{exponent}`: the homogeneous
        allocation (forest costs equal to one) scales by :math:`2^{-exponent}`."""
        if self.psi is None:
            return self
        return dataclasses.replace(self, psi=np.ldexp(self.psi, -exponent))


def _frozen(array: Any) -> np.ndarray:
    array = np.array(array, dtype=float, copy=True)
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class IterationHistory:
    r"""Per-iteration record of an iterative solver.

    Attributes
    ----------
    iteration : ndarray of int
        Iteration numbers :math:`t` (1-based).
    value : ndarray
        :math:`\Gamma(\psi_t)`.
    upper_bound : ndarray
        :math:`U(\mu_t, \psi_t) \ge \Gamma^*` (see :mod:`allocopt.topk.certificate`).
    gap : ndarray
        Certified optimality gap ``upper_bound - value`` of iterate :math:`t`.
    """

    iteration: np.ndarray
    value: np.ndarray
    upper_bound: np.ndarray
    gap: np.ndarray

    def __post_init__(self):
        for name in ("iteration", "value", "upper_bound", "gap"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @property
    def relative_gap(self) -> np.ndarray:
        """``gap / value`` per iteration."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.value > 0, self.gap / self.value, np.inf)

    def __len__(self) -> int:
        return int(self.iteration.shape[0])


@dataclass(frozen=True, kw_only=True)
class TopKResult(Result):
    r"""Solution of a top-k allocation problem with its optimality certificate.

    It carries the core of every allocopt result (``status``, ``success``, ``message``, ``method``, ``time``,
    ``to_dict()``; :mod:`allocopt._result`) and is built by keyword.

    Attributes
    ----------
    psi : ndarray, shape (K,)
        The allocation, in the caller's arm order.
    value : float
        :math:`\Gamma(\psi)` (or the minimum of :math:`B_{ij}` for ``kind="budget"``), evaluated over all
        pairs; a lower bound on :math:`\Gamma^*`.
    mu : ndarray, shape (k, K-k)
        Multipliers on the pairs (rows in ``problem.top`` order, columns in ``problem.bottom`` order),
        nonnegative and summing to one. Built on first access from ``multipliers``.
    multipliers : PairMultipliers
        The same multipliers as sparse triplets (an optimal one lives on at most K - 1 pairs).
    upper_bound : float
        :math:`U(\mu, \psi) \ge \Gamma^*` (weak duality).
    gap : float
        Certified optimality gap :math:`\ge \Gamma^* - \Gamma(\psi)`: ``upper_bound - value`` plus a rounding
        allowance. Never an estimate.
    stationarity, complementarity : float
        Relative residuals of the KKT system (65) (see :class:`~allocopt.topk.certificate.Certificate`).
    status : str
        ``"optimal"`` (certified relative gap at most the requested ``tol``), ``"iteration_limit"`` (an
        iterative method stopped before reaching ``tol``), ``"inaccurate"`` (the underlying solver reported
        reduced accuracy) or ``"not_certified"`` (the method could not certify ``tol``; the gap says how far
        it got).
    method, kind : str
        Solver and cost type (``"confidence"`` or ``"budget"``).
    iterations : int
        Iterations of the method (solver iterations for ``"cvxpy"``).
    time : float
        Wall-clock seconds spent in the solver.
    history : IterationHistory or None
        Per-iteration values and certified gaps, for iterative methods.
    forest : BindingForest or None
        The exact solver's final binding forest, for ``warm_start=`` (None for the other methods).
    extras : dict
        Method-specific diagnostics (numbers and strings: pivots, components, solver names).
    problem : TopKProblem
        The instance.
    message : str
        Human-readable details from the method.
    """

    psi: np.ndarray
    value: float
    multipliers: PairMultipliers = field(repr=False)
    upper_bound: float
    gap: float
    stationarity: float
    complementarity: float
    kind: str
    iterations: int
    problem: TopKProblem = field(repr=False)
    history: IterationHistory | None = field(default=None, repr=False)
    forest: BindingForest | None = field(default=None, repr=False)
    extras: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "psi", _frozen(self.psi))

    @classmethod
    def _assemble(cls, psi: np.ndarray, **fields: Any) -> "TopKResult":
        """The result ``TopKResult(psi=psi, **fields)``, built without the frozen dataclass's ``__init__``
        (one ``object.__setattr__`` per field, about 7 µs of a 30 µs solve on the exact solver's per-call fast
        paths, which Track-and-Stop runs at every step). ``psi`` must be a fresh float array that no one else
        holds: it is made read-only rather than copied. Every field without a default must be given, and no
        other. :class:`_ResultTemplate` does the same with the fields that many results share given once."""
        return _ResultTemplate().build(psi, **fields)

    @cached_property
    def mu(self) -> np.ndarray:
        """Dense k x (K-k) multipliers (read-only)."""
        return _frozen(self.multipliers.dense())

    @property
    def relative_gap(self) -> float:
        """``gap / value``."""
        return self.gap / self.value if self.value > 0 else np.inf

    @property
    def characteristic_time(self) -> float:
        r""":math:`1/\Gamma(\psi)`, an upper bound on :math:`T^* = 1/\Gamma^*`."""
        return float(1.0 / self.value) if self.value > 0 else np.inf

    @property
    def characteristic_time_bounds(self) -> tuple[float, float]:
        r"""Certified interval :math:`[1/U(\mu, \psi), 1/\Gamma(\psi)] \ni T^*`."""
        lower = 1.0 / (self.value + self.gap) if self.value + self.gap > 0 else np.inf
        return float(lower), float(self.characteristic_time)

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON summary (arrays as lists, arm indices in the caller's order, non-finite numbers as
        ``"Infinity"``, ``"-Infinity"``, ``"NaN"``). The multipliers are given sparse, as the pairs that carry
        one (``"multipliers": {"top": [...], "bottom": [...], "values": [...]}``, arm indices): an optimal one
        lives on at most K - 1 pairs, where the dense k x (K - k) matrix would hold 2.5 * 10^9 numbers at
        K = 10^5."""
        return jsonable({
            **self.core_dict(),
            "psi": self.psi.tolist(),
            "value": self.value,
            "characteristic_time": self.characteristic_time,
            "upper_bound": self.upper_bound,
            "gap": self.gap,
            "relative_gap": self.relative_gap,
            "multipliers": {"top": self.problem.top[self.multipliers.rows].tolist(),
                            "bottom": self.problem.bottom[self.multipliers.cols].tolist(),
                            "values": self.multipliers.values.tolist()},
            "top": self.problem.top.tolist(),
            "bottom": self.problem.bottom.tolist(),
            "kind": self.kind,
            "iterations": self.iterations,
        })


_DEFAULTS = {field.name: field.default for field in dataclasses.fields(TopKResult)
             if field.default is not dataclasses.MISSING}
_ALL_FIELDS = frozenset(field.name for field in dataclasses.fields(TopKResult)) - {"psi"}
_REQUIRED_FIELDS = _ALL_FIELDS - _DEFAULTS.keys() - {"extras"}


class _ResultTemplate:
    """The fields that many results share (a fast path's status, method, kind, message, forest record, ...),
    checked once, and :meth:`build`, which makes a :class:`TopKResult` from them and the fields of one answer
    as :meth:`TopKResult._assemble` does (one dictionary update for the shared fields instead of one per
    field).

    Examples
    --------
    >>> from allocopt import TopKProblem, solve_topk
    >>> result = solve_topk(TopKProblem([1.0, 0.5, 0.0], 1, variance=0.25))
    >>> template = _ResultTemplate(method=result.method, kind=result.kind, status=result.status)
    >>> shared = ("psi", "method", "kind", "status")
    >>> rebuilt = template.build(np.array(result.psi), **{name: getattr(result, name) for name in _ALL_FIELDS
    ...                                                    if name not in shared})
    >>> bool(np.array_equal(rebuilt.psi, result.psi)) and rebuilt.value == result.value
    True
    """

    __slots__ = ("_fields", "_required")

    def __init__(self, **fields: Any) -> None:
        unknown = fields.keys() - _ALL_FIELDS
        if unknown or "extras" in fields:  # a shared extras dictionary would be one mutable object in many results
            refused = sorted(unknown | (fields.keys() & {"extras"}))
            raise TypeError(f"_ResultTemplate: unknown or unshareable fields {refused}")
        self._fields = {**_DEFAULTS, **fields}
        self._required = _REQUIRED_FIELDS - fields.keys()

    def build(self, psi: np.ndarray, **fields: Any) -> TopKResult:
        """The result with the shared fields, ``psi`` (a fresh float array that no one else holds: made read-only
        rather than copied) and ``fields``, which must hold every field without a default that the template
        does not, and no other field."""
        keys = fields.keys()
        if not (keys <= _ALL_FIELDS and self._required <= keys):  # subset tests: no set is built on success
            raise TypeError(f"TopKResult: missing fields {sorted(self._required - keys)}, unknown fields "
                            f"{sorted(keys - _ALL_FIELDS)}")
        psi.setflags(write=False)
        result = object.__new__(TopKResult)
        attributes = result.__dict__
        attributes.update(self._fields)
        attributes.update(fields)
        attributes["psi"] = psi
        if "extras" not in fields:
            attributes["extras"] = {}
        return result


def build_result(problem: TopKProblem, kind: str, method: str, psi: np.ndarray, mu: Any, *,
                 iterations: int, started: float, tol: float, history: IterationHistory | None = None,
                 status: str | None = None, message: str = "", certificate: Certificate | None = None,
                 forest: BindingForest | None = None, extras: dict[str, Any] | None = None) -> TopKResult:
    """Assemble a :class:`TopKResult`, certifying ``psi`` with ``mu`` (dense, scipy sparse or
    :class:`~allocopt.topk.multipliers.PairMultipliers`) through the shared certifier.

    The status is ``"optimal"`` exactly when the certified relative gap is at most ``tol``, whatever the
    method reports; otherwise it is the method's reason (``"iteration_limit"``, ``"inaccurate"``) or
    ``"not_certified"``.
    """
    psi = np.asarray(psi, dtype=float)
    if certificate is None:
        certificate = certify(problem, psi, PairMultipliers.from_any(mu), kind)
    certified = certificate.value > 0 and certificate.gap <= tol * certificate.value
    if certified:
        status = "optimal"
    elif status is None or status == "optimal":
        status = "not_certified"
    elapsed = time.perf_counter() - started
    multipliers = PairMultipliers.from_any(mu, (problem.k, problem.n_arms - problem.k))
    return TopKResult(psi=psi, value=certificate.value, multipliers=multipliers, upper_bound=certificate.upper_bound,
                      gap=certificate.gap, stationarity=certificate.stationarity,
                      complementarity=certificate.complementarity, status=status, method=method, kind=kind,
                      iterations=int(iterations), time=elapsed, problem=problem, history=history,
                      message=message, forest=forest, extras=dict(extras or {}))
