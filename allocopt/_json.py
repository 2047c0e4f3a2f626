"""Strict JSON for every result: one convention for numpy values and non-finite numbers.

Every ``to_dict()`` of allocopt and every ``--json`` output of the command line passes
``json.dumps(..., allow_nan=False)``. Values are converted recursively:

* numpy arrays become (nested) lists, numpy scalars the matching Python numbers and booleans;
* tuples become lists, mapping keys become strings, dataclasses become dictionaries of their fields;
* non-finite floats become the strings ``"Infinity"``, ``"-Infinity"`` and ``"NaN"``, as in the proto3 JSON
  mapping (and the spelling of JavaScript and Python's ``float()``), so that no information is lost and
  ``float(text)`` reads them back.

Examples
--------
>>> import numpy as np
>>> jsonable({"gap": np.float64(0.5), "bounds": (np.inf, -np.inf), "rate": float("nan")})
{'gap': 0.5, 'bounds': ['Infinity', '-Infinity'], 'rate': 'NaN'}
>>> dumps({"psi": np.array([0.25, 0.75])})
'{"psi": [0.25, 0.75]}'
>>> float(jsonable(np.inf))
inf
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._validation import fail

__all__ = ["jsonable", "dumps", "NON_FINITE"]

NON_FINITE = {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}
"""The strings that stand for non-finite floats in strict JSON output."""


def _number(value: float) -> float | str:
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return NON_FINITE["nan"]
    return NON_FINITE["inf"] if value > 0 else NON_FINITE["-inf"]


def jsonable(value: Any) -> Any:
    """A copy of ``value`` made only of dict, list, str, int, float (finite), bool and None."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _number(float(value))
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return [jsonable(item) for item in items]
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return jsonable(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: jsonable(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, np.generic):
        return jsonable(value.item())
    fail("to_dict", "value", "made of numbers, strings, arrays, mappings, sequences and dataclasses of those "
         f"(a {type(value).__name__} cannot be written as JSON)", value)


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps(jsonable(value), allow_nan=False, **options)``."""
    return json.dumps(jsonable(value), allow_nan=False, **options)
