"""Top-two rules for k = 1 (TTTS: Russo 2016; T3C: Shang et al. 2020; TTEI: Qin, Klabjan, Russo 2017) against
their definitions on hand-made states; expected improvements, transportation costs and posterior samples are
computed independently in the tests (mpmath, scipy.stats, math)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from allocopt import TopKProblem
from allocopt.algorithms import T3C, TTEI, TTTS, RuleContext, RunView, identify
from allocopt._numba import compiled_kernels
from allocopt.algorithms.engine.counter_stream import counter_uniforms, stream_key
from allocopt.algorithms.rules.top_two import log_expected_improvement
from allocopt.exceptions import InvalidArgumentError
from allocopt.families import get_family
from allocopt.testing.kernels import compiled_select


def _view(counts, sums):
    return RunView(int(counts.sum()), counts, sums, sums / counts, 0.0, None, None, None, None)


def _gaussian_context(n_arms, variance=0.25):
    return RuleContext(n_arms, 1, get_family("gaussian", variance=variance), np.full(n_arms, variance))


@pytest.mark.parametrize("x", [-1e5, -3000.0, -150.0, -100.0, -99.0, -30.0, -5.0, -1.0001, -1.0, -0.5, 0.0, 2.0, 30.0])
def test_log_expected_improvement_against_mpmath(x):
    with mpmath.workdps(60):
        z = mpmath.mpf(x)
        reference = mpmath.log(z * mpmath.ncdf(z) + mpmath.npdf(z))
    assert float(log_expected_improvement(x)) == pytest.approx(float(reference), rel=1e-12, abs=1e-12)


def _improvement(x):
    """x Phi(x) + phi(x) with scipy (moderate arguments only)."""
    return x * stats.norm.cdf(x) + stats.norm.pdf(x)


@pytest.mark.parametrize("coin", [0.3, 0.7])
def test_ttei_leader_and_challenger_are_the_expected_improvement_maximisers(coin):
    variance = 0.25
    counts = np.array([10, 1, 8, 20])
    means = np.array([0.6, 0.5, 0.55, 0.1])
    scale = np.sqrt(variance / counts)
    leader_values = scale * _improvement((means - means.max()) / scale)
    leader = int(np.argmax(leader_values))
    assert leader == 1  # the under-sampled arm: its expected improvement beats the best mean's
    pair_scale = np.sqrt(scale[leader] ** 2 + scale**2)
    challenger_values = pair_scale * _improvement((means - means[leader]) / pair_scale)
    challenger_values[leader] = -np.inf
    challenger = int(np.argmax(challenger_values))
    arm = TTEI().select(_gaussian_context(4), _view(counts, means * counts), {}, np.array([0.5, 0.5, coin]))
    assert arm == (leader if coin < 0.5 else challenger)
    # beta moves the coin's threshold
    assert TTEI(beta=0.8).select(_gaussian_context(4), _view(counts, means * counts), {},
                                 np.array([0.5, 0.5, 0.7])) == leader


def test_t3c_challenger_minimises_the_gaussian_transportation_cost():
    variance = 0.25
    counts = np.array([30, 12, 20, 5])
    sums = np.array([24.0, 9.0, 10.0, 1.0])
    means = sums / counts
    uniforms = np.array([0.9, 0.2, 0.4, 0.4, 0.5, 0.7, 0.5])
    theta = stats.norm.ppf(uniforms[:4], loc=means, scale=np.sqrt(variance / counts))
    leader = int(np.argmax(theta))
    # W(I, b) = (mu_I - mu_b)^2 / (2 (s^2/N_I + s^2/N_b)) when mu_I > mu_b, else 0
    costs = [math.inf if b == leader else
             ((means[leader] - means[b]) ** 2 / (2 * (variance / counts[leader] + variance / counts[b]))
              if means[leader] > means[b] else 0.0) for b in range(4)]
    challenger = int(np.argmin(costs))
    context = _gaussian_context(4)
    assert T3C().select(context, _view(counts, sums), {}, uniforms) == challenger
    uniforms[5] = 0.2  # coin below beta: the leader
    assert T3C().select(context, _view(counts, sums), {}, uniforms) == leader


def test_t3c_bernoulli_transportation_cost_uses_the_kl_divergence():
    def kl(p, q):
        return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))

    counts = np.array([40, 10, 25])
    sums = np.array([32.0, 6.0, 17.0])
    means = sums / counts
    context = RuleContext(3, 1, get_family("bernoulli"), np.ones(3))
    # leader: u = 0.5 gives each arm's Beta(1 + S, 1 + F) median (scipy); arm 0 has the largest
    uniforms = np.array([0.5, 0.5, 0.5, 0.5, 0.9, 0.5])
    medians = stats.beta.median(1 + sums, 1 + counts - sums)
    assert int(np.argmax(medians)) == 0
    costs = {}
    for b in (1, 2):
        x = (counts[0] * means[0] + counts[b] * means[b]) / (counts[0] + counts[b])
        costs[b] = counts[0] * kl(means[0], x) + counts[b] * kl(means[b], x)
    assert T3C().select(context, _view(counts, sums), {}, uniforms) == min(costs, key=costs.get)


def _ttts_case():
    variance = 0.25
    counts = np.array([20, 20, 20])
    sums = np.array([16.0, 15.0, 10.0])
    scale = np.sqrt(variance / counts)
    return variance, counts, sums, scale


def _resamples(key, means, scale, count):
    """TTTS's first ``count`` re-samples of the step keyed ``key``: re-sample m inverts the Gaussian posterior
    (scipy.stats) at the stream's uniforms m K .. m K + K - 1 (the stream is checked against an independent
    SplitMix64 in test_counter_stream.py)."""
    n_arms = means.size
    uniforms = counter_uniforms(key, 0, count * n_arms).reshape(count, n_arms)
    return stats.norm.ppf(uniforms, loc=means, scale=scale)


def _ttts_state():
    return {name: np.zeros(1, dtype=np.int64) for name in ("resample_fallbacks", "challenger_steps", "resamples")}


def test_ttts_challenger_is_the_first_resample_with_another_arg_max():
    variance, counts, sums, scale = _ttts_case()
    means = sums / counts
    first = np.array([0.9, 0.5, 0.5])  # leader arm 0
    assert int(np.argmax(stats.norm.ppf(first, loc=means, scale=scale))) == 0
    rule = TTTS()
    checked = 0
    for key_uniform in np.linspace(0.05, 0.95, 10):
        uniforms = np.concatenate([first, [0.5, 0.9, 0.5], [key_uniform, 0.5]])
        assert uniforms.size == rule.uniforms_per_step(_gaussian_context(3)) == 3 + 5
        theta = _resamples(stream_key(key_uniform, 0.5), means, scale, 200)
        beaten = np.flatnonzero(np.argmax(theta, axis=1) != 0)
        expected, drawn = int(np.argmax(theta[beaten[0]])), int(beaten[0]) + 1
        checked += drawn > 1  # cases where the leader survives some re-samples
        state = _ttts_state()
        assert rule.select(_gaussian_context(3), _view(counts, sums), state, uniforms) == expected
        assert (state["resamples"][0], state["challenger_steps"][0], state["resample_fallbacks"][0]) == (drawn, 1, 0)
        kernel_state = {name: values[None, :] * 0 for name, values in state.items()}
        arm, _, _ = compiled_select(rule, _gaussian_context(3), _view(counts, sums), kernel_state, uniforms)
        assert arm == expected and kernel_state["resamples"][0, 0] == drawn
    assert checked >= 3
    uniforms[4] = 0.1  # coin below beta: the leader, no re-sampling
    state = _ttts_state()
    assert rule.select(_gaussian_context(3), _view(counts, sums), state, uniforms) == 0
    assert state["challenger_steps"][0] == 0


def test_ttts_falls_back_to_the_t3c_challenger_at_its_cap():
    variance, counts, sums, scale = _ttts_case()
    means = sums / counts
    first = np.array([0.9, 0.5, 0.5])
    rule = TTTS(max_resamples=2)
    # a key whose first two re-samples keep arm 0 on top, found by the reference re-samples
    key_uniform = next(u for u in np.linspace(0.01, 0.99, 99)
                       if (np.argmax(_resamples(stream_key(u, 0.5), means, scale, 2), axis=1) == 0).all())
    uniforms = np.concatenate([first, [0.5, 0.9, 0.5], [key_uniform, 0.5]])
    # T3C's challenger at the means (0.8, 0.75, 0.5) with equal counts: arm 1 (smallest gap)
    state = _ttts_state()
    assert rule.select(_gaussian_context(3), _view(counts, sums), state, uniforms) == 1
    assert (state["resample_fallbacks"][0], state["resamples"][0]) == (1, 2)
    assert TTTS().diagnostics({name: values[None, :] for name, values in state.items()})["fallback_share"][0] == 1.0
    kernel_state = {name: np.zeros((1, 1), dtype=np.int64) for name in state}
    arm, _, _ = compiled_select(rule, _gaussian_context(3), _view(counts, sums), kernel_state, uniforms)
    assert arm == 1 and kernel_state["resample_fallbacks"][0, 0] == 1 and kernel_state["resamples"][0, 0] == 2
    # the uncapped rule goes on re-sampling: no fallback
    state = _ttts_state()
    TTTS().select(_gaussian_context(3), _view(counts, sums), state, uniforms)
    assert state["resample_fallbacks"][0] == 0 and state["resamples"][0] > 2


FIGURE_1_BEST_ARM = TopKProblem(1.0 - np.arange(20) / 20.0, k=1, variance=0.25)  # Wang, Yang, You (2022), k = 1


def test_russo_ttts_never_falls_back_on_figure_1_and_the_capped_one_often_does():
    russo = identify(FIGURE_1_BEST_ARM, "ttts", delta=0.1, n_runs=3, rng=11)
    capped = identify(FIGURE_1_BEST_ARM, TTTS(max_resamples=8), delta=0.1, n_runs=3, rng=11)
    assert russo.diagnostics["resample_fallbacks"].sum() == 0
    assert (russo.diagnostics["challenger_steps"] > 0).all()
    assert (russo.diagnostics["resamples"] > 8 * russo.diagnostics["challenger_steps"]).all()
    assert (capped.diagnostics["resample_fallbacks"] > 0).all()
    share = capped.diagnostics["resample_fallbacks"] / capped.diagnostics["challenger_steps"]
    assert np.allclose(capped.diagnostics["fallback_share"], share)
    assert "fallback_share" in capped.to_dict()["diagnostics"]
    assert capped.to_dict()["diagnostic_means"]["fallback_share"] == pytest.approx(share.mean())
    assert "fallback_share" in capped.format_summary()


def test_ttts_runs_do_not_depend_on_chunks_jobs_or_the_compiled_loop():
    problem = TopKProblem([1.0, 0.8, 0.7, 0.3, 0.0], k=1, variance=0.25)
    reference = identify(problem, "ttts", delta=0.01, n_runs=6, rng=5, chunk_size=6, n_jobs=1, max_samples=300)
    for options in (dict(chunk_size=2, n_jobs=1), dict(chunk_size=1, n_jobs=2)):
        other = identify(problem, "ttts", delta=0.01, n_runs=6, rng=5, max_samples=300, **options)
        assert np.array_equal(other.stopping_times, reference.stopping_times)
        assert np.array_equal(other.pulls, reference.pulls)
        for name in reference.diagnostics:
            assert np.array_equal(other.diagnostics[name], reference.diagnostics[name])
    with compiled_kernels(False):
        python = identify(problem, "ttts", delta=0.01, n_runs=6, rng=5, max_samples=300)
    assert np.array_equal(python.pulls, reference.pulls)
    assert np.array_equal(python.diagnostics["resamples"], reference.diagnostics["resamples"])


@pytest.mark.parametrize("name", ["ttts", "t3c"])
def test_scalar_and_batched_runs_agree(name):
    # Gaussian arms: ndtri (scipy.special, called by both paths) and arithmetic, so bit for bit; TTEI's step takes
    # logs and is compared stepwise (tests/algorithms/test_rule_conformance.py, check_rule with exact=False)
    problem = TopKProblem([1.0, 0.8, 0.7, 0.3, 0.0], k=1, variance=0.25)
    batched = identify(problem, name, delta=0.01, n_runs=4, rng=6, max_samples=300)
    scalar = identify(problem, name, delta=0.01, n_runs=4, rng=6, max_samples=300, batched=False)
    assert np.array_equal(batched.pulls, scalar.pulls)
    assert np.array_equal(batched.stopping_times, scalar.stopping_times)


@pytest.mark.parametrize("rule", [TTTS, T3C, TTEI])
@pytest.mark.parametrize("beta", [0.0, 1.0, 1.5, -0.1, float("nan")])
def test_beta_outside_the_open_unit_interval_is_refused(rule, beta):
    with pytest.raises(InvalidArgumentError, match=f"'beta' parameter of {rule.__name__} must be a probability"):
        rule(beta=beta)


def test_bad_input_is_named():
    with pytest.raises(InvalidArgumentError, match="'max_resamples' parameter of TTTS"):
        TTTS(max_resamples=0)
    problem = TopKProblem([1.0, 0.8, 0.5], k=2, variance=0.25)
    for name in ("ttts", "t3c", "ttei"):
        with pytest.raises(InvalidArgumentError, match=f"supports k = 2 .*{name} needs k <= 1"):
            identify(problem, name, delta=0.1)
    bernoulli = TopKProblem([0.8, 0.5, 0.2], k=1, family="bernoulli")
    with pytest.raises(InvalidArgumentError, match="ttei is defined for gaussian arms only"):
        identify(bernoulli, "ttei", delta=0.1)
