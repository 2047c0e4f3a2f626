"""OptMAI (Zhou, Chen, Li 2014). The schedule is recomputed in the tests from its definition with mpmath at 50
digits; decisions are checked on hand-made states whose gaps are worked out in the comments (means in sixteenths,
so that every difference is exact)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import OPTMAI_BETA, OptMAI, identify, identify_fixed_budget, optmai_rounds
from allocopt.algorithms.engine.protocol import RuleContext, RunView
from allocopt.cli import main
from allocopt.complexity import aggregate_regret
from allocopt.exceptions import AllocoptError
from allocopt.families import get_family
from allocopt.testing.kernels import compiled_select


def _schedule(n_arms, k, budget):
    """The definition: a quarter (floor) removed per round, Quantile-Elimination while |S| > 4K, then at least one
    arm per Accept-Reject round; round r pulls floor((1 - beta) beta^r Q / |S_r|), beta = (3/4) e^0.2."""
    mpmath.mp.dps = 50
    beta = mpmath.mpf(3) / 4 * mpmath.exp(mpmath.mpf("0.2"))
    sizes, quantile, size = [], 0, n_arms
    while size > 0:
        sizes.append(size)
        if size > 4 * k and quantile == len(sizes) - 1:
            quantile += 1
            size -= size // 4
        else:
            size -= max(1, size // 4)
    pulls = [int(mpmath.floor((1 - beta) * beta**r * budget / size)) for r, size in enumerate(sizes)]
    return sizes, pulls, quantile


@pytest.mark.parametrize("n_arms, k, budget", [(20, 2, 2000), (1000, 100, 200_000), (1000, 250, 5000),
                                               (1000, 500, 10**6), (5, 4, 5), (2, 1, 7)])
def test_schedule_matches_the_definition_and_fits_in_the_budget(n_arms, k, budget):
    sizes, pulls, quantile = _schedule(n_arms, k, budget)
    rounds = optmai_rounds(n_arms, k, budget)
    assert rounds.sizes.tolist() == sizes and rounds.pulls.tolist() == pulls
    assert rounds.quantile_rounds == quantile
    assert rounds.targets.tolist() == np.cumsum(pulls).tolist()
    # the arms each round removes, by the definition: a quarter, at least one in Accept-Reject
    assert rounds.removed.tolist() == [size // 4 if r < quantile else max(1, size // 4) for r, size in enumerate(sizes)]
    # computed once per (n, K, Q, beta): the same read-only schedule at every call
    assert optmai_rounds(n_arms, k, budget) is rounds and not rounds.targets.flags.writeable
    # the shares sum to Q (1 - beta^R) < Q
    assert int((rounds.sizes * rounds.pulls).sum()) <= budget
    assert OPTMAI_BETA == pytest.approx(float(mpmath.mpf(3) / 4 * mpmath.exp(mpmath.mpf("0.2"))), rel=1e-15)


def _one_round(n_arms, k, budget, means_times_16, priority):
    """A hand-made state where every arm has the 16 pulls of round 0 (the budget is chosen so that round 0's
    pulls are 16, checked against the definition), decided by the scalar and the batched forms."""
    assert _schedule(n_arms, k, budget)[1][0] == 16
    rule = OptMAI()
    context = RuleContext(n_arms, k, get_family("bernoulli"), np.ones(n_arms), budget=budget)
    counts = np.full(n_arms, 16)
    sums = np.asarray(means_times_16, dtype=float)
    view = RunView(16 * n_arms, counts, sums, sums / counts, np.nan, None, None, -1, -1)
    state = {name: values[0] for name, values in rule.init_state(context, 1).items()}
    state["priority"][:] = priority
    action = rule.select(context, view, state, np.array([0.5]))
    fresh = {name: values[0] for name, values in rule.init_state(context, 1).items()}
    fresh["priority"][:] = priority
    batch_state = {name: values[None].copy() for name, values in fresh.items()}
    _, _, compiled_counts = compiled_select(rule, context, view, batch_state, np.array([0.5]))
    assert np.array_equal(compiled_counts, action.counts)
    assert np.array_equal(batch_state["active"][0], state["active"])
    assert np.array_equal(batch_state["accepted"][0], state["accepted"])
    return state, action, _schedule(n_arms, k, budget)[1]


def test_quantile_elimination_discards_the_lowest_quarter():
    # n = 9 > 4K = 8: round 0 is Quantile-Elimination; floor(9/4) = 2 arms of lowest mean are discarded: arms 4
    # (1/16) and 7 (2/16); none is accepted; the 7 others are brought to round 1's cumulative target
    state, action, pulls = _one_round(9, 2, 1720, [15, 9, 12, 4, 1, 8, 6, 2, 11], np.arange(9.0))
    assert state["active"].tolist() == [True, True, True, True, False, True, True, False, True]
    assert not state["accepted"].any()
    assert action.counts.tolist() == [pulls[1] if arm not in (4, 7) else 0 for arm in range(9)]


def test_quantile_elimination_breaks_ties_by_the_runs_random_order():
    # arms 3 and 6 share the lowest mean 2/16 (arm 7 is next at 4/16): floor(9/4) = 2 discarded, both of them;
    # with arms 3, 6 and 8 tied at 2/16, the one the run's order ranks first (arm 8, priority 0) stays
    state, _, _ = _one_round(9, 2, 1720, [15, 9, 12, 2, 10, 8, 2, 4, 11], np.arange(9.0))
    assert state["active"].tolist() == [True, True, True, False, True, True, False, True, True]
    state, _, _ = _one_round(9, 2, 1720, [15, 9, 12, 2, 10, 8, 2, 4, 2],
                             np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 0.0]))
    assert state["active"].tolist() == [True, True, True, False, True, True, False, True, True]


def test_accept_reject_removes_the_quarter_of_largest_gaps():
    # n = 8 <= 4K = 8: round 0 is Accept-Reject, removing max(1, floor(8/4)) = 2 arms. Means (x16) 15, 10, 9, 8, 7,
    # 6, 5, 1 with m = 2: sigma(3) = 9, sigma(2) = 10; gaps 15-9 = 6, 10-9 = 1, 10-9 = 1, 2, 3, 4, 5, 10-1 = 9:
    # arms 7 (9, not in the top 2: rejected) and 0 (6, in the top 2: accepted)
    state, action, pulls = _one_round(8, 2, 1530, [15, 10, 9, 8, 7, 6, 5, 1], np.arange(8.0))
    assert state["accepted"].tolist() == [True] + [False] * 7
    assert state["active"].tolist() == [False] + [True] * 6 + [False]
    assert action.counts.tolist() == [0] + [pulls[1]] * 6 + [0]


def test_accept_reject_accepts_every_removed_arm_of_the_top():
    # means (x16) 15, 14, 3, 3, 2, 2, 2, 2, m = 2: sigma(3) = 3, sigma(2) = 14; gaps 15-3 = 12, 14-3 = 11, 14-3 = 11,
    # 11, and 14-2 = 12 for arms 4-7: five arms tie at 12 (0, 4, 5, 6, 7); the run's order (priorities below) puts
    # arms 4 and 5 first: both removed, not in the top 2: rejected
    priority = np.array([5.0, 6.0, 7.0, 4.0, 0.0, 1.0, 2.0, 3.0])
    state, _, _ = _one_round(8, 2, 1530, [15, 14, 3, 3, 2, 2, 2, 2], priority)
    assert not state["accepted"].any()
    assert state["active"].tolist() == [True, True, True, True, False, False, True, True]
    # with arm 0 first in the order, it is removed (gap 12) and accepted, with arm 4
    priority = np.array([0.0, 6.0, 7.0, 5.0, 1.0, 2.0, 3.0, 4.0])
    state, _, _ = _one_round(8, 2, 1530, [15, 14, 3, 3, 2, 2, 2, 2], priority)
    assert state["accepted"].tolist() == [True] + [False] * 7
    assert state["active"].tolist() == [False, True, True, True, False, True, True, True]


PROBLEMS = {
    "bernoulli-quantile": TopKProblem(np.linspace(0.9, 0.1, 30), k=3, family="bernoulli"),
    "bernoulli-k1": TopKProblem([0.8, 0.7, 0.4, 0.3, 0.2, 0.2], k=1, family="bernoulli"),
    "gaussian-k-1": TopKProblem([1.0, 0.8, 0.5, 0.3, 0.0, -0.2], k=5, variance=[0.25, 0.5, 0.3, 1.0, 0.2, 0.4]),
    "poisson": TopKProblem([3.0, 2.5, 1.0, 0.8, 0.3, 0.2], k=2, family="poisson"),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_scalar_and_batched_runs_agree(name):
    problem = PROBLEMS[name]
    budgets = [problem.n_arms * 3, 211, 900]
    batched = identify_fixed_budget(problem, OptMAI(), budgets, n_runs=7, rng=5, chunk_size=4)
    scalar = identify_fixed_budget(problem, OptMAI(), budgets, n_runs=7, rng=5, chunk_size=3, batched=False)
    assert np.array_equal(batched.recommendations, scalar.recommendations)
    assert np.array_equal(batched.pulls, scalar.pulls)
    assert np.all(batched.pulls.sum(axis=1) == max(budgets))


def test_every_arm_has_its_round_0_pulls_and_the_budget_is_spent():
    # n = 30, K = 3, Q = 6000: round 0 gives every arm floor((1 - beta) Q / 30) pulls (the definition above); the
    # budget the rounds leave is spent in one block, so the pulls sum to Q
    problem = PROBLEMS["bernoulli-quantile"]
    first = _schedule(30, 3, 6000)[1][0]
    result = identify_fixed_budget(problem, OptMAI(), [6000], n_runs=5, rng=1)
    assert np.all(result.pulls.sum(axis=1) == 6000)
    assert np.all(result.pulls >= first)


def test_optmai_finds_a_set_of_small_aggregate_regret():
    # regret of the recommended set against the top-3 means, by allocopt.complexity.aggregate_regret (the
    # definition: mean of the top-K means minus the mean of the chosen ones); an easy instance and a large budget
    problem = TopKProblem(np.r_[[0.9, 0.88, 0.86], np.linspace(0.4, 0.05, 17)], k=3, family="bernoulli")
    result = identify_fixed_budget(problem, OptMAI(), [20_000], n_runs=20, rng=3)
    regret = np.asarray(aggregate_regret(problem.theta, result.recommendations[:, 0]))
    assert regret.max() <= 0.02 + 1e-12


def test_bad_input_is_named():
    for beta in (0.0, 1.0, 1.5, float("nan")):
        with pytest.raises(AllocoptError, match="'beta' parameter of OptMAI"):
            OptMAI(beta=beta)
    with pytest.raises(AllocoptError, match="'beta' parameter of optmai_rounds"):
        optmai_rounds(10, 2, 100, beta=-0.5)
    with pytest.raises(AllocoptError, match="'k' parameter of optmai_rounds"):
        optmai_rounds(10, 10, 100)
    with pytest.raises(AllocoptError, match="'budget' parameter of optmai_rounds.*>= n = 10"):
        optmai_rounds(10, 2, 9)
    with pytest.raises(AllocoptError, match="fixed-budget rule"):
        identify(PROBLEMS["poisson"], "optmai", delta=0.1, n_runs=2, rng=0)


def test_cli_runs_optmai_in_the_fixed_budget_setting(capsys):
    code = main(["identify", "--theta", "0.9,0.8,0.3,0.2,0.1", "--k", "2", "--family", "bernoulli", "--policy",
                 "optmai", "--budget", "100,400", "--runs", "20", "--seed", "1"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("optmai: 20 runs, fixed budget") and "400" in out
