"""report()'s providers from the other layers: the top-k allocations (Gamma*, T*, Gamma_B*) and the CBMAI gaps.

Reference values are either stated by a source (cited next to them) or computed independently in the test by the
layer's own public function (``solve_topk``, ``cbmai_hardness``), which the report must reproduce exactly.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

import allocopt
from allocopt import complexity
from allocopt.cli import main
from allocopt.exceptions import InvalidArgumentError
from allocopt.topk import TopKProblem, solve_topk

GROUP_ALLOCATION = complexity.reporting.GROUP_ALLOCATION
GROUP_CBMAI = complexity.reporting.GROUP_CBMAI

# Wang, Yang, You (2022), Example 1: Gaussian, variance 1/4, k = 2; psi* ~ (0.2185, 0.2371, 0.2185, 0.2026,
# 0.1232) and Gamma* ~ 0.0568.
EXAMPLE_1 = [0.51, 0.5, 0.0, -0.01, -0.092]
EXAMPLE_1_PSI = [0.2185, 0.2371, 0.2185, 0.2026, 0.1232]

# A small CBMAI instance (K = 4 unknown arms, L = 1 cost, cbar = 1), chosen for this file: arm 0 alone (cost 0.5,
# reward 1.0) is the unique optimum with its slack basic, I* = {arm 0, slack} = columns (0, 4).
CBMAI_SMALL = dict(rewards=[1.0, 0.6, 0.8, 0.3], costs=[[0.5, 0.2, 1.4, 0.1]], bounds=[1.0])

ALLOCATION_KEYS = ("gamma_star", "gamma_star.gap", "psi_star", "t_star", "t_star.lower",
                   "sample_complexity_lower_bound", "gamma_b_star", "gamma_b_star.gap", "psi_b_star")


def cbmai_small() -> allocopt.CBMAIProblem:
    return allocopt.CBMAIProblem(**CBMAI_SMALL)


# ----------------------------------------------------------------------------------------- top-k allocations
@pytest.mark.parametrize(("theta", "k", "family", "variance"), [
    (EXAMPLE_1, 2, "gaussian", 0.25),
    (EXAMPLE_1, 2, "gaussian", [0.25, 0.5, 0.1, 0.3, 0.2]),  # heteroscedastic: the per-arm variances must reach it
    ([0.7, 0.6, 0.5, 0.3, 0.2], 2, "bernoulli", None),
    ([3.0, 1.0, 2.5, 0.5], 1, "poisson", None),
    ([2.0, 1.0, 0.5, 1.5, 0.2, 3.0], 3, "exponential", None),
])
def test_allocation_measures_are_those_of_solve_topk(theta, k, family, variance):
    result = complexity.report(theta, k, family, variance=variance, delta=0.05)
    problem = TopKProblem(theta, k, family=family, variance=1.0 if variance is None else variance)
    confidence = solve_topk(problem, method="exact", kind="confidence")
    budget = solve_topk(problem, method="exact", kind="budget")
    assert result["gamma_star"] == confidence.value
    assert result["gamma_star.gap"] == confidence.gap
    np.testing.assert_array_equal(result["psi_star"], confidence.psi)
    assert result["t_star"] == confidence.characteristic_time
    assert result["t_star.lower"] == confidence.characteristic_time_bounds[0]
    assert result["gamma_b_star"] == budget.value
    assert result["gamma_b_star.gap"] == budget.gap
    np.testing.assert_array_equal(result["psi_b_star"], budget.psi)
    assert confidence.status == budget.status == "optimal"
    assert [item.key for item in result.measures if item.group == GROUP_ALLOCATION] == list(ALLOCATION_KEYS)


def test_example_1_of_the_paper():
    result = complexity.report(EXAMPLE_1, 2, variance=0.25)
    # Wang, Yang, You (2022), Example 1: Gamma* ~ 0.0568 and psi* to four decimals
    assert result["gamma_star"] == pytest.approx(0.0568, abs=5e-5)
    np.testing.assert_allclose(result["psi_star"], EXAMPLE_1_PSI, atol=5e-5)
    # certified: Gamma(psi) <= Gamma* <= Gamma(psi) + gap, and the exact solver certifies to its tol = 1e-9
    assert 0.0 <= result["gamma_star.gap"] <= 1e-9 * result["gamma_star"]
    # T* = 1/Gamma* (Wang, Yang, You 2022, eq. (5)), bracketed by the certified interval [1/(Gamma + gap), 1/Gamma]
    assert result["t_star"] == 1.0 / result["gamma_star"]
    assert result["t_star.lower"] == 1.0 / (result["gamma_star"] + result["gamma_star.gap"])
    assert result["t_star.lower"] <= result["t_star"]
    assert result["t_star"] == pytest.approx(1 / 0.0568, rel=1e-3)  # 1/Gamma* of Example 1


@pytest.mark.parametrize("delta", [0.01, 0.1])
def test_lemma_2_1_lower_bound(delta):
    result = complexity.report(EXAMPLE_1, 2, variance=0.25, delta=delta)
    # kl(delta, 1-delta) of Bernoulli laws, from their divergence d(x, y) = x log(x/y) + (1-x) log((1-x)/(1-y)):
    # delta log(delta/(1-delta)) + (1-delta) log((1-delta)/delta) = (1 - 2 delta) log((1-delta)/delta)
    kl = (1 - 2 * delta) * math.log((1 - delta) / delta)
    assert result["sample_complexity_lower_bound"] == pytest.approx(result["t_star.lower"] * kl, rel=1e-12)
    assert result.measure("sample_complexity_lower_bound").source == "Wang et al. 2022, Lemma 2.1"


def test_budget_exponent_equals_gamma_star_for_gaussian_arms_only():
    # Wang, Yang, You (2022), Remark 1: "For Gaussian bandits ... B_ij = C_ij" (also per-arm variances: both are
    # (theta_i - theta_j)^2 / (2 (s2_i/psi_i + s2_j/psi_j))), so Gamma_B* = Gamma* and the allocations agree.
    for variance in (0.25, [0.25, 0.5, 0.1, 0.3, 0.2]):
        gaussian = complexity.report(EXAMPLE_1, 2, variance=variance)
        assert gaussian["gamma_b_star"] == pytest.approx(gaussian["gamma_star"], rel=1e-12)
        np.testing.assert_allclose(gaussian["psi_b_star"], gaussian["psi_star"], rtol=1e-9)
    # Bernoulli: B_ij (divergences d(x, theta)) and C_ij (d(theta, x)) differ, and so do the optima: their
    # certified intervals [value, value + gap] are disjoint.
    bernoulli = complexity.report([0.7, 0.6, 0.5, 0.3, 0.2], 2, "bernoulli")
    difference = abs(bernoulli["gamma_b_star"] - bernoulli["gamma_star"])
    assert difference > bernoulli["gamma_b_star.gap"] + bernoulli["gamma_star.gap"]
    assert difference > 1e-3 * bernoulli["gamma_star"]
    assert np.max(np.abs(bernoulli["psi_b_star"] - bernoulli["psi_star"])) > 1e-3


def test_boundary_tie_omits_the_allocations_with_the_reason():
    result = complexity.report([0.9, 0.5, 0.5, 0.1], 2)
    reason = {item.group: item.reason for item in result.omitted}[GROUP_ALLOCATION]
    assert "arms [1, 2] tie" in reason and "'theta' parameter of report" in reason
    assert not any(key in result for key in ALLOCATION_KEYS)
    assert "h_t_eps" in result  # the aggregate-regret group still applies


def test_boundary_means_one_float_apart_are_still_certified():
    # mu_[2] and mu_[3] are adjacent doubles; the top-k layer evaluates the costs from offsets, so Gamma* is
    # still computed and certified (Gamma* ~ Delta^2 is about 1e-33 here)
    theta = [1.0, 0.5, float(np.nextafter(0.5, 0.0)), 0.1]
    result = complexity.report(theta, 2, variance=0.25)
    assert "gamma_star" in result and "h1" in result
    assert 0 < result["gamma_star"] < 1e-30
    assert result["gamma_star.gap"] <= 1e-9 * result["gamma_star"]


def test_importing_the_complexity_layer_does_not_import_the_other_layers():
    code = "import sys, allocopt.complexity; print(sorted(m for m in ('allocopt.topk', 'allocopt.cbmai') " \
           "if m in sys.modules))"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


# ------------------------------------------------------------------------------------------------- CBMAI gaps
def cbmai_values(result: complexity.ComplexityReport) -> dict:
    return {key: result[key] for key in result.keys() if key.startswith("cbmai.")}


def assert_equals_hardness(result: complexity.ComplexityReport, hardness: allocopt.CBMAIHardness) -> None:
    values = cbmai_values(result)
    assert values["cbmai.sigma_r"] == hardness.sigma_r and values["cbmai.sigma_c"] == hardness.sigma_c
    assert tuple(values["cbmai.optimal_support"]) == hardness.optimal_support
    assert values["cbmai.infeasibility_gap"] == hardness.infeasibility_gap
    for name in ("bases", "basis_gaps", "arm_gaps", "sorted_arms", "sorted_gaps"):
        np.testing.assert_array_equal(values[f"cbmai.{name}"], getattr(hardness, name))
    for name in ("consistent_exponent", "uslp_exponent", "sfsr_exponent"):
        assert values[f"cbmai.{name}"] == getattr(hardness, name)


def test_cbmai_group_present_iff_an_instance_is_passed():
    without = complexity.report(EXAMPLE_1, 2, variance=0.25)
    assert not cbmai_values(without)
    reason = {item.group: item.reason for item in without.omitted}[GROUP_CBMAI]
    assert "report(..., cbmai=" in reason

    problem = cbmai_small()
    result = complexity.report(EXAMPLE_1, 2, variance=0.25, cbmai=problem)
    assert GROUP_CBMAI in result.groups() and GROUP_CBMAI not in {item.group for item in result.omitted}
    # the paper's noise levels (Tang, Jain, Nayyar, Nuzzo 2024, Section 5: sigma_r = 1, sigma_c = 0.5) are the
    # defaults
    assert_equals_hardness(result, allocopt.cbmai_hardness(problem, sigma_r=1.0, sigma_c=0.5))
    # by hand: I* = {arm 0, slack} has p0 = 1 and slack 1 - c0; it becomes infeasible when arm 0's cost rises
    # from 0.5 to the bound 1 (A_I* = [[c0, 1], [1, 0]] is never singular): Delta_0^2 = 0.5^2 / 0.5^2 = 1.
    assert result["cbmai.infeasibility_gap"] == pytest.approx(1.0, rel=1e-12)
    assert tuple(result["cbmai.optimal_support"]) == (0, 4)
    # the other groups do not depend on the CBMAI instance
    assert result["gamma_star"] == without["gamma_star"]


def test_cbmai_noise_levels_are_passed_on():
    problem = cbmai_small()
    result = complexity.report(EXAMPLE_1, 2, variance=0.25, cbmai=problem, sigma_r=2.0, sigma_c=1.0)
    assert_equals_hardness(result, allocopt.cbmai_hardness(problem, sigma_r=2.0, sigma_c=1.0))
    # Delta_0^2 only moves costs, weighted by sigma_c^-2: 0.5^2 / 1^2 (see the previous test)
    assert result["cbmai.infeasibility_gap"] == pytest.approx(0.25, rel=1e-12)


def test_cbmai_instance_outside_assumption_1_is_omitted_with_the_reason():
    # tests/cbmai/test_cbmai_hardness.py: arm 0 alone has cost 1.0 = cbar, so its slack is 0 (degenerate optimum)
    degenerate = allocopt.CBMAIProblem([1.0, 0.3], [[1.0, 0.5]], [1.0])
    result = complexity.report(EXAMPLE_1, 2, variance=0.25, cbmai=degenerate)
    reason = {item.group: item.reason for item in result.omitted}[GROUP_CBMAI]
    assert "the CBMAI instance" in reason and "Assumption 1" in reason and "degenerate optimum" in reason
    assert not cbmai_values(result)


@pytest.mark.parametrize(("cbmai", "message"), [
    ([[1.0, 0.6], [0.5, 0.2]], r"'cbmai' parameter of report must be an allocopt.CBMAIProblem or None"),
    (CBMAI_SMALL, r"'cbmai' parameter of report must be an allocopt.CBMAIProblem or None"),
    ("later", r"'cbmai' parameter of report"),
])
def test_cbmai_bad_instance(cbmai, message):
    with pytest.raises(InvalidArgumentError, match=message):
        complexity.report(EXAMPLE_1, 2, cbmai=cbmai)


def test_cbmai_inputs_under_extra_are_refused_with_the_keyword_to_use():
    with pytest.raises(InvalidArgumentError, match=r"'extra' parameter of report .*cbmai=\.\.\., sigma_r="):
        complexity.report(EXAMPLE_1, 2, extra={"cbmai": cbmai_small()})


@pytest.mark.parametrize(("name", "value"), [("sigma_r", 0.0), ("sigma_c", -0.5), ("sigma_c", float("inf"))])
def test_cbmai_bad_noise_level(name, value):
    with pytest.raises(InvalidArgumentError,
                       match=rf"'{name}' parameter of report must be a finite number > 0"):
        complexity.report(EXAMPLE_1, 2, cbmai=cbmai_small(), **{name: value})


@pytest.mark.slow
def test_cbmai_gaps_of_the_paper_instance_d1p():
    # D1P of Tang, Jain, Nayyar, Nuzzo (2024), Table 1 (K = 24, L = 2); docs/cbmai.md Section 6 (measured with
    # cbmai_hardness):
    # Delta_0^2 = 4.000e-02, Delta_(L+2)^2 = 8.000e-04, (13) = 4.000e-04, (14) = 1.667e-05, (15) = 2.138e-05.
    problem = allocopt.CBMAIProblem.from_reference("cbmai-d1p")
    result = complexity.report(EXAMPLE_1, 2, variance=0.25, cbmai=problem)
    assert result["cbmai.infeasibility_gap"] == pytest.approx(4.000e-02, rel=5e-4)
    assert result["cbmai.sorted_gaps"][3] == pytest.approx(8.000e-04, rel=5e-4)
    assert result["cbmai.consistent_exponent"] == pytest.approx(4.000e-04, rel=5e-4)
    assert result["cbmai.uslp_exponent"] == pytest.approx(1.667e-05, rel=5e-4)
    assert result["cbmai.sfsr_exponent"] == pytest.approx(2.138e-05, rel=5e-4)
    assert result["cbmai.bases"].shape == (math.comb(26, 3), 3)  # every basis of K + L = 26 columns
    payload = result.to_dict()
    assert json.loads(json.dumps(payload)) == payload


# ------------------------------------------------------------------------------------------------------- CLI
def test_cli_table_shows_the_allocations(capsys):
    assert main(["complexity", "--theta", ",".join(map(str, EXAMPLE_1)), "--k", "2", "--variance", "0.25"]) == 0
    output = capsys.readouterr().out
    for text in (GROUP_ALLOCATION, "Gamma*", "T* = 1/Gamma*", "T* kl(delta, 1-delta)", "Gamma_B*", "psi*",
                 "0.0568362",  # Gamma* of Example 1 to 6 digits (solve_topk, test_example_1_of_the_paper)
                 f"{GROUP_CBMAI}: not applicable"):
        assert text in output


def test_cli_json_carries_the_allocations(capsys):
    theta = [0.7, 0.6, 0.5, 0.3, 0.2]
    assert main(["complexity", "--theta", ",".join(map(str, theta)), "--k", "2", "--family", "bernoulli",
                 "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    values = {item["key"]: item["value"] for item in payload["measures"]}
    problem = TopKProblem(theta, 2, family="bernoulli")
    confidence = solve_topk(problem, kind="confidence")
    budget = solve_topk(problem, kind="budget")
    assert values["gamma_star"] == confidence.value and values["gamma_b_star"] == budget.value
    assert values["psi_star"] == confidence.psi.tolist() and values["psi_b_star"] == budget.psi.tolist()
    assert values["t_star"] == confidence.characteristic_time
    assert GROUP_CBMAI in {item["group"] for item in payload["omitted"]}


def test_matrix_values_render_on_one_table_line():
    result = complexity.report(EXAMPLE_1, 2, variance=0.25, cbmai=cbmai_small())
    line = next(text for text in result.to_table().splitlines() if text.lstrip().startswith("bases J"))
    # the 10 bases of K + L = 5 columns, summarised by numpy (edge items 3) on the row of their symbol
    assert "[[0, 1], [0, 2], [0, 3], ..., [2, 3], [2, 4], [3, 4]]" in line


def test_every_source_cites_a_paper_by_authors_year_and_number():
    # The five papers listed in the module docstring of allocopt.complexity.reporting, in the short form of the
    # source column; each entry then names an equation, section, table, theorem, proposition, lemma, definition
    # or assumption of that paper.
    papers = ("Wang et al. 2022", "Tang et al. 2024", "Shahrampour & Tarokh 2017", "Chen et al. 2017",
              "Jiang et al. 2017")
    pattern = re.compile(rf"({'|'.join(map(re.escape, papers))}), "
                         r"(eq\. \(\d+\)|Sec\. \d|Table I|Thm \d|Prop\. \d|Lemma \d|Def\. \d|Assumption \d)")
    result = complexity.report(EXAMPLE_1, 1, variance=0.25, cbmai=cbmai_small())
    assert not result.omitted  # every default group applies (k = 1 includes Table I), so every source is checked
    assert len(result.groups()) == len(complexity.DEFAULT_PROVIDERS)
    for item in result.measures:
        assert pattern.match(item.source), (item.key, item.source)
