"""Bad input through the Python API: an allocopt error that names the argument, the requirement and the value,
raised before any work and without changing state (the inputs a new user tried, with their outcome before: silently
accepted, or an error from inside numpy or joblib)."""

from __future__ import annotations

import joblib
import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import POLICIES, identify
from allocopt.exceptions import AllocoptError
from allocopt.simulate import monte_carlo, worker_count

GAUSSIAN = TopKProblem([1.0, 0.8, 0.5, 0.2], 2, variance=0.25)


def refused(call, *words: str) -> str:
    with pytest.raises(AllocoptError) as caught:
        call()
    message = str(caught.value)
    for word in words:
        assert word in message, message
    return message


@pytest.mark.parametrize("theta, words", [
    (np.ma.array([1.0, 0.5, 0.2], mask=[0, 1, 0]), ("'theta'", "masked")),  # the masked 0.5 was used
    (["1", "0.5", "0.2"], ("'theta'", "not text")),  # numpy converted the strings
    ([True, False, False], ("'theta'", "booleans")),
])
def test_top_k_problem_refuses_means_that_are_not_numbers(theta, words):
    refused(lambda: TopKProblem(theta, 1), *words)


def test_an_unmasked_masked_array_is_its_values():
    assert TopKProblem(np.ma.array([1.0, 0.5, 0.2]), 1).theta.tolist() == [1.0, 0.5, 0.2]


@pytest.mark.parametrize("variance", [True, [True, True, True], "0.25"])
def test_a_variance_must_be_numbers(variance):
    refused(lambda: TopKProblem([1.0, 0.5, 0.2], 1, variance=variance), "'variance'", "Got")


def test_a_rule_class_is_refused_with_the_instance_to_pass():
    # before: TypeError "uniforms_per_step() missing 1 required positional argument" from inside the engine
    refused(lambda: identify(GAUSSIAN, POLICIES["kkt-ts"], delta=0.1, n_runs=2, rng=1), "'policy'", "KKTTS()")


@pytest.mark.parametrize("n_jobs", [0, "x", True, 1.5])
def test_n_jobs_is_checked_before_any_work_and_leaves_the_generator_untouched(n_jobs):
    generator = np.random.default_rng(3)
    before = generator.bit_generator.state
    refused(lambda: identify(GAUSSIAN, "uniform", delta=0.1, n_runs=2, rng=generator, n_jobs=n_jobs), "'n_jobs'")
    assert generator.bit_generator.state == before
    refused(lambda: monte_carlo(lambda g: 0.0, 3, n_jobs=n_jobs), "'n_jobs'")


def test_a_delta_given_as_text_is_refused():
    refused(lambda: identify(GAUSSIAN, "uniform", delta="0.1", n_runs=2, rng=1), "'delta'", "not text")


def test_a_threshold_that_returns_nan_is_refused_before_any_work():
    generator = np.random.default_rng(4)
    before = generator.bit_generator.state
    refused(lambda: identify(GAUSSIAN, "uniform", delta=0.1, n_runs=2, rng=generator,
                             threshold=lambda t, delta: float("nan")), "'threshold'", "NaN")
    assert generator.bit_generator.state == before


def test_a_threshold_that_turns_nan_later_is_refused_when_it_does():
    # finite at t = K (the check before the run), NaN from t = 30 on: the run stops with the error, not at the cap
    def late_nan(t, delta):
        return np.where(np.asarray(t) >= 30, np.nan, np.log(1.0 / delta) + 0.0 * t)
    refused(lambda: identify(GAUSSIAN, "uniform", delta=0.1, n_runs=2, rng=1, max_samples=10**5,
                             threshold=late_nan), "'threshold'", "t = ")


def test_a_tiny_delta_gets_its_lower_bound_not_a_zero_division():
    # kl(delta, 1 - delta) = (1 - 2 delta) log((1 - delta)/delta) = 300 log 10 (to 1e-300 relative) at 1e-300,
    # where 1 - delta rounds to 1; the run reaches the cap, so the row is censored
    result = identify(GAUSSIAN, "uniform", delta=1e-300, n_runs=2, rng=1, max_samples=100)
    row = result.summary()[0]
    assert row.lower_bound == pytest.approx(result.characteristic_time * 300 * np.log(10.0), rel=1e-12)
    assert row.censored and ">=" in result.format_summary() and "censored" in result.format_summary()
    assert result.to_dict()["summary"][0]["censored"] is True


def test_a_summary_without_capped_runs_is_not_censored():
    result = identify(GAUSSIAN, "uniform", delta=0.1, n_runs=3, rng=1)
    assert not result.summary()[0].censored and ">=" not in result.format_summary()


def test_workers_are_at_most_the_chunks_and_the_cpus(monkeypatch):
    # allocopt identify --jobs 1000 --runs 10 started about 940 worker processes before
    assert worker_count(1000, 3) == min(3, joblib.cpu_count())
    assert worker_count(1000, 10**6) <= joblib.cpu_count()
    assert worker_count(-1, 10**6) == joblib.cpu_count() and worker_count(None, 10) == 1
    asked = []
    real = joblib.Parallel

    class Recording(real):  # the workers monte_carlo asks joblib for
        def __init__(self, *args, **kwargs):
            asked.append(kwargs.get("n_jobs"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(joblib, "Parallel", Recording)
    result = identify(GAUSSIAN, "uniform", delta=0.1, n_runs=10, rng=1, n_jobs=1000, chunk_size=5)
    assert asked and max(asked) <= min(2, joblib.cpu_count()) and result.n_runs == 10



def test_a_rule_missing_a_method_is_told_which():
    from allocopt import TopKProblem
    from allocopt.algorithms import identify
    from allocopt.exceptions import InvalidArgumentError

    class NoUniforms:
        def init_state(self, context, n_runs):
            return {}

        def select(self, context, view, state, uniforms):
            return 0

    with pytest.raises(InvalidArgumentError, match="has no uniforms_per_step method"):
        identify(TopKProblem([1.0, 0.5], 1), NoUniforms(), delta=0.1)
