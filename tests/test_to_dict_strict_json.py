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


def _cbmai_result():
    # an infeasible LP (the cost row cannot be met: 2 p_0 + 3 p_1 <= 1 with p in the simplex) has value -inf
    # and NaN allocations
    result = allocopt.solve_cbmai(allocopt.CBMAIProblem([1.0, 0.5], [[2.0, 3.0]], [1.0]))
    assert result.status == "infeasible" and result.value == -np.inf
    return dataclasses.replace(result, time=np.inf)


def _cbmai_hardness():
    hardness = allocopt.cbmai_hardness(allocopt.CBMAIProblem([1.0, 0.6], [[0.5, 0.2]], [1.0]))
    return dataclasses.replace(hardness, infeasibility_gap=np.inf, sfsr_exponent=np.nan)


def _cbmai_run_result():
    from allocopt.algorithms import sfsr

    run = sfsr(allocopt.CBMAIProblem([0.9, 0.5, 0.2, 0.1], [[1.5, 0.5, 0.2, 0.9]], [1.0]), 400, rng=1)
    return dataclasses.replace(run, time=np.inf)


def _error_rate():
    from allocopt.algorithms import cbmai_error_rate

    problem = allocopt.CBMAIProblem([0.9, 0.5, 0.2, 0.1], [[1.5, 0.5, 0.2, 0.9]], [1.0])
    rate = cbmai_error_rate(problem, "uslp", budget=100, n_runs=4, rng=0)
    return dataclasses.replace(rate, ci_high=np.inf, time=np.nan)


def _identification_result():
    from allocopt.algorithms import identify

    result = identify(TopKProblem([1.0, 0.5, 0.0], 1, variance=0.25), "uniform", delta=0.1, n_runs=2, rng=0)
    return dataclasses.replace(result, characteristic_time=np.inf)


def _fixed_budget_result():
    from allocopt.algorithms import identify_fixed_budget

    result = identify_fixed_budget(TopKProblem([1.0, 0.5, 0.0], 1, variance=0.25), "uniform", [6, 9], n_runs=2,
                                   rng=0)
    return dataclasses.replace(result, time=np.inf)


def _policy_comparison():
    from allocopt.algorithms import compare_policies

    comparison = compare_policies(TopKProblem([1.0, 0.5, 0.0], 1, variance=0.25), ["uniform", "kkt-ts"], delta=0.1,
                                  n_runs=2, rng=0)
    results = dict(comparison.results)
    results["uniform"] = dataclasses.replace(results["uniform"], characteristic_time=np.inf)
    return dataclasses.replace(comparison, time=np.nan, results=results)


def _pac_result():
    from allocopt.algorithms import pac_identify

    result = pac_identify(TopKProblem([0.9, 0.5, 0.1], 1, family="bernoulli"), "adaptive-topk", epsilon=0.2,
                          delta=0.2, n_runs=2, rng=0)
    return dataclasses.replace(result, hardness=np.inf, time=np.nan)


def _precompile_result():
    result = allocopt.precompile(["gaussian"], rules=[])  # the Gaussian solvers: compiled or loaded once per worker
    return dataclasses.replace(result, time=np.nan)


def _topk_batch_result():
    # the second row has a tie at the top-1 boundary: invalid, reported with NaN entries, not raised
    batch = allocopt.solve_topk_batch([[1.0, 0.5, 0.0], [1.0, 1.0, 0.0]], 1, variance=0.25)
    assert batch.status.tolist() == ["optimal", "invalid_instance"]
    return dataclasses.replace(batch, upper_bound=np.array([np.inf, np.nan]))


def _posterior_convergence_result():
    # a sample cap below the first crossing of 0.999: that level is never reached and its summary row is NaN
    from allocopt.algorithms import posterior_convergence

    result = posterior_convergence(TopKProblem([1.0, 0.5, 0.0], 1, variance=0.25), "uniform", (0.9, 0.999),
                                   n_runs=2, rng=0, max_samples=4)
    return dataclasses.replace(result, time=np.inf)


def _posterior_paths():
    # the error probability underflows to 0 only far beyond this horizon; the Gamma* field carries the infinity
    from allocopt.algorithms import posterior_error_paths

    paths = posterior_error_paths(TopKProblem([1.0, 0.5, 0.0], 1, variance=0.25), "uniform", 6, n_paths=1, rng=0)
    return dataclasses.replace(paths, gamma_star=np.inf)


def _monte_carlo_result():
    # outcomes of exp(standard normal * 1000): the replications that draw a value above about 0.71 overflow
    from allocopt.simulate import monte_carlo

    with np.errstate(over="ignore"):
        result = monte_carlo(lambda generator: np.exp(1000.0 * generator.standard_normal(2)), 40, rng=3)
    assert np.isinf(result.outcomes).any()
    return result


def _chunk_records():
    from allocopt.algorithms import run_chunk

    problem = TopKProblem([1.0, 0.5, 0.0], k=1, variance=0.25)
    return run_chunk(problem, "uniform", setting="confidence", start=0, stop=2, rng=0, delta=0.1)


def _experiment_store(directory):
    """A two-chunk experiment run into ``directory``: its ExperimentRun."""
    from allocopt.experiments import run_experiment

    spec = {"name": "strict-json", "seed": 5, "n_runs": 4, "chunk_size": 2, "max_samples": 10000,
            "instances": [{"name": "gauss3", "theta": [1.0, 0.5, 0.0], "k": 1, "variance": 0.25}],
            "rules": [{"name": "uniform"}], "fixed_confidence": {"delta": [0.1]}}
    return run_experiment(spec, directory / "store")


def _experiment_run():
    import pathlib
    import tempfile

    return _experiment_store(pathlib.Path(tempfile.mkdtemp()))


def _store_status():
    import pathlib
    import tempfile

    from allocopt.experiments import store_status

    directory = pathlib.Path(tempfile.mkdtemp())
    _experiment_store(directory)
    return store_status(directory / "store")


def _experiment_report():
    import pathlib
    import tempfile

    pytest.importorskip("matplotlib")
    from allocopt.experiments import write_report

    directory = pathlib.Path(tempfile.mkdtemp())
    _experiment_store(directory)
    return write_report(directory / "store", directory / "report")


WITHOUT_FLOATS = {"ChunkRecords", "ExperimentRun", "ExperimentReport", "StoreStatus", "PrecompileResult"}
"""Results whose fields are counts, names, paths and records of integers: no number in them can be non-finite (their
builders check strict JSON only)."""

BUILDERS = {
    "ChunkRecords": _chunk_records,
    "ExperimentRun": _experiment_run,
    "StoreStatus": _store_status,
    "ExperimentReport": _experiment_report,
    "MonteCarloResult": _monte_carlo_result,
    "PosteriorConvergenceResult": _posterior_convergence_result,
    "PosteriorPaths": _posterior_paths,
    "IdentificationResult": _identification_result,
    "FixedBudgetResult": _fixed_budget_result,
    "PolicyComparison": _policy_comparison,
    "PACResult": _pac_result,
    "PrecompileResult": _precompile_result,
    "TopKBatchResult": _topk_batch_result,
    "TopKResult": _topk_result,
    "TopKCertificate": _topk_certificate,
    "ComplexityReport": _complexity_report,
    "Result": _result,
    "CBMAIResult": _cbmai_result,
    "CBMAIHardness": _cbmai_hardness,
    "CBMAIRunResult": _cbmai_run_result,
    "ErrorRate": _error_rate,
}

RESULT_CLASSES = {"CBMAIResult", "CBMAIHardness", "CBMAIRunResult", "ErrorRate", "ComplexityReport",
                  "IdentificationResult", "FixedBudgetResult", "PACResult", "PosteriorConvergenceResult",
                  "PosteriorPaths", "TopKResult", "TopKCertificate", "MonteCarloResult"}
"""Results that inherit ``Result.to_dict`` are found by subclass discovery below; each needs a builder too."""


def _non_finite_strings(value) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(_non_finite_strings(item) for item in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_non_finite_strings(item) for item in value)) if value else set()
    return {value} if value in NON_FINITE.values() else set()


def _result_subclasses() -> set[type]:
    _classes_defining_to_dict()  # imports every module
    found, stack = set(), [Result]
    while stack:
        for subclass in stack.pop().__subclasses__():
            if not subclass.__module__.startswith("allocopt.") or subclass.__name__.startswith("_"):
                continue
            found.add(subclass)
            stack.append(subclass)
    return found


def test_every_public_result_has_a_builder():
    names = {cls.__name__ for cls in _result_subclasses()}
    assert RESULT_CLASSES <= names
    assert names <= set(BUILDERS), f"add a builder for {sorted(names - set(BUILDERS))}"


@pytest.mark.parametrize("name", sorted(RESULT_CLASSES & set(BUILDERS)))
def test_results_carry_the_core_fields_first(name):
    result = BUILDERS[name]()
    payload = result.to_dict()
    assert list(payload)[:5] == ["status", "success", "message", "method", "time"]
    assert payload["success"] is result.success
    assert isinstance(result.status, str) and isinstance(result.method, str) and result.method


def test_the_batch_result_carries_the_core_fields_per_row_first():
    # a batch is R results side by side: status and success per row, message, method and time for the batch
    batch = BUILDERS["TopKBatchResult"]()
    payload = batch.to_dict()
    assert list(payload)[:5] == ["status", "success", "message", "method", "time"]
    assert payload["status"] == ["optimal", "invalid_instance"] and payload["success"] == [True, False]
    assert payload["method"] == "exact" and isinstance(payload["message"], str) and payload["message"]
    assert len(payload["messages"]) == len(batch) == 2


def test_every_class_defining_to_dict_has_a_builder():
    names = {cls.__name__ for cls in _classes_defining_to_dict()}
    assert {"TopKResult", "TopKCertificate", "ComplexityReport", "Result"} <= names
    assert names <= set(BUILDERS), f"add a builder for {sorted(names - set(BUILDERS))}"


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_to_dict_is_strict_json_with_non_finite_numbers(name):
    payload = BUILDERS[name]().to_dict()
    text = json.dumps(payload, allow_nan=False)
    assert json.loads(text) == payload
    if name in WITHOUT_FLOATS:
        return
    assert "Infinity" in _non_finite_strings(payload), "the builder must put an infinity in the output"
    assert '"inf"' not in text and '"-inf"' not in text
