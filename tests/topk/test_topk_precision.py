"""Precision of the pair costs C_ij, B_ij and their derivatives over the whole valid domain of every family.

Every reference value is an independent mpmath evaluation of the definitions (tests/topk/topk_reference.py:
the closed-form infimum points of Wang, Yang, You (2022), problems (5) and (11), and the envelope theorem),
at 120 working digits, on a grid with Bernoulli means within 1e-15 of 0 and 1, Poisson and exponential means
over 300 decades, nearly tied means and share ratios from 1e-13 to 1e13 (tests/topk/precision_grid.py).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.families import get_family
from allocopt.topk.pairs import pair_terms

from precision_grid import grid
from topk_reference import mp_hessian, mp_pair

FAMILIES = ("gaussian", "bernoulli", "poisson", "exponential")
KINDS = ("confidence", "budget")
TOLERANCE = 1e-13


def _relative_errors(values: np.ndarray, references: list) -> np.ndarray:
    errors = []
    for value, reference in zip(values, references):
        if reference == 0:
            errors.append(abs(value))
        else:
            errors.append(float(abs((mpmath.mpf(float(value)) - reference) / reference)))
    return np.array(errors)


@pytest.mark.parametrize("family_name", FAMILIES)
@pytest.mark.parametrize("kind", KINDS)
def test_pair_costs_and_derivatives_match_mpmath_on_the_extreme_grid(family_name, kind):
    family = get_family(family_name)
    theta_top, theta_bottom, w_top, w_bottom = grid(family_name)
    terms = pair_terms(family, kind, theta_top, theta_bottom, family.unit_natural(theta_top),
                       family.unit_natural(theta_bottom), w_top, w_bottom, second_order=True)
    first = [mp_pair(family_name, kind, *arguments) for arguments in zip(theta_top, theta_bottom, w_top, w_bottom)]
    second = [mp_hessian(family_name, kind, *arguments)
              for arguments in zip(theta_top, theta_bottom, w_top, w_bottom)]
    computed = {"cost": terms.cost, "grad_top": terms.grad_top, "grad_bottom": terms.grad_bottom,
                "hess_top": terms.hess_top, "hess_cross": terms.hess_cross, "hess_bottom": terms.hess_bottom}
    references = {"cost": [row[0] for row in first], "grad_top": [row[1] for row in first],
                  "grad_bottom": [row[2] for row in first], "hess_top": [row[0] for row in second],
                  "hess_cross": [row[1] for row in second], "hess_bottom": [row[2] for row in second]}
    # the family's stated bound (which the certificate adds to its gaps) must hold too, pair by pair
    stated = np.array([family.pair_error_bound(kind, [top, bottom]) for top, bottom in zip(theta_top, theta_bottom)])
    for name, values in computed.items():
        errors = _relative_errors(values, references[name])
        assert np.all(errors <= stated), f"{family_name} {kind} {name}: above the stated bound"
        worst = int(np.argmax(errors))
        assert errors[worst] <= TOLERANCE, (
            f"{family_name} {kind} {name}: relative error {errors[worst]:.3g} at theta = "
            f"({theta_top[worst]!r}, {theta_bottom[worst]!r}), w = ({w_top[worst]!r}, {w_bottom[worst]!r})")


EXTREME_INSTANCES = [
    ("bernoulli", [1 - 1e-15, 1 - 3e-13, 1 - 2e-9, 0.5, 1e-9, 1e-15], 2),
    ("bernoulli", [0.9999999999984748, 0.9999999999921628], 1),
    ("poisson", [1e150, 1e100, 1.0, 1e-100, 1e-150], 2),
    ("exponential", [1e150, 3e30, 1.0, 2e-30, 1e-150], 3),
]


@pytest.mark.parametrize("family_name, theta, k", EXTREME_INSTANCES)
@pytest.mark.parametrize("kind", KINDS)
def test_problem_costs_and_gradients_match_mpmath_at_extreme_means(family_name, theta, k, kind):
    problem = TopKProblem(theta, k, family_name)
    rng = np.random.default_rng(len(theta) * 7 + k)
    for psi in (np.full(len(theta), 1.0 / len(theta)), rng.dirichlet(0.3 * np.ones(len(theta)))):
        costs = problem.costs(psi, kind)
        grad_top, grad_bottom = problem.gradients(psi, kind)
        for row, i in enumerate(problem.top):
            for col, j in enumerate(problem.bottom):
                cost, reference_top, reference_bottom = mp_pair(family_name, kind, theta[i], theta[j], psi[i], psi[j])
                for value, reference in ((costs[row, col], cost), (grad_top[row, col], reference_top),
                                         (grad_bottom[row, col], reference_bottom)):
                    assert abs(mpmath.mpf(float(value)) - reference) <= TOLERANCE * abs(reference)


# Reproductions of wrong answers once reported as "optimal" at extreme means (all with a relative gap of about
# 1e-14): R1/R6 had value + gap below Gamma*, R2 a suboptimal psi, R3/R4 a value above Gamma(psi), R5 a value
# above Gamma*. Each is judged against Gamma* and Gamma(psi) computed in the test, in mpmath (the KKT system
# of Theorem 3.5 solved by Newton's method at 120 working digits, tests/topk/topk_reference.py).
REPRODUCTIONS = {
    "R1": ("bernoulli", "budget", [0.9999999999984748, 0.9999999999921628], 1),
    "R2": ("bernoulli", "budget", [0.9999999999949001, 0.9999999968818746, 0.999999999998741], 1),
    "R3": ("bernoulli", "confidence", [0.9999999999867103, 0.9999999999986334, 4.151391900886725e-11], 1),
    "R4": ("poisson", "confidence", [1.0724225140232098e-05, 2.877927215292132e-06, 37915.51741410235], 2),
    "R5": ("exponential", "confidence", [74494.90027465885, 2.426580263218037e-06], 1),
    "R6": ("exponential", "budget", [716508.1215634854, 1.3032171519766788e-05], 1),
}


def assert_certified_answer_is_right(result, family_name, kind, theta, k):
    """The judgement of the precision tests: an "optimal" result must bracket the 50-digit Gamma* with
    [value, value + gap] and have value <= Gamma(psi), both up to the instance's stated evaluation error (the
    value is a floating-point evaluation of Gamma(psi)); any result must have value + gap >= Gamma*."""
    from topk_reference import mp_gamma, mp_star_optimum

    error = result.problem.evaluation_error(kind)
    optimum, _ = mp_star_optimum(family_name, kind, theta, k, seed=result.psi)
    at_psi = mp_gamma(family_name, kind, theta, k, result.psi)
    value, gap = mpmath.mpf(result.value), mpmath.mpf(result.gap)
    context = f"{family_name} {kind} theta={theta!r} k={k}: status {result.status}, value {result.value!r}, " \
              f"gap {result.gap!r}, Gamma* {mpmath.nstr(optimum, 20)}, Gamma(psi) {mpmath.nstr(at_psi, 20)}"
    assert value + gap >= optimum, context
    if result.status == "optimal":
        assert value <= at_psi * (1 + error), context
        assert value <= optimum * (1 + error), context
        assert gap <= 1e-9 * value, context  # the default tolerance of the solvers


@pytest.mark.parametrize("case", sorted(REPRODUCTIONS))
def test_reproductions_at_extreme_means_are_solved_and_certified_honestly(case):
    from allocopt import solve_topk

    family_name, kind, theta, k = REPRODUCTIONS[case]
    result = solve_topk(TopKProblem(theta, k, family_name), kind=kind)
    assert result.status == "optimal", result.message
    assert_certified_answer_is_right(result, family_name, kind, theta, k)
