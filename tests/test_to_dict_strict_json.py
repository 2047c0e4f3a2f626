"""Every public ``to_dict()`` of allocopt is strict JSON, with infinities and NaN in its input.

The classes are discovered by importing every module of the package: a class that defines its own
``to_dict`` must have a builder in ``BUILDERS`` below (the test fails otherwise), which makes an instance whose
fields include non-finite numbers. Classes that inherit ``Result.to_dict`` are covered through ``Result``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pkgutil

import numpy as np
import pytest

import allocopt
from allocopt import TopKProblem, check_topk, complexity, solve_topk
from allocopt._json import NON_FINITE
from allocopt._result import Result


def _classes_defining_to_dict() -> set[type]:
    found = set()
    for module_info in pkgutil.walk_packages(allocopt.__path__, "allocopt."):
        if module_info.name.endswith("__main__"):
            continue  # running it is the command line
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and value.__module__ == module.__name__ and not name.startswith("_")
                    and "to_dict" in vars(value)):
                found.add(value)
    return found


def _example_1() -> TopKProblem:
    return TopKProblem([0.51, 0.5, 0, -0.01, -0.092], 2, variance=0.25)


def _topk_result():
    # a result whose value is 0 has relative gap, characteristic time and gap all infinite
    result = solve_topk(_example_1())
    return dataclasses.replace(result, value=0.0, gap=np.inf, upper_bound=np.inf, stationarity=np.nan)


def _topk_certificate():
    problem = _example_1()
    report = check_topk(problem, solve_topk(problem).psi)
    return dataclasses.replace(report, gap=np.inf, upper_bound=np.inf, kkt_residual=np.nan)


def _complexity_report():
    # ties inside the top set make the 1-spread constant infinite
    report = complexity.report([0.7, 0.7, 0.5, 0.5], 2, "bernoulli")
    assert report["spread_constant"] == np.inf
    return report


def _result():
    return Result(status="not_certified", method="test", time=np.inf)


BUILDERS = {
    "TopKResult": _topk_result,
    "TopKCertificate": _topk_certificate,
    "ComplexityReport": _complexity_report,
    "Result": _result,
}


def _non_finite_strings(value) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(_non_finite_strings(item) for item in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_non_finite_strings(item) for item in value)) if value else set()
    return {value} if value in NON_FINITE.values() else set()


def test_every_class_defining_to_dict_has_a_builder():
    names = {cls.__name__ for cls in _classes_defining_to_dict()}
    assert {"TopKResult", "TopKCertificate", "ComplexityReport", "Result"} <= names
    assert names <= set(BUILDERS), f"add a builder for {sorted(names - set(BUILDERS))}"


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_to_dict_is_strict_json_with_non_finite_numbers(name):
    payload = BUILDERS[name]().to_dict()
    text = json.dumps(payload, allow_nan=False)
    assert json.loads(text) == payload
    assert "Infinity" in _non_finite_strings(payload), "the builder must put an infinity in the output"
    assert '"inf"' not in text and '"-inf"' not in text
