"""The shared certificate (weak duality bound and its refinement) and check_topk's structure report.

Independent references: Example 1 of Wang, Yang, You (2022) (components {1,3} and {2,4,5}, 1-based, with
psi_1^2 = psi_3^2 and psi_2^2 = psi_4^2 + psi_5^2), the 20-arm experiment instance of Section 5 (a double
star by Theorem 3.4, checked here), and direct numerical maximisation with scipy for the dual function.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from allocopt import InvalidArgumentError, TopKProblem, check_topk, solve_topk
from allocopt.testing import get_instance
from allocopt.topk.certificate import certify, dual_refinement, upper_bound
from allocopt.topk.structure import null_vector_balance

from topk_instances import SUITE, make


def _accurate(problem: TopKProblem, kind: str = "confidence"):
    return solve_topk(problem, method="cvxpy", kind=kind)


def _example_1() -> TopKProblem:
    parameters = get_instance("topk-example-1").parameters
    return TopKProblem(parameters["theta"], parameters["k"], family=parameters["family"],
                       variance=parameters["variance"])


@pytest.mark.parametrize("name", ["gaussian", "bernoulli", "poisson", "exponential", "gaussian-heteroscedastic"])
@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_bounds_hold_for_arbitrary_multipliers_and_allocations(name, kind, rng):
    # weak duality: for any mu >= 0 and any psi, U(mu, psi) >= Gamma* >= Gamma(psi)
    problem = make(name)
    optimum = _accurate(problem, kind)
    for _ in range(5):
        mu = rng.dirichlet(np.ones(problem.n_pairs)).reshape(problem.k, -1)
        psi = rng.dirichlet(np.ones(problem.n_arms))
        linearised = upper_bound(problem, psi, mu, kind)
        refined, _ = dual_refinement(problem, psi, mu, kind)
        assert linearised >= optimum.value * (1 - 1e-12)
        assert optimum.value * (1 - 1e-12) <= refined <= linearised * (1 + 1e-12)
        certificate = certify(problem, psi, mu, kind)
        assert certificate.gap >= optimum.value - certificate.value


def test_refined_bound_is_the_dual_function_near_an_optimum(rng):
    # g(mu) = max over the simplex of sum_p mu_p C_p(psi) (Prop. 3.6), maximised here independently with SLSQP,
    # for multipliers near the optimal ones (the refinement's use: its Newton steps stay interior there)
    problem = make("bernoulli")
    noise = rng.dirichlet(np.ones(problem.n_pairs)).reshape(problem.k, -1)
    mu = 0.9 * _accurate(problem).mu + 0.1 * noise

    def negative_dual_objective(psi):
        return -float(np.sum(mu * problem.costs(np.maximum(psi, 0.0))))

    best = optimize.minimize(negative_dual_objective, np.full(problem.n_arms, 1 / problem.n_arms), method="SLSQP",
                             bounds=[(0, 1)] * problem.n_arms,
                             constraints=[{"type": "eq", "fun": lambda psi: psi.sum() - 1}],
                             options={"ftol": 1e-15, "maxiter": 500})
    refined, point = dual_refinement(problem, np.full(problem.n_arms, 1 / problem.n_arms), mu)
    assert refined >= -best.fun * (1 - 1e-9)
    assert refined == pytest.approx(-best.fun, rel=1e-7)


def test_mass_split_between_components_is_optimised():
    # Example 1's optimal multipliers live on two components; moving mass between them keeps a valid bound, and
    # the certifier's optimal re-split recovers Gamma* while the plain linearised bound does not
    problem = _example_1()
    optimum = solve_topk(problem)  # exact: multipliers on the three binding pairs (1,3), (2,4), (2,5), 1-based
    mu = optimum.mu.copy()
    first = np.zeros_like(mu, dtype=bool)
    first[0, 0] = True  # the pair (arm 1, arm 3), 1-based
    distorted = np.where(first, 0.8 * mu / mu[first].sum(), 0.2 * mu / mu[~first].sum())
    assert upper_bound(problem, optimum.psi, distorted) > optimum.value * 1.3
    refined, _ = dual_refinement(problem, optimum.psi, distorted)
    assert refined == pytest.approx(optimum.value, rel=1e-9)


def test_example_1_structure():
    problem = _example_1()
    report = check_topk(problem, _accurate(problem).psi)
    assert report.component_indices(one_based=True) == [((1,), (3,)), ((2,), (4, 5))]
    assert all(abs(component.balance_residual) < 1e-5 for component in report.components)
    assert report.passed and report.every_arm_binding and report.monotone
    assert report.relative_gap <= 1e-6 and report.kkt_residual <= 1e-5
    # psi_1^2 = psi_3^2 and psi_2^2 = psi_4^2 + psi_5^2 (spec/topk.md, Example 1)
    psi = report.psi
    assert psi[0] ** 2 == pytest.approx(psi[2] ** 2, rel=1e-5)
    assert psi[1] ** 2 == pytest.approx(psi[3] ** 2 + psi[4] ** 2, rel=1e-5)
    # the binding graph is a networkx graph over the caller's indices, with the multipliers on its edges
    assert sorted(report.graph.edges()) == [(0, 2), (1, 3), (1, 4)]
    assert sum(data["mu"] for _, _, data in report.graph.edges(data=True)) == pytest.approx(1.0)
    assert not report.double_star.holds


def test_section_5_instance_is_a_double_star():
    # theta_i = 1 - (i-1)/20, variance 1/4, k = 5 (Section 5 of the paper): every pair (i_k, j) and (i, j_1) binds
    parameters = get_instance("topk-experiments-gaussian-20").parameters
    problem = TopKProblem(parameters["theta"], parameters["k"], variance=parameters["variance"])
    report = check_topk(problem, _accurate(problem).psi)
    verdict = report.double_star
    assert verdict.holds, verdict.reason
    assert (verdict.worst_top, verdict.best_bottom) == (4, 5)
    assert verdict.gaussian_condition > 0 and verdict.center_multiplier > 0
    assert len(report.components) == 1 and report.passed


@pytest.mark.parametrize("name", ["gaussian", "gaussian-heteroscedastic", "gaussian-k1"])
def test_general_balance_equals_sum_of_squares_for_gaussian_arms(name):
    # Prop. A.2's null-vector balance reduces to Prop. 3.3's sum of squares psi^2 / sigma^2 for Gaussian arms;
    # checked on spanning trees of the complete bipartite graph at an arbitrary allocation
    problem = make(name)
    psi = np.linspace(1.0, 2.0, problem.n_arms)
    psi /= psi.sum()
    top, bottom = tuple(int(a) for a in problem.top), tuple(int(b) for b in problem.bottom)
    edges = tuple([(top[0], b) for b in bottom] + [(a, bottom[-1]) for a in top[1:]])
    terms = problem.pair_terms(psi, [0] * len(bottom) + list(range(1, len(top))),
                               list(range(len(bottom))) + [len(bottom) - 1] * (len(top) - 1))
    general = null_vector_balance(top, bottom, edges, terms.grad_top, terms.grad_bottom)
    weighted = psi**2 / problem.dispersion
    sum_of_squares = (weighted[list(top)].sum() - weighted[list(bottom)].sum()) / weighted.sum()
    assert general == pytest.approx(sum_of_squares, rel=1e-10)


@pytest.mark.parametrize("name", [name for name, (_, hard) in SUITE.items() if not hard])
def test_accurate_solutions_pass_the_check_for_every_family(name):
    # an interior-point allocation within a relative gap g of the optimum value is accurate only to about sqrt(g)
    # along the flat directions of the optimum, hence the structural tolerance 10 sqrt(g) (at least 1e-6), g being
    # the gap certified by weak duality for this answer (about 1e-8, so the tolerance is about 1e-3)
    problem = make(name)
    for kind in ("confidence", "budget"):
        accurate = _accurate(problem, kind)
        tolerance = max(1e-6, 10.0 * np.sqrt(accurate.relative_gap))
        report = check_topk(problem, accurate.psi, tol=tolerance, kind=kind)
        assert report.passed, report.summary()


def test_non_optimal_allocations_are_reported():
    problem = _example_1()
    uniform = check_topk(problem, np.full(5, 0.2))
    assert not uniform.passed and not uniform.every_arm_binding
    # at the uniform allocation only the closest pair, (2, 3) 1-based (theta 0.5 and 0), binds
    assert set(uniform.non_binding_arms) == {0, 3, 4}
    optimum = _accurate(problem).psi
    swapped = optimum.copy()
    swapped[[0, 1]] = swapped[[1, 0]]  # the better top arm now gets more: violates Prop. 3.2
    report = check_topk(problem, swapped, tol=1e-3)
    assert report.monotone is False and (0, 1) in report.monotonicity_violations
    heteroscedastic = make("gaussian-heteroscedastic")
    assert check_topk(heteroscedastic, _accurate(heteroscedastic).psi).monotone is None


def test_check_statuses_say_what_failed():
    problem = _example_1()
    optimum = check_topk(problem, _accurate(problem).psi)
    assert optimum.status == "passed" and optimum.success and optimum.method == "kkt-lp" and optimum.time >= 0
    # uniform allocation psi = 1/5: the Gaussian costs are Delta^2 psi_i psi_j / (2 sigma^2 (psi_i + psi_j))
    # = Delta^2 / 5, so Gamma = 0.5^2 / 5 (arms 2 and 3, 1-based) and arm 5's cheapest pair (with arm 2,
    # Delta = 0.592) costs 0.592^2 / 0.25 = 1.40 Gamma: near-binding at tol 0.5, not at tol 0.35
    uniform = np.full(5, 0.2)
    strict = check_topk(problem, uniform, tol=0.01)
    assert strict.status == "not_certified" and not strict.success and "exceeds tol" in strict.message
    loose = check_topk(problem, uniform, tol=0.35)
    assert loose.relative_gap <= 0.35 and loose.non_binding_arms == (4,)
    assert loose.status == "structure_violated" and not loose.passed and "[4]" in loose.message
    assert check_topk(problem, uniform, tol=0.5).non_binding_arms == ()


def test_check_topk_rejects_bad_input():
    problem = _example_1()
    with pytest.raises(InvalidArgumentError, match="'psi' parameter of check_topk must be a point of the "
                                                   "probability simplex in R\\^5.*sum to 1.2"):
        check_topk(problem, [0.4, 0.2, 0.2, 0.2, 0.2])
    with pytest.raises(InvalidArgumentError, match="entries \\[1\\] are negative"):
        check_topk(problem, [0.6, -0.2, 0.2, 0.2, 0.2])
    with pytest.raises(InvalidArgumentError, match="'psi' parameter of check_topk"):
        check_topk(problem, [0.5, 0.5])
    with pytest.raises(InvalidArgumentError, match="'tol' parameter of check_topk"):
        check_topk(problem, np.full(5, 0.2), tol=0.0)
    with pytest.raises(InvalidArgumentError, match="Gamma\\(psi\\) > 0"):
        check_topk(problem, [0.5, 0.5, 0.0, 0.0, 0.0])
