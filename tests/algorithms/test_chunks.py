"""run_chunk: the records of replications [start, stop) are the runners' rows start .. stop - 1, whatever the range.

The runners (identify, identify_fixed_budget, pac_identify) are made of such ranges; these tests run the ranges
on their own, cut at other places than the runners cut, and compare every array with the runner's bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import KKTTS, NSAR, ChunkRecords, identify, identify_fixed_budget, pac_identify, run_chunk
from allocopt.exceptions import InvalidArgumentError

GAUSS = TopKProblem([1.0, 0.9, 0.8, 0.5, 0.4, 0.3], 2, variance=0.25)
BERN = TopKProblem([0.7, 0.6, 0.5, 0.4, 0.3], 2, family="bernoulli")
RANGES = [(0, 7), (7, 8), (8, 19), (19, 24)]


def stitched(problem, policy, **options) -> list[ChunkRecords]:
    return [run_chunk(problem, policy, start=start, stop=stop, rng=11, **options) for start, stop in RANGES]


def joined(chunks: list[ChunkRecords], name: str) -> np.ndarray:
    return np.concatenate([getattr(chunk, name) for chunk in chunks])


# kkt-ts serves both deltas from one run; lucb runs once per delta (its sampling reads delta)
@pytest.mark.parametrize(("problem", "policy"), [(GAUSS, "kkt-ts"), (BERN, "lucb"), (BERN, "uniform")])
def test_fixed_confidence_ranges_are_the_rows_of_identify(problem, policy):
    whole = identify(problem, policy, delta=(0.1, 0.01), n_runs=24, rng=11, max_samples=50_000, chunk_size=5)
    chunks = stitched(problem, policy, setting="confidence", delta=(0.1, 0.01), max_samples=50_000)
    for name in ("stopping_times", "recommendations", "correct", "stopped"):
        np.testing.assert_array_equal(joined(chunks, name), getattr(whole, name), err_msg=name)
    # the runner's pulls are those of the last engine run (the last delta's for lucb)
    np.testing.assert_array_equal(joined(chunks, "run_pulls")[:, -1], whole.pulls)
    assert sum(chunk.replication_steps for chunk in chunks) == whole.replication_steps
    assert [(chunk.start, chunk.stop) for chunk in chunks] == RANGES
    separate = policy == "lucb"
    assert chunks[0].checkpoint_run.tolist() == ([0, 1] if separate else [0, 0])
    assert chunks[0].pulls.shape == (7, 2, problem.n_arms)
    # a run's counts add up to its last stopping time (every pull is counted once)
    last = joined(chunks, "stopping_times")[:, -1]
    np.testing.assert_array_equal(joined(chunks, "run_pulls")[:, -1].sum(axis=1), last)


@pytest.mark.parametrize("policy", [KKTTS(kind="budget"), NSAR(p=0.85)])
def test_fixed_budget_ranges_are_the_rows_of_identify_fixed_budget(policy):
    # KKT-TS is anytime (one run serves every budget); NSAR needs its budget, so it runs once per budget
    whole = identify_fixed_budget(BERN, policy, [60, 20, 200], n_runs=24, rng=11, chunk_size=9)
    chunks = stitched(BERN, policy, setting="budget", budgets=[60, 20, 200])
    assert chunks[0].checkpoints.tolist() == [20, 60, 200]  # increasing, as the runner orders them
    for name in ("recommendations", "correct"):
        np.testing.assert_array_equal(joined(chunks, name), getattr(whole, name), err_msg=name)
    np.testing.assert_array_equal(joined(chunks, "run_pulls")[:, -1], whole.pulls)
    # each engine run spends its budget exactly
    anytime = isinstance(policy, KKTTS)
    assert chunks[0].checkpoint_run.tolist() == ([0, 0, 0] if anytime else [0, 1, 2])
    np.testing.assert_array_equal(joined(chunks, "pulls").sum(axis=-1),
                                  np.full((24, 3), 200) if anytime else np.broadcast_to([20, 60, 200], (24, 3)))


def test_pac_ranges_are_the_rows_of_pac_identify():
    problem = TopKProblem([0.9, 0.85, 0.5, 0.1, 0.05], 2, family="bernoulli")
    whole = pac_identify(problem, "adaptive-topk", epsilon=0.1, delta=0.05, n_runs=24, rng=11)
    chunks = stitched(problem, "adaptive-topk", setting="pac", epsilon=0.1, delta=0.05)
    np.testing.assert_array_equal(joined(chunks, "stopping_times")[:, 0], whole.samples)
    np.testing.assert_array_equal(joined(chunks, "recommendations")[:, 0], whole.recommendations)
    np.testing.assert_array_equal(joined(chunks, "aggregate_regret")[:, 0], whole.aggregate_regret)
    np.testing.assert_array_equal(joined(chunks, "correct")[:, 0], whole.correct)
    # the aggregate regret of Chen, Chen, Zhang, Zhou (2017), eq. (1), computed here from the recommendations
    top_sum = 0.9 + 0.85
    chosen = problem.theta[whole.recommendations].sum(axis=1)
    np.testing.assert_allclose(joined(chunks, "aggregate_regret")[:, 0], (top_sum - chosen) / 2, atol=1e-15)


def test_an_empty_range_checks_the_cell_and_runs_nothing():
    empty = run_chunk(GAUSS, "kkt-ts", setting="confidence", delta=0.1, start=5, stop=5, rng=0)
    assert empty.stopping_times.shape == (0, 1) and empty.message == "no replication of kkt-ts"
    # SAR's first round needs a budget of at least K + 1: refused by the rule's own check, before any run
    with pytest.raises(InvalidArgumentError, match="'budget' parameter of NSAR"):
        run_chunk(BERN, "sar", setting="budget", budgets=[5], start=0, stop=0, rng=0)


@pytest.mark.parametrize(("options", "name"), [
    (dict(setting="confidence"), "delta"),
    (dict(setting="budget", budgets=[50], delta=0.1), "delta"),
    (dict(setting="pac", delta=0.1), "epsilon"),
    (dict(setting="weekly", delta=0.1), "setting"),
    (dict(setting="budget", budgets=[50], max_samples=100), "max_samples"),
])
def test_the_setting_and_its_arguments_are_checked(options, name):
    with pytest.raises(InvalidArgumentError, match=f"'{name}' parameter of run_chunk"):
        run_chunk(BERN, "uniform", start=0, stop=3, rng=0, **options)


@pytest.mark.parametrize("rng", [None, np.random.default_rng(0)])
def test_a_range_needs_a_reproducible_root(rng):
    with pytest.raises(InvalidArgumentError, match="'rng' parameter of run_chunk"):
        run_chunk(BERN, "uniform", setting="confidence", delta=0.1, start=0, stop=3, rng=rng)


def test_records_are_a_result_with_strict_json():
    chunk = run_chunk(BERN, "uniform", setting="confidence", delta=0.1, start=2, stop=4, rng=np.random.SeedSequence(3))
    payload = chunk.to_dict()
    assert payload["status"] == "completed" and payload["start"] == 2 and payload["stop"] == 4
    assert payload["entropy"] == 3 and "problem" not in payload
