"""The long table and its summaries agree with the library's runners on the same seed: the records with identify's
arrays, the summary with IdentificationResult.summary, the paired differences with compare_policies."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from experiment_helpers import TINY, tiny

from allocopt import TopKProblem
from allocopt.algorithms import compare_policies, identify, pac_identify
from allocopt.exceptions import MissingDependencyError
from allocopt.experiments import load, paired_differences, run_experiment, summarize


@pytest.fixture(scope="module")
def confidence_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("tables") / "store"
    run_experiment(TINY, store)
    return store


def test_the_long_table_has_one_row_per_instance_rule_replication_and_delta(confidence_store):
    table = load(confidence_store)
    assert list(table.columns) == ["instance", "rule", "replication", "delta", "stopping_time", "correct", "stopped"]
    assert len(table) == 2 * 2 * 30 * 2
    assert list(table["instance"].cat.categories) == ["gauss4", "bern4"]
    assert list(table["rule"].cat.categories) == ["kkt-ts", "uniform"]
    assert str(table["stopping_time"].dtype) == "int64" and str(table["delta"].dtype) == "float64"
    assert not table.duplicated(["instance", "rule", "replication", "delta"]).any()


@pytest.mark.parametrize("instance", [0, 1])
def test_records_and_summary_agree_with_identify_and_compare_policies(confidence_store, instance):
    spec = TINY["instances"][instance]
    problem = TopKProblem(spec["theta"], spec["k"], family=spec.get("family", "gaussian"),
                          variance=spec.get("variance", 1.0))
    comparison = compare_policies(problem, ["kkt-ts", "uniform"], delta=(0.1, 0.01), n_runs=30, rng=TINY["seed"],
                                  max_samples=TINY["max_samples"])
    table = load(confidence_store, pulls=True)
    table = table[table["instance"] == spec["name"]]
    summary = summarize(table)
    for label in ("kkt-ts", "uniform"):
        result = comparison.results[label]
        rows = table[table["rule"] == label]
        np.testing.assert_array_equal(rows["stopping_time"].to_numpy().reshape(30, 2), result.stopping_times)
        np.testing.assert_array_equal(rows["correct"].to_numpy().reshape(30, 2), result.correct)
        np.testing.assert_array_equal(rows["stopped"].to_numpy().reshape(30, 2), result.stopped)
        np.testing.assert_array_equal(np.stack(rows["pulls"].to_numpy()).reshape(30, 2, -1)[:, -1], result.pulls)
        mine = summary[summary["rule"] == label]
        for row, expected in zip(mine.itertuples(index=False), result.summary()):
            assert row.delta == expected.delta and row.n_runs == 30
            assert row.mean_stopping_time == expected.mean_stopping_time
            assert row.standard_error == expected.standard_error
            assert (row.error_rate, row.error_low, row.error_high) == (
                expected.error_rate, expected.error_low, expected.error_high)
            assert row.stopped_fraction == expected.stopped_fraction and row.censored == expected.censored
    paired = paired_differences(table, reference="kkt-ts")
    for row, expected in zip(paired.itertuples(index=False), comparison.paired_differences()):
        assert (row.rule, row.reference, row.delta) == (expected.policy, expected.reference, expected.checkpoint)
        assert (row.mean, row.standard_error, row.n_pairs) == (expected.mean, expected.standard_error,
                                                                expected.n_pairs)
        assert row.verdict == ("lower" if row.high < 0 else "higher" if row.low > 0 else "level")


def test_fixed_budget_agrees_with_compare_policies(tmp_path):
    spec = tiny(rules=[{"name": "kkt-ts", "label": "kkt-ts (B)", "options": {"kind": "budget"}},
                       {"name": "sar"}], fixed_budget={"budgets": [60, 20]})
    del spec["fixed_confidence"], spec["max_samples"]
    spec["instances"] = spec["instances"][1:]
    run_experiment(spec, tmp_path / "store")
    table = load(tmp_path / "store")
    assert list(table.columns[:4]) == ["instance", "rule", "replication", "budget"]
    assert table["budget"].tolist()[:2] == [20, 60]  # the budgets in increasing order, as the runners order them
    from allocopt.algorithms import KKTTS

    problem = TopKProblem([0.7, 0.5, 0.4, 0.2], 1, family="bernoulli")
    comparison = compare_policies(problem, {"kkt-ts (B)": KKTTS(kind="budget"), "sar": "sar"}, budgets=[60, 20],
                                  n_runs=30, rng=11)
    summary = summarize(table)
    for label in ("kkt-ts (B)", "sar"):
        expected = comparison.results[label]
        mine = summary[summary["rule"] == label]
        np.testing.assert_array_equal(mine["error_rate"].to_numpy(), expected.error_rate)
        np.testing.assert_array_equal(mine["error_low"].to_numpy(), expected.error_low)
        np.testing.assert_array_equal(mine["error_high"].to_numpy(), expected.error_high)
    paired = paired_differences(tmp_path / "store")
    for row, expected in zip(paired.itertuples(index=False), comparison.paired_differences()):
        assert (row.mean, row.standard_error, row.budget) == (expected.mean, expected.standard_error,
                                                              expected.checkpoint)


def test_pac_agrees_with_pac_identify(tmp_path):
    spec = {"name": "pac", "seed": 3, "n_runs": 20, "chunk_size": 7,
            "instances": [{"name": "b5", "theta": [0.9, 0.85, 0.5, 0.1, 0.05], "k": 2, "family": "bernoulli"}],
            "rules": [{"name": "adaptive-topk"}], "pac": {"epsilon": 0.1, "delta": 0.05}}
    run_experiment(spec, tmp_path / "store")
    table = load(tmp_path / "store")
    assert {"epsilon", "delta", "aggregate_regret"} <= set(table.columns)
    problem = TopKProblem([0.9, 0.85, 0.5, 0.1, 0.05], 2, family="bernoulli")
    result = pac_identify(problem, "adaptive-topk", epsilon=0.1, delta=0.05, n_runs=20, rng=3)
    np.testing.assert_array_equal(table["stopping_time"].to_numpy(), result.samples)
    np.testing.assert_array_equal(table["aggregate_regret"].to_numpy(), result.aggregate_regret)
    row = summarize(table).iloc[0]
    expected = result.summary()
    assert row.mean_stopping_time == expected.mean_samples and row.standard_error == expected.samples_standard_error
    assert (row.error_rate, row.error_low, row.error_high) == (expected.failure_rate, expected.failure_low,
                                                               expected.failure_high)
    assert row.mean_regret == expected.mean_regret


def test_identify_rows_for_a_rule_that_runs_once_per_delta(tmp_path):
    # lucb's sampling reads delta: one engine run per delta, each with its own final counts
    spec = tiny(rules=[{"name": "lucb"}], n_runs=12, chunk_size=5)
    spec["instances"] = spec["instances"][1:]
    run_experiment(spec, tmp_path / "store")
    table = load(tmp_path / "store", pulls=True)
    result = identify(TopKProblem([0.7, 0.5, 0.4, 0.2], 1, family="bernoulli"), "lucb", delta=(0.1, 0.01), n_runs=12,
                      rng=11, max_samples=100000)
    np.testing.assert_array_equal(table["stopping_time"].to_numpy().reshape(12, 2), result.stopping_times)
    pulls = np.stack(table["pulls"].to_numpy()).reshape(12, 2, 4)
    np.testing.assert_array_equal(pulls[:, 1], result.pulls)
    np.testing.assert_array_equal(pulls.sum(axis=-1), result.stopping_times)  # each delta's run, its own counts


def test_without_pandas_the_tables_name_the_extra(confidence_store, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "allocopt\[experiments\]"'):
        load(confidence_store)
    with pytest.raises(MissingDependencyError, match=r'pip install "allocopt\[experiments\]"'):
        summarize(confidence_store)


def test_across_instances_averages_the_per_draw_differences_with_a_t_interval():
    import pandas as pd
    from scipy import stats

    from allocopt.experiments import across_instances

    means = [-0.05, -0.03, 0.01, -0.04]
    paired = pd.DataFrame({"instance": ["d1", "d2", "d3", "d4", "other"], "rule": "NSAR", "reference": "SAR",
                           "budget": [100, 120, 90, 300, 50], "mean": means + [0.5],
                           "verdict": ["lower", "lower", "level", "lower", "higher"]})
    table = across_instances(paired, {"d1": "draws", "d2": "draws", "d3": "draws", "d4": "draws"})
    assert len(table) == 1
    row = table.iloc[0]
    # independently: the sample mean, s / sqrt(n) and the t quantile with n - 1 = 3 degrees of freedom
    mean = sum(means) / 4
    s = (sum((x - mean) ** 2 for x in means) / 3) ** 0.5
    half = stats.t.ppf(0.975, 3) * s / 2
    assert row["draws"] == 4 and (row["lower"], row["level"], row["higher"]) == (3, 1, 0)
    assert row["mean"] == pytest.approx(mean, rel=1e-12)
    assert row["standard_error"] == pytest.approx(s / 2, rel=1e-12)
    assert (row["low"], row["high"]) == (pytest.approx(mean - half, rel=1e-12), pytest.approx(mean + half, rel=1e-12))


def test_a_group_of_one_instance_has_no_average():
    import pandas as pd

    from allocopt.experiments import across_instances

    paired = pd.DataFrame({"instance": ["d1"], "rule": "NSAR", "reference": "SAR", "budget": [100], "mean": [0.1],
                           "verdict": ["level"]})
    assert not len(across_instances(paired, {"d1": "draws"}))
