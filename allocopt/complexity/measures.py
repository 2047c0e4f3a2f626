"""The building blocks of complexity reports: measures, provider groups and the context every provider reads.

A :class:`MeasureProvider` turns a :class:`ReportContext` (the validated instance and settings) into
:class:`Measure` values, or raises :class:`MeasureNotApplicable` with the reason. :func:`allocopt.complexity.report`
composes the providers; the layers' own providers live in :mod:`.formula_measures` (closed-form measures of the
papers), :mod:`.allocation_measures` (the top-k layer) and :mod:`.cbmai_measures` (the CBMAI layer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..exceptions import AllocoptError
from ..families import ExponentialFamily

if TYPE_CHECKING:
    from ..cbmai import CBMAIProblem

__all__ = ["Measure", "OmittedGroup", "ReportContext", "MeasureNotApplicable", "MeasureProvider", "GroupBuilder"]


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
    cbmai : CBMAIProblem or None
        A CBMAI instance whose hardness the CBMAI provider reports (a CBMAI instance is not described by
        ``theta`` and ``k``).
    sigma_r, sigma_c : float or None
        Noise levels of the CBMAI hardness (None: the defaults of :func:`allocopt.cbmai.cbmai_hardness`).
    extra : mapping
        Further inputs for a caller's own providers (read-only).
    """

    theta: np.ndarray
    k: int
    family: ExponentialFamily
    delta: float
    eps: float
    p: tuple[float, ...]
    cbmai: CBMAIProblem | None = None
    sigma_r: float | None = None
    sigma_c: float | None = None
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


class GroupBuilder:
    """Collects the measures of one group, storing vectors as read-only copies and numbers as int or float."""

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
