"""The core shared by every result of every layer.

Every result type of allocopt (solvers, certificates, hardness, simulations, identification runs) is a frozen
dataclass deriving from :class:`Result`, in the manner of scipy's ``OptimizeResult``: the core fields

* ``status`` - a short machine-readable word (``"optimal"``, ``"infeasible"``, ``"not_certified"``, ...),
* ``success`` - whether the status is one the result type counts as success (a property of ``status``),
* ``message`` - a human-readable sentence,
* ``method`` - the method or algorithm that produced it,
* ``time`` - wall-clock seconds,

and ``to_dict()``, a strict-JSON dictionary (see :mod:`allocopt._json`). Layer-specific fields come on top.
Core fields are keyword-only, so results are always built by keyword.

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True, kw_only=True)
... class RootResult(Result):
...     root: float
>>> result = RootResult(status="optimal", method="bisection", time=0.001, root=2 ** 0.5)
>>> result.success, sorted(result.to_dict())
(True, ['message', 'method', 'root', 'status', 'success', 'time'])
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ._json import jsonable

__all__ = ["Result", "CORE_FIELDS", "omit_from_dict"]

CORE_FIELDS = ("status", "success", "message", "method", "time")


def omit_from_dict(**options: Any) -> Any:
    """A dataclass field that :meth:`Result.to_dict` leaves out (for example the problem instance)."""
    metadata = dict(options.pop("metadata", {}) or {})
    metadata["to_dict"] = False
    return dataclasses.field(metadata=metadata, **options)


@dataclass(frozen=True, kw_only=True)
class Result:
    """Core of every allocopt result: status, success, message, method, time and ``to_dict()``.

    Attributes
    ----------
    status : str
        Machine-readable outcome; the statuses of each result type are listed in its docstring.
    message : str
        Human-readable details.
    method : str
        The method or algorithm that produced the result.
    time : float
        Wall-clock seconds.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"optimal"})

    status: str
    message: str = ""
    method: str
    time: float

    @property
    def success(self) -> bool:
        """Whether :attr:`status` is one of the type's success statuses."""
        return self.status in self.SUCCESS_STATUSES

    def _dict_extras(self) -> dict[str, Any]:
        """Derived quantities added to :meth:`to_dict` (override in subclasses)."""
        return {}

    def core_dict(self) -> dict[str, Any]:
        """The core fields, in the order of ``CORE_FIELDS`` (not yet converted to JSON): the start of every
        ``to_dict()``, also of the results that choose their other keys themselves."""
        return {name: getattr(self, name) for name in CORE_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        """Strict-JSON dictionary: the core fields first, then every other field and derived quantity.

        Non-finite numbers are written as ``"Infinity"``, ``"-Infinity"`` and ``"NaN"``; fields declared
        with :func:`omit_from_dict` are left out.
        """
        payload = self.core_dict()
        for field in dataclasses.fields(self):
            if field.name not in payload and field.metadata.get("to_dict", True):
                payload[field.name] = getattr(self, field.name)
        payload.update(self._dict_extras())
        return jsonable(payload)
