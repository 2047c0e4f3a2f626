"""One parametrised suite run by every method registered for solve_cbmai, and the registry's contract."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from cbmai_testlib import brute_force_optimum, random_problem, table_1_problem

import allocopt
from allocopt.cbmai import solve as cbmai_solve
from allocopt.testing import get_instance

# method -> options used by the suite (every registered method must be listed: see the guard test)
SUITE_OPTIONS: dict[str, dict] = {
    "enumerate": {},
    "highs": {},
    "pulp": {"solver": "highs"},
}


def test_every_registered_method_is_in_the_suite():
    assert set(SUITE_OPTIONS) == set(allocopt.CBMAI_METHODS) == set(cbmai_solve.METHODS.names)


@pytest.mark.parametrize("method", sorted(SUITE_OPTIONS))
def test_method_options_lists_what_the_suite_passes(method):
    assert set(SUITE_OPTIONS[method]) <= set(allocopt.cbmai.method_options(method))


@pytest.mark.parametrize("method", sorted(SUITE_OPTIONS))
@pytest.mark.parametrize("name", ["cbmai-d1p", "cbmai-d2p", "cbmai-d3p"])
def test_table_1_result_core(method, name):
    # Tang, Jain, Nayyar, Nuzzo (2024), Table 1: the optimal supports and values of D1P-D3P.
    reference = get_instance(name)
    result = allocopt.solve_cbmai(table_1_problem(name), method, **SUITE_OPTIONS[method])
    assert (result.status, result.success, result.optimal, result.method) == ("optimal", True, True, method)
    assert result.support == reference.expected["support"]
    assert result.value == pytest.approx(reference.expected["value"], abs=reference.expected["value_tolerance"])
    assert result.time >= 0.0 and result.message
    payload = result.to_dict()
    assert list(payload)[:5] == ["status", "success", "message", "method", "time"]
    assert json.loads(json.dumps(payload, allow_nan=False)) == payload
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DeprecationWarning, match="use CBMAIResult.time"):
            _ = result.solve_time
    with pytest.deprecated_call():
        assert result.solve_time == result.time


@pytest.mark.parametrize("method", sorted(SUITE_OPTIONS))
def test_random_instances_match_brute_force(method, rng):
    # 60 random instances, L = 1, 2, 3 in turn; the optimum is recomputed by brute force over all bases.
    for index in range(60):
        problem = random_problem(rng, n_costs=1 + index % 3)
        reference = brute_force_optimum(problem)
        result = allocopt.solve_cbmai(problem, method, diagnose=False, **SUITE_OPTIONS[method])
        if not np.isfinite(reference):
            assert (result.status, result.success, result.support) == ("infeasible", False, ())
            continue
        assert result.status == "optimal", index
        assert result.value == pytest.approx(reference, abs=1e-9 * max(1.0, abs(reference))), index


@pytest.mark.parametrize("method", sorted(SUITE_OPTIONS))
def test_infeasible_instance(method):
    # Every arm's cost 1 exceeds the bound 0.5: no mixed arm is feasible.
    problem = allocopt.CBMAIProblem([1.0, 2.0, 3.0], [[0.9, 0.8, 1.2], [0.1, 0.2, 0.3]], [0.5, 1.0])
    result = allocopt.solve_cbmai(problem, method, **SUITE_OPTIONS[method])
    assert (result.status, result.success, result.support, result.value) == ("infeasible", False, (), -np.inf)
    payload = result.to_dict()
    assert payload["value"] == "-Infinity" and json.dumps(payload, allow_nan=False)


@pytest.mark.parametrize("method", sorted(SUITE_OPTIONS))
def test_unknown_options_are_refused_in_the_house_format(method):
    problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    with pytest.raises(allocopt.InvalidArgumentError) as error:
        allocopt.solve_cbmai(problem, method, tolerance=1e-3)
    text = str(error.value)
    assert text.startswith(f"solve_cbmai(method={method!r}) got unknown option(s) 'tolerance'; ")
    valid = allocopt.cbmai.method_options(method)
    for name in valid:
        assert repr(name) in text
    if not valid:
        assert text.endswith("it takes no options.")


def test_unknown_method_lists_the_registered_ones():
    problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    with pytest.raises(allocopt.InvalidArgumentError, match="'enumerate', 'highs', 'pulp'"):
        allocopt.solve_cbmai(problem, "simplex")
    with pytest.raises(allocopt.InvalidArgumentError, match="'method' parameter of method_options"):
        allocopt.cbmai.method_options("simplex")


def test_registry_imports_lazily_and_returns_fresh_options():
    from allocopt._dispatch import MethodRegistry

    registry = MethodRegistry("demo", {"pulp": "allocopt.cbmai._pulp"})
    options = registry.method_options("pulp")
    options["solver"] = "cbc"
    assert registry.method_options("pulp") == {"solver": None, "verbose": False}
    name, implementation = registry.resolve("pulp", {"solver": "cbc"})
    assert name == "pulp" and implementation is allocopt.cbmai._pulp.solve
    assert "pulp" in registry and "highs" not in registry
    with pytest.raises(allocopt.InvalidArgumentError, match="at least one method"):
        MethodRegistry("demo", {})
