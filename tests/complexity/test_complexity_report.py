"""report(): one frozen result with every applicable measure, its providers, table and JSON; and the CLI."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from allocopt import complexity
from allocopt.cli import main
from allocopt.exceptions import InvalidArgumentError, InvalidInstanceError
from allocopt.testing import bandit_instances

SETUP_TWO = bandit_instances.nsar_setup(2, 2)  # H1 = 3650, H2 = 2500 (test_complexity_fixed_budget.py)


def test_report_values_are_the_functions_values():
    result = complexity.report(SETUP_TWO, 2, "bernoulli", delta=0.05, eps=0.02, p=(0.7, 1.3))
    assert result["h1"] == pytest.approx(3650.0, rel=1e-9)
    assert result["h2"] == pytest.approx(2500.0, rel=1e-9)
    assert result["h_p[p=1.3]"] == complexity.h_p(SETUP_TWO, 1.3, 2)
    assert result["c_p[p=0.7]"] == complexity.c_p(50, 0.7)
    assert result["nsar_sample_complexity[p=0.7]"] == complexity.nsar_sample_complexity(SETUP_TWO, 2, 0.05, 0.7)
    assert result["sar_budget"] == complexity.nsar_error_bound(SETUP_TWO, 2, 1.0).required_budget(0.05)
    hardness = complexity.h_t_eps(SETUP_TWO, 2, 0.02)
    assert (result["t_eps"], result["psi_t_eps"], result["h_t_eps"]) == (hardness.t, hardness.psi_t_eps,
                                                                          hardness.value)
    np.testing.assert_array_equal(result["gaps"], complexity.gaps(SETUP_TWO, 2))
    assert result.measure("h1").source.startswith("Shahrampour & Tarokh 2017, eq. (4)")
    # k = 2: Table I (best arm) does not apply, and says why; no CBMAI instance was passed
    assert [item.group for item in result.omitted] == [complexity.reporting.GROUP_BEST_ARM,
                                                       complexity.reporting.GROUP_CBMAI]
    assert "k = 1" in result.omitted[0].reason
    assert "successive_rejects.alpha" not in result


def test_best_arm_report_has_table_one():
    result = complexity.report([0.5, 0.9, 0.8], 1, p=2.0)
    assert result["h1_bai"] == pytest.approx(106.25, rel=1e-12)  # 0.1^-2 + 0.4^-2
    assert result["successive_rejects.alpha"] == complexity.successive_rejects_bound([0.5, 0.9, 0.8]).alpha
    assert result["nonlinear_sequential_elimination[p=2].beta"] == \
        complexity.nonlinear_sequential_elimination_bound([0.5, 0.9, 0.8], 2.0).beta
    assert [item.group for item in result.omitted] == [complexity.reporting.GROUP_CBMAI]


def test_boundary_tie_omits_exact_identification_but_keeps_the_aggregate_regret_measures():
    result = complexity.report([0.9, 0.5, 0.5, 0.1], 2)
    groups = {item.group for item in result.omitted}
    assert complexity.reporting.GROUP_EXACT in groups
    reason = next(item.reason for item in result.omitted if item.group == complexity.reporting.GROUP_EXACT)
    assert "arms [1, 2] tie" in reason and "'theta' parameter of report" in reason
    assert result["boundary_gap"] == 0.0
    assert result["h_t_eps"] == pytest.approx(complexity.h_0_eps([0.9, 0.5, 0.5, 0.1], 2, 0.01))
    assert "h1" not in result


def test_report_is_frozen_and_its_arrays_read_only():
    result = complexity.report(SETUP_TWO, 2, "bernoulli")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.k = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        result["gaps"][0] = 1.0
    with pytest.raises(ValueError):
        result.theta[0] = 1.0
    with pytest.raises(KeyError, match="'key' parameter of ComplexityReport.measure"):
        result["no such measure"]


def test_table_and_json_rendering():
    result = complexity.report(SETUP_TWO, 2, "bernoulli", p=(0.7,))
    table = result.to_table()
    for text in ("Complexity of a 50-arm instance, top 2, family Bernoulli()", complexity.reporting.GROUP_EXACT,
                 "H2^(k)", "2500", "not applicable"):
        assert text in table
    payload = result.to_dict()
    assert json.loads(json.dumps(payload)) == payload
    assert [item["key"] for item in payload["measures"]] == list(result.keys())
    assert payload["settings"] == {"delta": 0.01, "eps": 0.01, "p": [0.7]}


def test_custom_providers_plug_in():
    def spread(context: complexity.ReportContext) -> list[complexity.Measure]:
        if "scale" not in context.extra:
            raise complexity.MeasureNotApplicable("needs extra['scale']")
        value = context.extra["scale"] * float(np.ptp(context.theta))
        return [complexity.Measure("scaled_range", "s range", value, "custom", "test", "an example provider")]

    providers = complexity.DEFAULT_PROVIDERS + (complexity.MeasureProvider("custom", spread),)
    with_extra = complexity.report([0.1, 0.4, 0.9], 1, providers=providers, extra={"scale": 2.0})
    assert with_extra["scaled_range"] == pytest.approx(1.6)
    without = complexity.report([0.1, 0.4, 0.9], 1, providers=providers)
    assert without.omitted[-1] == complexity.OmittedGroup("custom", "needs extra['scale']")
    with pytest.raises(InvalidArgumentError, match="unique key"):
        complexity.report([0.1, 0.4, 0.9], 1, providers=complexity.DEFAULT_PROVIDERS + complexity.DEFAULT_PROVIDERS[:1])
    with pytest.raises(InvalidArgumentError, match="'providers' parameter of report"):
        complexity.report([0.1, 0.4, 0.9], 1, providers=[spread])


@pytest.mark.parametrize(("arguments", "message"), [
    (dict(theta=[0.2, 0.5], k=2), r"'k' parameter of report must be an integer in 1..K-1 = 1..1"),
    (dict(theta=[0.2], k=1), r"'theta' parameter of report must be .* of length at least 2"),
    (dict(theta=[0.2, 1.5], k=1, family="bernoulli"), r"'theta' parameter of report .*\(entries \[1\] are outside\)"),
    (dict(theta=[0.2, 0.5], k=1, eps=0.0), r"'eps' parameter of report must be a tolerance in the open interval"),
    (dict(theta=[0.2, 0.5], k=1, delta=1.0), r"'delta' parameter of report must be a probability"),
    (dict(theta=[0.2, 0.5], k=1, p=(0.5, -1.0)), r"'p' parameter of report must be a number > 0"),
    (dict(theta=[0.2, 0.5], k=1, variance=[1.0, 2.0, 3.0]), r"'variance' parameter of report"),
])
def test_report_bad_input(arguments, message):
    with pytest.raises(InvalidArgumentError, match=message):
        complexity.report(**arguments)


def test_every_standard_instance_reports():
    for instance in bandit_instances.standard_instances():
        parameters = dict(instance.parameters)
        theta, k, family = parameters.pop("theta"), parameters.pop("k"), parameters.pop("family")
        result = complexity.report(theta, k, family, **parameters)
        assert "h_t_eps" in result, instance.name
        if instance.name.startswith("chen2017-synthetic-6"):
            # SYNTHETIC-6 puts arm K+1 at (1 - K/n)(1 - (n-K)^-6), within 1e-17 of arm K: at float64's
            # resolution, so the rounded gap is 0 or one ulp. A zero gap is a tie and exact identification is
            # omitted (the aggregate-regret measures, which Chen, Chen, Zhang, Zhou (2017)
            # propose for such instances, remain).
            assert result["boundary_gap"] < 1e-15
            assert ("h1" in result) == (result["boundary_gap"] > 0)
        else:
            assert "h1" in result, instance.name
        assert result["h_t_eps"] <= result["h_0_eps"] * (1 + 1e-12) <= result["n_over_eps_squared"] * (1 + 1e-12)


def test_cli_table(capsys):
    assert main(["complexity", "--theta", "0.5,0.9,0.8", "--k", "1", "--p", "2"]) == 0
    output = capsys.readouterr().out
    assert "Complexity of a 3-arm instance, top 1, family Gaussian(variance=1.0)" in output
    assert "SR alpha" in output and "266.667" in output  # H2 logbar(3) = 200 * 4/3


def test_cli_json(capsys):
    assert main(["complexity", "--theta", "0.7,0.7,0.5,0.5", "--k", "2", "--family", "bernoulli", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    values = {item["key"]: item["value"] for item in payload["measures"]}
    assert values["h1"] == pytest.approx(100.0)  # four gaps of 0.2
    assert payload["family"] == "Bernoulli()"
    # the 1-spread check is infinite with ties: strict JSON carries it as the string "Infinity"
    assert values["spread_constant"] == "Infinity"


def test_cli_bad_input(capsys):
    assert main(["complexity", "--theta", "0.5,0.9", "--k", "3"]) == 2
    assert "'k' parameter of report must be an integer in 1..K-1 = 1..1" in capsys.readouterr().err
    assert main(["complexity", "--theta", "0.5,0.5,0.1", "--k", "1", "--variance", "0.25"]) == 0
    assert f"{complexity.reporting.GROUP_EXACT}: not applicable" in capsys.readouterr().out


def test_tie_error_is_an_invalid_instance():
    with pytest.raises(InvalidInstanceError):
        complexity.sorted_gaps([0.4, 0.4], 1)
