"""Top-k answers at the ends of the floating-point range (issue 28, part 2).

Every reported value must be the minimum of the pair costs at the reported allocation, and value + gap must
cover Gamma*; an answer whose value leaves the normal floating-point range is refused with an
InvalidInstanceError naming the scale. The judges are independent of the code under test: Gamma* of two arms
at 50 digits (``chernoff_judge``: the Chernoff point of the spec's divergences, found by bisection), Gamma* of
the three-arm Gaussian instance from Propositions 3.1 and 3.3 of Wang, Yang, You (2022) solved by mpmath, the
pair costs at an allocation evaluated by mpmath from the spec's formulas, and, for the reproducers of the issue,
the Gamma* its reporter computed with mpmath (data/issue28_topk.json).
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import warnings

import mpmath as mp
import numpy as np
import pytest

from allocopt import InvalidInstanceError, SolverError, TopKProblem, check_topk, solve_topk
from allocopt.exceptions import AllocoptError
from allocopt.families import Gamma
from allocopt.topk import _cvx

from chernoff_judge import divergence, mean, natural, two_arm_optimum

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "issue28_topk.json").read_text())
mp.mp.dps = 50


def _family(case: dict):
    return Gamma(case["shape"]) if case["family"] == "gamma" else case["family"]


def _judge_family(case: dict) -> tuple[str, float]:
    return case["family"], (case.get("shape") or 1.0)


def _mp_cost(family: str, kind: str, theta_i, theta_j, psi_i, psi_j, shape: float = 1.0):
    """C_ij (or B_ij) at (psi_i, psi_j) in mpmath from the spec's formulas (unit dispersion but for ``shape``)."""
    theta_i, theta_j, psi_i, psi_j = (mp.mpf(float(x)) for x in (theta_i, theta_j, psi_i, psi_j))
    if kind == "confidence":
        point = (psi_i * theta_i + psi_j * theta_j) / (psi_i + psi_j)
        return (psi_i * divergence(family, theta_i, point, shape=shape)
                + psi_j * divergence(family, theta_j, point, shape=shape))
    eta = (psi_i * natural(family, theta_i) + psi_j * natural(family, theta_j)) / (psi_i + psi_j)
    point = mean(family, eta)
    return psi_i * divergence(family, point, theta_i, shape=shape) + psi_j * divergence(family, point, theta_j, shape=shape)


def _mp_value(problem: TopKProblem, psi: np.ndarray, family: str, kind: str, shape: float = 1.0):
    """Gamma(psi) = min over all pairs, in mpmath."""
    return min(_mp_cost(family, kind, problem.theta[i], problem.theta[j], psi[i], psi[j], shape)
               for i in problem.top for j in problem.bottom)


def _three_arm_gaussian_optimum():
    r"""Gamma* of theta = (1, 0, -1), k = 1, variance 1: both pairs bind (Proposition 3.1), and the single
    component balances (Proposition 3.3: psi_1^2 = psi_2^2 + psi_3^2); with sum(psi) = 1 three equations in psi."""
    def cost(gap, a, b):
        return gap**2 / (2 * (1 / a + 1 / b))

    def equations(a, b, c):
        return [cost(1, a, b) - cost(2, a, c), a**2 - b**2 - c**2, a + b + c - 1]

    a, b, c = mp.findroot(equations, (mp.mpf("0.47"), mp.mpf("0.46"), mp.mpf("0.07")))
    return cost(1, a, b)


# ------------------------------------------------------------------------------------------ underflow
@pytest.mark.parametrize("scale", [1e-160, 1e-200, 1e-300])
def test_an_optimal_value_below_the_normal_range_is_refused_naming_the_scale(scale):
    # Gamma* = 0.1167 s^2 (below): 1.2e-321 (subnormal), 1.2e-401 and 1.2e-601 (below every float)
    with pytest.raises(InvalidInstanceError, match=r"normal floating-point range.*about .* \* 2\*\*-\d+"):
        solve_topk(TopKProblem([scale, 0.0, -scale], 1))


@pytest.mark.parametrize("scale", [1e-150, 1e-100, 1e100, 1e150])
def test_value_and_gap_cover_gamma_star_near_the_ends_of_the_range(scale):
    truth = _three_arm_gaussian_optimum() * mp.mpf(scale) ** 2
    result = solve_topk(TopKProblem([scale, 0.0, -scale], 1))
    assert result.status == "optimal"
    assert mp.mpf(result.value) <= truth * (1 + mp.mpf(1e-15))
    assert mp.mpf(result.value) + mp.mpf(result.gap) >= truth


def test_overflow_is_refused_as_before():
    with pytest.raises(InvalidInstanceError, match=r"normal floating-point range"):
        solve_topk(TopKProblem([1e200, 0.0, -1e200], 1))


# --------------------------------------------------------------------------------- all-pairs bounds
@pytest.mark.parametrize("case", DATA["allpairs_scan_overflow"], ids=lambda case: f"{case['family']}-{case['theta'][0]:g}")
def test_reported_values_are_the_minimum_over_every_pair(case):
    # the closed-form pruning bound overflowed or was 0/0 = NaN: one pair was taken as the minimum
    problem = TopKProblem(case["theta"], case["k"], family=_family(case))
    family, shape = _judge_family(case)
    for method in ("cvxpy", "fwga", "kkt-tracking"):
        result = solve_topk(problem, method=method)
        truth = _mp_value(problem, result.psi, family, "confidence", shape)
        assert abs(mp.mpf(result.value) - truth) <= 1e-13 * truth, method
        assert problem.value(result.psi) == pytest.approx(float(truth), rel=1e-13)
    exact = solve_topk(problem)
    report = check_topk(problem, exact.psi, mu=exact.multipliers)
    assert abs(mp.mpf(report.value) - _mp_value(problem, exact.psi, family, "confidence", shape)) <= 1e-13 * report.value
    assert report.status == "passed", report.message


@pytest.mark.parametrize("name", ["cvxpy_extreme_scale_46", "cvxpy_extreme_scale_763"])
def test_cvxpy_at_extreme_means_is_right_within_its_gap(name):
    case = DATA[name]
    problem = TopKProblem(case["theta"], case["k"], family=_family(case))
    family, shape = _judge_family(case)
    truth = mp.mpf(case["Gamma_star_mpmath"])  # the reporter's mpmath KKT proof
    for result in (solve_topk(problem, method="cvxpy", kind=case["kind"]), solve_topk(problem, kind=case["kind"])):
        value = _mp_value(problem, result.psi, family, case["kind"], shape)
        assert abs(mp.mpf(result.value) - value) <= 1e-13 * value
        assert mp.mpf(result.value) + mp.mpf(result.gap) >= truth
        assert value <= truth


def test_pair_bounds_never_exceed_the_costs_at_extreme_magnitudes():
    # the numpy bound of the scans against mpmath costs, for means from 1e-300 to 1e300 and weights down to 1e-300
    from allocopt.topk._scan import _pair_bound

    rng = np.random.default_rng(28)
    for family_name in ("bernoulli", "poisson", "exponential"):
        family = TopKProblem([0.6, 0.3], 1, family=family_name).family
        for _ in range(60):
            scale = 10.0 ** rng.uniform(-300, 300) if family_name != "bernoulli" else 10.0 ** rng.uniform(-300, 0)
            theta_i, theta_j = sorted(scale * rng.uniform(0.01, 0.99, 2))[::-1]
            w_i, w_j = 10.0 ** rng.uniform(-300, 0, 2)
            bound = float(_pair_bound(family, np.array(theta_i - theta_j), np.array(w_i), np.array(w_j),
                                      np.array(theta_j), np.array(theta_i)))
            assert np.isfinite(bound)
            with mp.workdps(1200):  # (the cost's terms cancel over hundreds of decades for tiny Bernoulli means)
                assert mp.mpf(bound) <= _mp_cost(family_name, "confidence", theta_i, theta_j, w_i, w_j)


# ------------------------------------------------------------------------------------------- cvxpy
def test_cvxpy_gives_no_raw_error_and_no_warning_on_far_apart_bernoulli_means():
    case = DATA["cvxpy_raw_valueerror"]
    problem = TopKProblem(case["theta"], case["k"], family="bernoulli")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for method in ("exact", "cvxpy", "fwga", "kkt-tracking"):
            try:
                result = solve_topk(problem, method=method, kind="budget")
            except AllocoptError:
                continue
            value = _mp_value(problem, result.psi, "bernoulli", "budget")
            assert abs(mp.mpf(result.value) - value) <= 1e-10 * value, method


def test_cvxpy_value_errors_become_solver_errors(monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("Problem data contains NaN or Inf. Check your parameter values and constants.")

    monkeypatch.setattr(_cvx, "build_model", broken)
    with pytest.raises(SolverError, match="NaN or Inf"):
        solve_topk(TopKProblem([0.9, 0.5, 0.1], 1, family="bernoulli"), method="cvxpy")


# -------------------------------------------------------------------------------------- warm starts
def test_a_warm_start_from_another_instance_at_extreme_means_is_right():
    case = DATA["warm_start_extreme_scale"]
    family = Gamma(case["shape"])
    previous = solve_topk(TopKProblem(case["warm_from_theta"], case["k"], family=family), kind=case["kind"])
    problem = TopKProblem(case["theta"], case["k"], family=family)
    result = solve_topk(problem, kind=case["kind"], warm_start=previous)
    truth = mp.mpf(case["Gamma_star_mpmath"])  # the reporter's mpmath value
    value = _mp_value(problem, result.psi, "gamma", case["kind"], case["shape"])
    assert abs(mp.mpf(result.value) - value) <= 1e-12 * value
    assert mp.mpf(result.value) + mp.mpf(result.gap) >= truth >= value
    assert result.status == "optimal"


def test_a_warm_start_never_loses_the_certificate():
    case = DATA["warm_start_loses_certificate"]
    previous = solve_topk(TopKProblem(case["warm_from_theta"], case["k"], variance=case["variance"]))
    problem = TopKProblem(case["theta"], case["k"], variance=case["variance"])
    cold = solve_topk(problem)
    warm = solve_topk(problem, warm_start=previous)
    assert cold.status == "optimal" and warm.status == "optimal", warm.message
    assert warm.relative_gap <= 1e-9


def test_a_warm_start_that_does_not_certify_falls_back_to_the_cold_solve(monkeypatch):
    from allocopt.topk._exact import _routing as _exact

    problem = TopKProblem([0.9, 0.6, 0.4, 0.1], 2, variance=[1.0, 2.0, 0.5, 1.5])
    cold = solve_topk(problem)
    original = _exact._solve

    def spoiled(problem, kind, tol, warm_start, *args):
        answer = original(problem, kind, tol, warm_start, *args)
        if warm_start is None:
            return answer
        return dataclasses.replace(answer, status="not_certified")

    monkeypatch.setattr(_exact, "_solve", spoiled)
    warm = solve_topk(problem, warm_start=cold)
    assert warm.status == "optimal" and "solved cold" in warm.message
    assert warm.value == cold.value


# ------------------------------------------------------------- property: two arms over the whole range
def _two_arm_instances(seed: int, count: int):
    """(family name for the judge, TopKProblem, kind, variances, shape) over magnitudes 1e-300 .. 1e300."""
    rng = np.random.default_rng(seed)
    names = ("gaussian", "heteroscedastic", "bernoulli", "poisson", "exponential", "gamma")
    for index in range(count):
        name, kind = names[index % 6], ("confidence", "budget")[(index // 6) % 2]
        scale = 10.0 ** rng.uniform(-300, 300)
        high, low = sorted(rng.uniform(0.05, 3.0, 2))[::-1]
        theta, variance, shape, options = [high * scale, low * scale], (1.0, 1.0), 1.0, {}
        if name == "bernoulli":
            high, low = sorted(rng.uniform(0.01, 0.99, 2))[::-1]
            near_zero = rng.random() < 0.5
            theta = [high, low] if scale >= 1 else ([high * scale, low * scale] if near_zero
                                                    else [1.0 - low * scale, 1.0 - high * scale])
            options = {"family": "bernoulli"}
        elif name == "heteroscedastic":
            variance = tuple(10.0 ** rng.uniform(-5, 5, 2))
            options = {"variance": list(variance)}
        elif name == "gamma":
            shape = float(rng.uniform(0.1, 5.0))
            options = {"family": Gamma(shape)}
        elif name != "gaussian":
            options = {"family": name}
        if theta[0] == theta[1]:
            continue
        judge = "gaussian" if name == "heteroscedastic" else name
        yield judge, TopKProblem(theta, 1, **options), kind, variance, shape


def _judged(judge, problem, kind, variance, shape, answer) -> list[str]:
    """What is wrong with ``answer`` (a TopKResult or TopKCertificate) against the mpmath judges."""
    truth = two_arm_optimum(judge, problem.theta[0], problem.theta[1], kind, variance=variance, shape=shape)
    value, gap = mp.mpf(answer.value), mp.mpf(answer.gap)
    wrong = []
    if value + gap < truth:
        wrong.append(f"value + gap {mp.nstr(value + gap, 17)} < Gamma* {mp.nstr(truth, 17)}")
    psi = answer.psi
    if judge == "gaussian":
        at_psi = (mp.mpf(problem.theta[0]) - mp.mpf(problem.theta[1])) ** 2 / (
            2 * (mp.mpf(variance[0]) / mp.mpf(psi[0]) + mp.mpf(variance[1]) / mp.mpf(psi[1])))
    else:
        at_psi = _mp_cost(judge, kind, problem.theta[0], problem.theta[1], psi[0], psi[1], shape)
    if abs(value - at_psi) > 1e-12 * at_psi:
        wrong.append(f"value {answer.value!r} is not Gamma(psi) = {mp.nstr(at_psi, 17)}")
    return wrong


def _sweep(seed: int, count: int, methods: tuple[str, ...]) -> list:
    failures = []
    for judge, problem, kind, variance, shape in _two_arm_instances(seed, count):
        truth = two_arm_optimum(judge, problem.theta[0], problem.theta[1], kind, variance=variance, shape=shape)
        for method in methods:
            try:
                if method == "check_topk":
                    answer = check_topk(problem, solve_topk(problem, kind=kind).psi, kind=kind)
                else:
                    answer = solve_topk(problem, method=method, kind=kind)
            except InvalidInstanceError:
                if mp.mpf("1e-300") < truth < mp.mpf("1e300"):  # refused only at the ends of the range
                    failures.append((problem, kind, method, "refused", mp.nstr(truth, 5)))
                continue
            wrong = _judged(judge, problem, kind, variance, shape, answer)
            if wrong:
                failures.append((problem, kind, method, answer.status, wrong))
    return failures


def test_two_arm_answers_over_every_magnitude_family_and_kind():
    # exact and check_topk: value is Gamma(psi), and value + gap covers Gamma* (or a refusal at the range's ends)
    assert _sweep(20261128, 72, ("exact", "check_topk")) == []


@pytest.mark.slow
def test_two_arm_answers_of_every_method_over_every_magnitude():
    assert _sweep(71126, 36, ("exact", "check_topk", "cvxpy", "fwga", "kkt-tracking")) == []
