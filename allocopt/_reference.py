"""A published instance with the values its source states: the record shared by the reference data of every
layer (the CBMAI instances of :mod:`allocopt.cbmai.instances`, the catalogue of :mod:`allocopt.testing`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["ReferenceInstance"]


@dataclass(frozen=True)
class ReferenceInstance:
    """A published instance.

    Attributes
    ----------
    name : str
        Identifier used by :func:`get_instance`.
    source : str
        Paper, section, equation or table the instance and its reference values come from.
    parameters : mapping
        Inputs (for example ``theta``, ``k``, ``family``, ``variance``).
    expected : mapping
        Published values, with ``tolerance`` entries giving the precision at which they are stated.
    """

    name: str
    source: str
    parameters: Mapping[str, Any]
    expected: Mapping[str, Any] = field(default_factory=dict)
