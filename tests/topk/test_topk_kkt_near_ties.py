"""check_topk on near-ties: the KKT linear program must not fail where the solver certifies the answer.

With two means one ulp apart, the pair between them has gradients of order 1 relative to Gamma while a pair with
a large gap and a tiny allocation has gradients of order 1/Gamma (1e31 and more): the unscaled KKT LP defeated
HiGHS ("Solver 'HIGHS' failed") on 60 of the 200 random cases of the differential test below. The judges are
independent of the LP: weak duality (the check's upper bound is at least Gamma(psi') for any allocation psi')
and the solver's own certified gap.
"""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import InvalidArgumentError, SolverError, TopKProblem, check_topk, solve_topk
from allocopt.topk import kkt

# 0.49999999999999994 is np.nextafter(0.5, 0): the largest double below 0.5
NEAR_TIE = [0.5, 0.49999999999999994, 0.3]

MEANS = {
    "bernoulli": lambda rng, n: rng.uniform(0.05, 0.95, n),
    "gaussian": lambda rng, n: rng.normal(0.0, 1.0, n),
    "poisson": lambda rng, n: rng.uniform(0.1, 5.0, n),
    "exponential": lambda rng, n: rng.uniform(0.1, 5.0, n),
}


def test_reported_near_tie_is_checked():
    assert NEAR_TIE[1] == np.nextafter(0.5, 0.0)
    problem = TopKProblem(NEAR_TIE, 1, family="bernoulli")
    result = solve_topk(problem)
    assert result.status == "optimal"
    report = check_topk(problem, result.psi)
    assert report.multiplier_source == "kkt-lp"
    assert report.passed and report.relative_gap <= 1e-6
    assert report.upper_bound >= result.value
    # the multipliers carry mass on both pairs of the single component {0} x {1, 2}
    assert report.component_indices() == [((0,), (1, 2))]
    assert np.all(report.mu > 0)


def _near_tie_instance(rng, trial):
    family = list(MEANS)[trial % len(MEANS)]
    n_arms = int(rng.integers(3, 7))
    k = int(rng.integers(1, n_arms))
    theta = np.sort(MEANS[family](rng, n_arms))[::-1]
    # arm j + 1 is 1 to 1000 ulps below arm j (at the top-k boundary or inside a set)
    j = int(rng.integers(0, n_arms - 1))
    theta[j + 1] = theta[j]
    for _ in range(int(rng.choice([1, 2, 7, 64, 1000]))):
        theta[j + 1] = np.nextafter(theta[j + 1], -np.inf)
    return TopKProblem(theta[rng.permutation(n_arms)], k, family=family), ("confidence", "budget")[trial % 2]


def _differential(n_cases, seed):
    rng = np.random.default_rng(seed)
    wrong = []
    for trial in range(n_cases):
        problem, kind = _near_tie_instance(rng, trial)
        result = solve_topk(problem, kind=kind)
        tol = max(1e-6, 10.0 * result.relative_gap)
        report = check_topk(problem, result.psi, tol=tol, kind=kind)  # must not raise
        # weak duality, judged on allocations the LP never saw
        others = rng.dirichlet(np.ones(problem.n_arms), size=20)
        values = [problem.minimum_cost(psi, kind)[0] for psi in others] + [result.value]
        if not max(values) <= report.upper_bound * (1 + 1e-12):
            wrong.append((problem.theta.tolist(), problem.k, kind, "upper bound below Gamma(psi')"))
        if result.status == "optimal" and not report.relative_gap <= 1e-6:
            wrong.append((problem.theta.tolist(), problem.k, kind, report.relative_gap))
    return wrong


def test_near_ties_differential():
    assert _differential(300, seed=20261122) == []


@pytest.mark.slow
def test_near_ties_differential_slow():
    assert _differential(3000, seed=11) == []


def test_given_multipliers_are_used_when_the_linear_program_fails(monkeypatch):
    problem = TopKProblem(NEAR_TIE, 1, family="bernoulli")
    result = solve_topk(problem)
    monkeypatch.setattr(kkt, "_solve_kkt_multipliers",
                        lambda *args: kkt._Multipliers(None, np.inf, "the KKT linear program failed: test"))
    # without mu the check grades the allocation with the multipliers of the instance's optimum, and says why
    own = check_topk(problem, result.psi)
    assert own.multiplier_source == "optimum" and own.passed and "failed: test" in own.message
    assert own.gap <= 1e-9 * own.value
    report = check_topk(problem, result.psi, mu=result.mu)
    assert report.multiplier_source == "given" and report.passed
    # the same certified gap as the solver's, which used the same multipliers
    assert report.gap == pytest.approx(result.gap, rel=1e-6)
    assert "(multipliers: the given ones)" in report.summary() and report.to_dict()["multiplier_source"] == "given"


def test_a_solver_error_only_when_no_multipliers_are_left(monkeypatch):
    problem = TopKProblem(NEAR_TIE, 1, family="bernoulli")
    result = solve_topk(problem)
    monkeypatch.setattr(kkt, "_solve_kkt_multipliers",
                        lambda *args: kkt._Multipliers(None, np.inf, "the KKT linear program failed: test"))

    def failing(*args, **kwargs):
        raise SolverError("test solver failure")

    monkeypatch.setattr("allocopt.topk.solve.solve_topk", failing)
    with pytest.raises(SolverError, match="failed: test, and the exact solver found no optimum"):
        check_topk(problem, result.psi)
    assert check_topk(problem, result.psi, mu=result.mu).multiplier_source == "given"


def test_the_smaller_certified_gap_wins():
    problem = TopKProblem([0.51, 0.5, 0, -0.01, -0.092], 2, variance=0.25)
    result = solve_topk(problem)
    plain = check_topk(problem, result.psi)
    uniform = np.full((2, 3), 1 / 6)  # poor multipliers: the LP's are kept
    assert check_topk(problem, result.psi, mu=uniform).gap == plain.gap
    assert check_topk(problem, result.psi, mu=uniform).multiplier_source == "kkt-lp"


@pytest.mark.parametrize(("mu", "message"), [(np.zeros((2, 3)), "not all zero"), (-np.ones((2, 3)), "nonnegative"),
                                              (np.ones((3, 2)), "shape"), (np.full((2, 3), np.nan), "finite")])
def test_bad_multipliers_are_refused(mu, message):
    problem = TopKProblem([0.51, 0.5, 0, -0.01, -0.092], 2, variance=0.25)
    with pytest.raises(InvalidArgumentError, match=f"'mu' parameter of check_topk.*{message}"):
        check_topk(problem, np.full(5, 0.2), mu=mu)
