"""The shared result core and the strict-JSON convention (allocopt._result, allocopt._json)."""

import dataclasses
import json
import math

import numpy as np
import pytest

from allocopt._json import NON_FINITE, dumps, jsonable
from allocopt._result import Result, omit_from_dict
from allocopt.exceptions import InvalidArgumentError


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Example(Result):
    SUCCESS_STATUSES = frozenset({"optimal", "feasible"})
    values: np.ndarray
    bound: float
    problem: object = omit_from_dict(default=None)


def test_non_finite_numbers_round_trip_through_float():
    converted = jsonable([np.inf, -np.inf, np.nan, 1.5])
    assert converted[:3] == [NON_FINITE["inf"], NON_FINITE["-inf"], NON_FINITE["nan"]]
    assert float(converted[0]) == math.inf and float(converted[1]) == -math.inf and math.isnan(float(converted[2]))
    assert converted[3] == 1.5


def test_numpy_values_become_python_values():
    payload = jsonable({1: np.int64(3), "flag": np.bool_(True), "grid": np.array([[1.0, np.inf]]), "t": (1, 2)})
    assert payload == {"1": 3, "flag": True, "grid": [[1.0, "Infinity"]], "t": [1, 2]}
    assert type(payload["1"]) is int and type(payload["flag"]) is bool


def test_unconvertible_values_are_refused():
    # a library error in the house format (an AllocoptError), naming the value's type
    with pytest.raises(InvalidArgumentError, match="a object cannot be written as JSON"):
        jsonable(object())


def test_result_core_fields_success_and_strict_json():
    result = _Example(status="feasible", method="m", time=0.5, values=np.array([1.0, np.nan]), bound=np.inf,
                      problem=object())
    assert result.success and result.message == ""
    payload = result.to_dict()
    assert list(payload)[:5] == ["status", "success", "message", "method", "time"]
    assert "problem" not in payload and payload["values"] == [1.0, "NaN"] and payload["bound"] == "Infinity"
    json.dumps(payload, allow_nan=False)
    assert json.loads(dumps(result)) == payload
    assert not _Example(status="infeasible", method="m", time=0.0, values=np.zeros(1), bound=0.0).success


def test_core_fields_are_keyword_only():
    with pytest.raises(TypeError):
        _Example("optimal", "", "m", 0.0, np.zeros(1), 0.0)  # type: ignore[misc]
