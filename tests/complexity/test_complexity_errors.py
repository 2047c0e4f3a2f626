"""Bad input gets an error that names the function, the argument, the requirement and the value received."""

from __future__ import annotations


import numpy as np
import pytest

from allocopt import complexity
from allocopt.exceptions import InvalidArgumentError, InvalidInstanceError
from allocopt.testing import bandit_instances

FOUR = [0.9, 0.6, 0.4, 0.1]

BAD_CALLS = [
    # k (or m) out of range
    (lambda: complexity.gaps(FOUR, 0), r"The 'm' parameter of gaps must be an integer in 1..K-1 = 1..3 .*Got 0"),
    (lambda: complexity.h1(FOUR, 4), r"The 'm' parameter of h1 must be an integer in 1..K-1 = 1..3 .*Got 4"),
    (lambda: complexity.h_t_eps(FOUR, 4, 0.1), r"The 'k' parameter of h_t_eps must be an integer in 1..K-1"),
    (lambda: complexity.h_0_eps(FOUR, 1.5, 0.1), r"The 'k' parameter of h_0_eps must be an integer .*Got 1.5"),
    (lambda: complexity.top_k_decision_class(4, 0), r"The 'k' parameter of top_k_decision_class"),
    (lambda: complexity.zhou_sample_complexity(10, 10, 0.1, 0.1), r"The 'k' parameter of zhou_sample_complexity"),
    # eps <= 0
    (lambda: complexity.h_t_eps(FOUR, 2, 0.0),
     r"The 'eps' parameter of h_t_eps must be a finite number > 0\. Got 0\.0"),
    (lambda: complexity.h_0_eps(FOUR, 2, -0.1), r"The 'eps' parameter of h_0_eps must be a finite number > 0"),
    (lambda: complexity.c_eps(0.0), r"The 'eps' parameter of c_eps must be a finite number > 0"),
    (lambda: complexity.adaptive_topk_sample_complexity(FOUR, 2, 1.0, 0.1),
     r"The 'eps' parameter of adaptive_topk_sample_complexity must be a tolerance in the open interval \(0, 1\)"),
    # p <= 0
    (lambda: complexity.h_p(FOUR, 0.0, 2), r"The 'p' parameter of h_p must be a finite number > 0\. Got 0\.0"),
    (lambda: complexity.c_p(4, -1), r"The 'p' parameter of c_p must be a finite number > 0\. Got -1"),
    (lambda: complexity.nsar_error_bound(FOUR, 2, 0),
     r"The 'p' parameter of nsar_error_bound must be a finite number > 0"),
    # delta outside (0, 1)
    (lambda: complexity.sar_sample_complexity(FOUR, 2, 0.0),
     r"The 'delta' parameter of sar_sample_complexity must be a probability in the open interval \(0, 1\)"),
    (lambda: complexity.nsar_error_bound(FOUR, 2, 1.0).required_budget(1.5),
     r"The 'delta' parameter of ErrorBound.required_budget"),
    (lambda: complexity.nsar_error_bound(FOUR, 2, 1.0).error_probability(-1.0),
     r"The 'budget' parameter of ErrorBound.error_probability must be a number >= 0"),
    # means
    (lambda: complexity.h1([0.5], 1), r"The 'means' parameter of h1 must be .* at least 2 arms"),
    (lambda: complexity.h1([0.5, np.nan, 0.2], 1),
     r"The 'means' parameter of h1 .* entries at \[\[1\]\] are not finite"),
    (lambda: complexity.h2("0.5,0.4", 1), r"The 'means' parameter of h2 must be"),
    (lambda: complexity.aggregate_regret([[0.5, 0.4]], [0]),
     r"The 'means' parameter of aggregate_regret must be a one-dim"),
    (lambda: complexity.logbar(1), r"The 'n_arms' parameter of logbar must be an integer >= 2\. Got 1"),
    # selections and decision classes
    (lambda: complexity.aggregate_regret(FOUR, [0, 0]), r"The 'selected' parameter .* some selection repeats an arm"),
    (lambda: complexity.aggregate_regret(FOUR, [0, 7]), r"The 'selected' parameter .* some indices are out of range"),
    (lambda: complexity.aggregate_regret(FOUR, [0.5]), r"The 'selected' parameter of aggregate_regret must be a set"),
    (lambda: complexity.aggregate_regret(FOUR, [True, False, True, False]), r"not a boolean mask\. Got \[True"),
    (lambda: complexity.cpe_gaps(FOUR, []), r"The 'decision_class' parameter of cpe_gaps must be a non-empty"),
    (lambda: complexity.cpe_gaps(FOUR, [(0, 9)]),
     r"The 'decision_class\[0\]' parameter of cpe_gaps must be an integer in 0..3"),
    (lambda: complexity.cpe_gaps(FOUR, [(0, 0)]), r"entry 0 repeats an arm"),
    # LIL radius
    (lambda: complexity.lil_radius(0, 0.01, 0.5, 1.0), r"The 't' parameter of lil_radius must be a number >= 1"),
    (lambda: complexity.lil_radius(5, 0.01, 0.5, 0.0),
     r"The 'sigma' parameter of lil_radius must be a finite number > 0"),
    (lambda: complexity.lil_radius(5, 0.01, 0.5, 1.0, form="heuristic"),
     r"The 'form' parameter of lil_radius must be one of 'paper', 'experiments'\. Got 'heuristic'"),
    # instance generators
    (lambda: bandit_instances.nsar_setup(7, 2), r"The 'setup' parameter of nsar_setup must be an integer in 1..6"),
    (lambda: bandit_instances.nsar_setup(3, 20),
     r"The 'm' parameter of nsar_setup must be an integer in 1..16 \(setup 3"),
]


@pytest.mark.parametrize(("call", "message"), BAD_CALLS)
def test_bad_input_message(call, message):
    with pytest.raises(InvalidArgumentError, match=message):
        call()


TIED = [0.9, 0.5, 0.5, 0.1]  # arms 1 and 2 tie at the top-2 boundary
TIED_AT_TOP = [0.5, 0.9, 0.9]  # arms 1 and 2 tie for the best arm

TIE_CALLS = [
    (lambda: complexity.h1(TIED, 2), "h1", "a unique top-2 set", "[1, 2]"),
    (lambda: complexity.h2(TIED, 2), "h2", "a unique top-2 set", "[1, 2]"),
    (lambda: complexity.h_p(TIED, 0.5, 2), "h_p", "a unique top-2 set", "[1, 2]"),
    (lambda: complexity.h1_bai(TIED_AT_TOP), "h1_bai", "a unique best arm", "[1, 2]"),
    (lambda: complexity.successive_rejects_bound(TIED_AT_TOP),
     "successive_rejects_bound", "a unique best arm", "[1, 2]"),
    (lambda: complexity.sar_sample_complexity(TIED, 2, 0.1), "sar_sample_complexity", "a unique top-2 set", "[1, 2]"),
]


@pytest.mark.parametrize(("call", "function", "requirement", "arms"), TIE_CALLS)
def test_ties_where_a_strict_order_is_needed(call, function, requirement, arms):
    with pytest.raises(InvalidInstanceError) as error:
        call()
    text = str(error.value)
    assert f"parameter of {function} must have {requirement}" in text
    assert f"arms {arms} tie at the boundary" in text
    assert "Got [" in text


def test_errors_name_the_function_called():
    # measures built on other measures validate in the name of the function the user called
    with pytest.raises(InvalidArgumentError, match=r"'k' parameter of improved_topk_sample_complexity"):
        complexity.improved_topk_sample_complexity(FOUR, 9, 0.1, 0.1)
    with pytest.raises(InvalidArgumentError, match=r"'means' parameter of clucb_pac_sample_complexity"):
        complexity.clucb_pac_sample_complexity([1.0], 1, 0.1, 0.1)
    with pytest.raises(InvalidInstanceError, match=r"'means' parameter of nsar_sample_complexity"):
        complexity.nsar_sample_complexity(TIED, 2, 0.1, 0.7)
