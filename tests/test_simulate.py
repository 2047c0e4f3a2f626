"""The generic Monte Carlo harness and the binomial confidence intervals."""

from __future__ import annotations

import math

import joblib
import numpy as np
import pytest

import allocopt
from allocopt._rng import replication_generator
from allocopt.exceptions import InvalidArgumentError
from allocopt.simulate import binomial_confidence_interval, chunk_bounds, monte_carlo, paired_mean_difference


def draw_three(generator):
    return generator.standard_normal(3)


def draw_batch(generators, scale=1.0):
    return np.stack([scale * generator.standard_normal(3) for generator in generators])


def test_replication_i_uses_its_own_seed_sequence():
    result = monte_carlo(draw_three, 10, rng=123, chunk_size=3)
    assert result.entropy == 123 and result.n_chunks == 4 and result.outcomes.shape == (10, 3)
    for index in range(10):
        np.testing.assert_array_equal(result.outcomes[index],
                                      replication_generator(123, index).standard_normal(3))


@pytest.mark.parametrize("chunk_size", [1, 4, 25, 100])
def test_outcomes_do_not_depend_on_chunking(chunk_size):
    reference = monte_carlo(draw_three, 25, rng=9, chunk_size=25).outcomes
    np.testing.assert_array_equal(monte_carlo(draw_three, 25, rng=9, chunk_size=chunk_size).outcomes, reference)
    np.testing.assert_array_equal(
        monte_carlo(draw_batch, 25, rng=9, chunk_size=chunk_size, vectorized=True).outcomes, reference)


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_outcomes_do_not_depend_on_the_backend_or_workers(backend):
    reference = monte_carlo(draw_batch, 30, rng=4, chunk_size=30, vectorized=True).outcomes
    with joblib.parallel_config(backend=backend, n_jobs=2):
        parallel = monte_carlo(draw_batch, 30, rng=4, chunk_size=4, vectorized=True, kwargs={"scale": 1.0})
    np.testing.assert_array_equal(parallel.outcomes, reference)


def test_non_array_outcomes_are_kept_as_a_list():
    result = monte_carlo(lambda generator: {"u": float(generator.random())}, 5, rng=1, chunk_size=2)
    assert isinstance(result.outcomes, list) and len(result.outcomes) == 5
    assert result.outcomes[3]["u"] == replication_generator(1, 3).random()


def test_progress_bar_counts_chunks(capsys):
    monte_carlo(draw_three, 6, rng=0, chunk_size=2, progress=True)
    assert "3/3" in capsys.readouterr().err


def test_generator_and_none_give_fresh_entropy():
    generator = np.random.default_rng(0)
    first = monte_carlo(draw_three, 2, rng=generator).entropy
    second = monte_carlo(draw_three, 2, rng=generator).entropy
    assert first != second
    assert monte_carlo(draw_three, 2, rng=np.random.SeedSequence(77)).entropy == 77


def test_chunk_bounds_cover_every_replication_once():
    assert chunk_bounds(10, 4) == [(0, 4), (4, 8), (8, 10)]


def test_bad_arguments():
    with pytest.raises(allocopt.InvalidArgumentError, match="'n_replications' parameter of monte_carlo"):
        monte_carlo(draw_three, 0)
    with pytest.raises(allocopt.InvalidArgumentError, match="'chunk_size' parameter of monte_carlo"):
        monte_carlo(draw_three, 5, chunk_size=0)
    with pytest.raises(allocopt.InvalidArgumentError, match="'replicate' parameter of monte_carlo must be callable"):
        monte_carlo(None, 5)
    with pytest.raises(allocopt.InvalidArgumentError, match="one outcome per generator.*Got '1 outcomes'"):
        monte_carlo(lambda generators: [1], 5, chunk_size=5, vectorized=True)


def test_the_result_is_on_the_shared_core():
    # 7 replications in chunks of 3: chunks (0-2), (3-5), (6), so 3 chunks
    result = monte_carlo(draw_three, 7, rng=5, chunk_size=3)
    assert (result.status, result.success, result.method) == ("completed", True, "monte_carlo")
    assert result.n_chunks == 3 and "7 replications in 3 chunks" in result.message
    with pytest.warns(DeprecationWarning, match="MonteCarloResult.time"):
        assert result.elapsed == result.time


def test_clopper_pearson_closed_forms():
    # With k = 0 the upper end solves (1 - p)^n = alpha / 2; with k = n the lower end solves p^n = alpha / 2.
    low, high = binomial_confidence_interval(0, 50)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 50), rel=1e-10)
    low, high = binomial_confidence_interval(50, 50)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 50), rel=1e-10)


def test_clopper_pearson_is_the_inverted_binomial_test():
    # The ends are where the binomial tail probabilities equal alpha / 2 (computed with scipy.stats.binom).
    from scipy.stats import binom

    low, high = binomial_confidence_interval(7, 40, 0.9)
    assert binom.sf(6, 40, low) == pytest.approx(0.05, rel=1e-8)
    assert binom.cdf(7, 40, high) == pytest.approx(0.05, rel=1e-8)


def test_wilson_interval_formula():
    # Wilson (1927): (k + z^2/2 +- z sqrt(k (n - k) / n + z^2 / 4)) / (n + z^2), z = 1.959964 for 95%.
    z = 1.959963984540054
    k, n = 12, 100
    center, half = k + z * z / 2, z * math.sqrt(k * (n - k) / n + z * z / 4)
    low, high = binomial_confidence_interval(k, n, method="wilson")
    assert low == pytest.approx((center - half) / (n + z * z), rel=1e-12)
    assert high == pytest.approx((center + half) / (n + z * z), rel=1e-12)


def test_interval_arguments():
    with pytest.raises(allocopt.InvalidArgumentError, match="'successes' parameter of binomial_confidence_interval"):
        binomial_confidence_interval(5, 4)
    with pytest.raises(allocopt.InvalidArgumentError, match="'confidence' parameter"):
        binomial_confidence_interval(1, 4, confidence=1.0)
    with pytest.raises(allocopt.InvalidArgumentError, match="'method' parameter"):
        binomial_confidence_interval(1, 4, method="exact")


def test_paired_mean_difference_by_hand():
    # differences 2, 1, 0, 3: mean 3/2, sample variance (1/4 + 1/4 + 9/4 + 9/4) / 3 = 5/3, standard error
    # sqrt(5/3) / sqrt(4)
    paired = paired_mean_difference([3, 5, 4, 6], [1, 4, 4, 3])
    assert paired.mean == 1.5 and paired.n_pairs == 4
    assert paired.standard_error == pytest.approx(math.sqrt(5.0 / 3.0) / 2.0, rel=1e-15)
    low, high = paired.interval(z=2.0)
    assert (low, high) == pytest.approx((1.5 - math.sqrt(5.0 / 3.0), 1.5 + math.sqrt(5.0 / 3.0)), rel=1e-15)


def test_paired_mean_difference_of_error_indicators_and_one_pair():
    # booleans read as 0/1: differences 1, 0, -1, 1, mean 1/4
    paired = paired_mean_difference(np.array([True, False, False, True]), np.array([False, False, True, False]))
    assert paired.mean == 0.25
    single = paired_mean_difference([2.0], [1.0])
    assert single.mean == 1.0 and math.isnan(single.standard_error)


def test_paired_mean_difference_refuses_samples_of_different_lengths():
    with pytest.raises(InvalidArgumentError, match="'second' parameter of paired_mean_difference"):
        paired_mean_difference([1.0, 2.0], [1.0])
