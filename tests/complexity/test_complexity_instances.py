"""The papers' standard instances (allocopt.testing.bandit_instances) against the papers' definitions."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt.testing import bandit_instances


def test_nsar_setups_follow_section_four_a():
    # Shahrampour and Tarokh (2017), Section IV.A with K = 50, M = 4 (x:y are arms x..y, 1-based)
    setup_3 = bandit_instances.nsar_setup(3, 4)
    assert setup_3.shape == (50,)
    np.testing.assert_array_equal(setup_3[:4], 0.7)
    np.testing.assert_array_equal(setup_3[4:8], 0.66)
    np.testing.assert_array_equal(setup_3[8:12], 0.62)
    np.testing.assert_array_equal(setup_3[12:], 0.5)
    setup_6 = bandit_instances.nsar_setup(6, 4)
    assert list(setup_6[:6]) == [0.7, 0.7, 0.7, 0.7, 0.68, 0.5] and np.all(setup_6[5:] == 0.5)
    # setup 4: Delta_i = 0.6 (i - 1)/(K - 1), i = 2..K
    setup_4 = bandit_instances.nsar_setup(4, 2)
    np.testing.assert_allclose(setup_4[0] - setup_4, 0.6 * np.arange(50) / 49, atol=1e-15)


def test_nsar_setup_five_is_reproducible_beta_five_five():
    first = bandit_instances.nsar_setup(5, 2, rng=7)
    np.testing.assert_array_equal(first, bandit_instances.nsar_setup(5, 2, rng=7))
    assert np.all((first > 0) & (first < 1))
    # Beta(5, 5) has mean 1/2 and variance 25/(100 * 11) = 1/44; 20000 draws: the sample mean is within
    # 5 standard errors (5 sqrt(1/44/20000) = 0.0053) of 1/2
    draws = bandit_instances.nsar_setup(5, 2, 20000, rng=11)
    assert abs(draws.mean() - 0.5) < 0.0054


def test_jiang_li_qiao_instances():
    # Jiang, Li, Qiao (2017), Section 5.1, 1-sparse: mu_[1..K] = 1/2, the rest 0
    np.testing.assert_array_equal(bandit_instances.one_sparse(6, 3), [0.5, 0.5, 0.5, 0.0, 0.0, 0.0])
    # alpha-Exponential: mu_[K] = (N - K)/N, mu_[N] = 0, decreasing
    theta = bandit_instances.alpha_exponential(100, 50, 0.3)
    assert theta[49] == pytest.approx(0.5) and theta[-1] == pytest.approx(0.0, abs=1e-15)
    assert np.all(np.diff(theta) < 0)
    assert theta[0] == pytest.approx(0.5 + 0.5 * (49 / 50) ** 0.3, rel=1e-14)
    # Section 5.2, lil-Exponential: mu_[1] = 1, mu_[i] = 1 - ((i - 1)/N)^alpha
    np.testing.assert_allclose(bandit_instances.lil_exponential(5, 0.6), 1 - (np.arange(5) / 5) ** 0.6, rtol=1e-15)


def test_chen_chen_zhang_zhou_instances():
    np.testing.assert_array_equal(bandit_instances.two_group(5, 2), [0.7, 0.7, 0.3, 0.3, 0.3])
    np.testing.assert_allclose(bandit_instances.uniform(1000)[[0, 99, 999]], [0.999, 0.9, 0.0], atol=1e-15)
    # SYNTHETIC-p: the boundary 1 - K/n is arm K's mean for every p; p > 1 pulls the other arms toward it
    for p in (0.5, 6.0):
        theta = bandit_instances.synthetic_p(1000, 250, p)
        assert theta[249] == pytest.approx(0.75) and theta[-1] == pytest.approx(0.0, abs=1e-15)
    near = np.abs(bandit_instances.synthetic_p(1000, 250, 6.0) - 0.75)
    far = np.abs(bandit_instances.synthetic_p(1000, 250, 0.5) - 0.75)
    assert np.all(near <= far + 1e-15)


def test_standard_instances_cover_the_experiments():
    instances = bandit_instances.standard_instances()
    names = {instance.name for instance in instances}
    assert {f"shahrampour2017-setup{s}-M{m}" for s in range(1, 7) for m in (2, 4)} <= names
    assert {f"chen2017-{label}-K{k}" for label in ("twogroup", "uniform", "synthetic-0.5", "synthetic-6")
            for k in (100, 250, 500)} <= names
    assert {"jiang2017-1-sparse-K2-N100", "jiang2017-0.3-exponential-K50-N100",
            "jiang2017-lil-exponential-0.6-N1000"} <= names
    assert len(names) == len(instances)
    for instance in instances:
        assert instance.source and len(instance.parameters["theta"]) >= 2
    # setup 5 is drawn from the rng: same seed, same instance
    again = bandit_instances.standard_instances()
    assert [item.parameters for item in instances] == [item.parameters for item in again]
