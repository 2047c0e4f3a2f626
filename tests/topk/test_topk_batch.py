"""solve_topk_batch: every row equals the single exact solve, invalid rows are marked, not raised."""

import json

import numpy as np
import pytest

from allocopt import InvalidArgumentError, TopKProblem, solve_topk, solve_topk_batch

# random means per family (inside each family's domain); the reference for every row is solve_topk on that row
FAMILY_MEANS = {
    "gaussian": lambda rng, shape: rng.normal(0.0, 1.0, shape),
    "bernoulli": lambda rng, shape: rng.uniform(0.05, 0.95, shape),
    "poisson": lambda rng, shape: rng.uniform(0.2, 5.0, shape),
    "exponential": lambda rng, shape: rng.uniform(0.2, 5.0, shape),
}


def _rows(rng, family, n_rows, n_arms, k):
    theta = FAMILY_MEANS[family](rng, (n_rows, n_arms))
    order = np.argsort(-theta, axis=1)
    if k >= 2:  # two tied top arms (the best two)
        theta[1, order[1, 1]] = theta[1, order[1, 0]]
    if n_arms - k >= 2:  # two tied bottom arms (the worst two)
        theta[2, order[2, -1]] = theta[2, order[2, -2]]
    # a near-tie at the boundary: the (k+1)-th mean just below the k-th
    theta[3, order[3, k]] = theta[3, order[3, k - 1]] * (1.0 - 1e-6)
    return theta


def _assert_rows_match(batch, theta, k, family, kind, variance=1.0):
    for row in range(theta.shape[0]):
        problem = TopKProblem(theta[row], k, family=family, **({"variance": variance} if family == "gaussian" else {}))
        single = solve_topk(problem, kind=kind)
        assert batch.status[row] == single.status
        np.testing.assert_allclose(batch.psi[row], single.psi, rtol=0, atol=1e-12)
        assert abs(batch.value[row] - single.value) <= 1e-12
        assert abs(batch.upper_bound[row] - single.upper_bound) <= 1e-12
        assert abs(batch.gap[row] - single.gap) <= 1e-12


@pytest.mark.parametrize("family", sorted(FAMILY_MEANS))
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("n_arms, k", [(6, 1), (6, 3), (7, 6)])
def test_batch_equals_single_solves(family, kind, n_arms, k):
    rng = np.random.default_rng(hash((family, kind, n_arms, k)) % 2**32)
    theta = _rows(rng, family, 8, n_arms, k)
    batch = solve_topk_batch(theta, k, family=family, kind=kind)
    assert batch.psi.shape == (8, n_arms) and batch.value.shape == (8,)
    _assert_rows_match(batch, theta, k, family, kind)
    assert np.all(batch.success)
    np.testing.assert_allclose(batch.psi.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_gaussian_batch_many_rows_and_heteroscedastic():
    rng = np.random.default_rng(7)
    variance = rng.uniform(0.1, 2.0, 12)
    theta = rng.normal(0.0, 1.0, (300, 12))
    theta[:100] = 0.5 + 0.01 * theta[:100]  # tight clusters: many rows whose optimum is not a double star
    theta[:100, :6] += 0.05
    batch = solve_topk_batch(theta, 6, variance=variance)
    assert batch.solved_individually.any() and not batch.solved_individually.all()
    for row in range(0, 300, 7):
        single = solve_topk(TopKProblem(theta[row], 6, variance=variance))
        np.testing.assert_allclose(batch.psi[row], single.psi, rtol=0, atol=1e-12)
        assert abs(batch.value[row] - single.value) <= 1e-12
        assert batch.status[row] == single.status == "optimal"


def test_example_one_row():
    # Wang, Yang, You (2022), Example 1: psi* ~ (0.2185, 0.2371, 0.2185, 0.2026, 0.1232), Gamma* ~ 0.0568
    batch = solve_topk_batch([[0.51, 0.5, 0.0, -0.01, -0.092]], 2, variance=0.25)
    np.testing.assert_allclose(batch.psi[0], [0.2185, 0.2371, 0.2185, 0.2026, 0.1232], atol=5e-5)
    assert abs(batch.value[0] - 0.0568) < 5e-5


def test_invalid_rows_are_marked_not_raised():
    theta = np.array([[0.9, 0.5, 0.5, 0.1], [0.9, 0.6, 0.4, 0.1], [1.0, 0.6, 0.4, 0.1]])
    batch = solve_topk_batch(theta, 2, family="bernoulli")
    assert batch.status.tolist() == ["invalid_instance", "optimal", "invalid_instance"]
    assert np.all(np.isnan(batch.psi[[0, 2]])) and np.isnan(batch.value[0])
    assert "tied" in batch.messages[0] and "domain" in batch.messages[2]
    assert batch.messages[1] == ""  # a row of the compiled double star carries no message
    text = json.dumps(batch.to_dict(), allow_nan=False)
    assert '"NaN"' in text


def test_warm_start_gives_the_same_answer():
    rng = np.random.default_rng(3)
    theta = rng.normal(0.0, 1.0, (50, 10))
    cold = solve_topk_batch(theta, 3)
    warm = solve_topk_batch(theta + 1e-3 * rng.normal(size=theta.shape), 3)
    again = solve_topk_batch(theta, 3, warm_start=warm.psi)
    np.testing.assert_allclose(again.psi, cold.psi, rtol=0, atol=1e-13)


@pytest.mark.parametrize("arguments, name", [
    (dict(theta=[0.1, 0.2, 0.3], k=1), "theta"),
    (dict(theta=[[0.1, 0.2, 0.3]], k=3), "k"),
    (dict(theta=[[0.1, np.nan, 0.3]], k=1), "theta"),
    (dict(theta=[[0.1, 0.2, 0.3]], k=1, kind="fast"), "kind"),
    (dict(theta=[[0.1, 0.2, 0.3]], k=1, warm_start=np.ones((2, 3))), "warm_start"),
])
def test_bad_arguments_raise(arguments, name):
    with pytest.raises(InvalidArgumentError, match=f"'{name}' parameter of solve_topk_batch"):
        solve_topk_batch(**arguments)


# means near the ends of each family's domain (an independent choice: within 1e-3 of a bound, or 30x apart)
DOMAIN_ENDS = {
    "bernoulli": lambda rng, shape: np.where(rng.uniform(size=shape) < 0.5, rng.uniform(1e-3, 0.02, shape),
                                             rng.uniform(0.98, 0.999, shape)),
    "poisson": lambda rng, shape: rng.uniform(1e-3, 3e-2, shape),
    "exponential": lambda rng, shape: np.exp(rng.uniform(np.log(1e-3), np.log(30.0), shape)),
}


@pytest.mark.parametrize("family", ["bernoulli", "poisson", "exponential"])
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("n_arms, k", [(20, 1), (20, 10), (20, 19), (5, 2)])
def test_compiled_rows_are_the_single_solves_bit_for_bit(family, kind, n_arms, k):
    # the non-Gaussian rows go through the exact solver's compiled double star in one compiled call: every row
    # it certifies is the single solve's answer bit for bit, the others are solved one by one; ties, near-ties
    # and means near the ends of the domain among them
    rng = np.random.default_rng(sum(map(ord, family + kind)) + 100 * n_arms + k)
    theta = np.concatenate([_rows(rng, family, 30, n_arms, k), DOMAIN_ENDS[family](rng, (10, n_arms))])
    batch = solve_topk_batch(theta, k, family=family, kind=kind)
    assert (~batch.solved_individually).sum() >= 30  # most rows take the compiled path
    for row in range(theta.shape[0]):
        single = solve_topk(TopKProblem(theta[row], k, family=family), kind=kind)
        assert batch.status[row] == single.status
        if not batch.solved_individually[row] and np.unique(theta[row]).size == n_arms:
            assert single.message.startswith("exact: double star (compiled)")
            assert np.array_equal(batch.psi[row], single.psi)
            assert batch.value[row] == single.value and batch.gap[row] == single.gap
            assert batch.upper_bound[row] == single.upper_bound
        np.testing.assert_allclose(batch.psi[row], single.psi, rtol=0, atol=1e-12)
        assert abs(batch.value[row] - single.value) <= 1e-12


def test_compiled_rows_mark_invalid_empirical_means():
    # empirical Bernoulli means of 0 or 1 and a tie at the top-k boundary: invalid, the other rows solved
    theta = np.array([[0.9, 0.7, 0.5, 0.3, 0.1], [1.0, 0.7, 0.5, 0.3, 0.1], [0.9, 0.7, 0.5, 0.3, 0.0],
                      [0.9, 0.5, 0.5, 0.3, 0.1], [0.8, 0.7, 0.6, 0.3, 0.2]])
    batch = solve_topk_batch(theta, 2, family="bernoulli")
    assert batch.status.tolist() == ["optimal", "invalid_instance", "invalid_instance", "invalid_instance",
                                     "optimal"]
    assert not batch.solved_individually.any()
    for row in (0, 4):
        assert np.array_equal(batch.psi[row], solve_topk(TopKProblem(theta[row], 2, family="bernoulli")).psi)
    assert np.all(np.isnan(batch.psi[1:4]))


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("n_arms, k", [(9, 3), (12, 1), (12, 11)])
def test_compiled_rows_with_tied_empirical_means(kind, n_arms, k):
    # empirical Bernoulli means s/n with small n tie often (several groups per row): the compiled double star of
    # the merged groups gives the single solve's answer (reached there by the active set on the same groups)
    rng = np.random.default_rng(n_arms * 10 + k + (kind == "budget"))
    counts = rng.integers(6, 16, (200, n_arms))
    theta = rng.binomial(counts, np.linspace(0.7, 0.3, n_arms)) / counts
    batch = solve_topk_batch(theta, k, family="bernoulli", kind=kind)
    tied = np.array([np.unique(row).size < n_arms for row in theta])
    valid = batch.status != "invalid_instance"
    assert np.sum(tied & valid & ~batch.solved_individually) >= 20  # tied rows solved by the compiled path
    for row in np.flatnonzero(valid).tolist():
        single = solve_topk(TopKProblem(theta[row], k, family="bernoulli"), kind=kind)
        assert batch.status[row] == single.status
        np.testing.assert_allclose(batch.psi[row], single.psi, rtol=0, atol=1e-12)
        assert abs(batch.value[row] - single.value) <= 1e-12
        assert abs(batch.upper_bound[row] - single.upper_bound) <= 1e-12
        assert abs(batch.gap[row] - single.gap) <= 1e-12
    # the rows outside the domain (a mean of 0 or 1) or tied at the boundary are the invalid ones
    ordered = -np.sort(-theta, axis=1)
    expected_invalid = np.any((theta <= 0) | (theta >= 1), axis=1) | (ordered[:, k - 1] == ordered[:, k])
    assert np.array_equal(~valid, expected_invalid)


@pytest.mark.parametrize("heteroscedastic", [False, True])
def test_gaussian_rows_a_pivot_or_two_from_the_double_star(heteroscedastic):
    # noisy linspace means (K = 20, k = 10): a few rows in a hundred have an optimum that is not the double star
    # but the forest the active set reaches in one or two pivots ((i_k, j_1) leaves, then a pair joins the two
    # stars); the batch solves them on those forests together, and each equals the single solve
    rng = np.random.default_rng(0)
    theta = np.linspace(1.0, 0.0, 20) + rng.normal(0.0, 0.05, (3000, 20))
    variance = rng.uniform(0.2, 0.3, 20) if heteroscedastic else 0.25
    batch = solve_topk_batch(theta, 10, variance=variance)
    rows = np.arange(theta.shape[0])
    star = gaussian_double_star_accepted(theta, 10, variance)
    pivoted = rows[~star & ~batch.solved_individually]
    assert pivoted.size >= 5
    for row in pivoted.tolist() + rows[batch.solved_individually].tolist():
        single = solve_topk(TopKProblem(theta[row], 10, variance=variance))
        assert not single.forest.double_star  # the single solve's optimal binding forest is not the double star
        assert batch.status[row] == single.status == "optimal"
        np.testing.assert_allclose(batch.psi[row], single.psi, rtol=0, atol=1e-12)
        assert abs(batch.value[row] - single.value) <= 1e-12
        assert abs(batch.upper_bound[row] - single.upper_bound) <= 1e-12


def gaussian_double_star_accepted(theta, k, variance):
    """Rows whose double star passes its exact check (the closed form on the rows sorted top then bottom)."""
    from allocopt.topk._exact.gaussian_star import gaussian_double_star

    order = np.argsort(-theta, axis=1, kind="stable")
    sorted_theta = np.take_along_axis(theta, order, axis=1)
    sorted_variance = np.broadcast_to(variance, (20,))[order] if np.ndim(variance) else np.array([variance])
    return gaussian_double_star(sorted_theta, sorted_variance, k).accepted
