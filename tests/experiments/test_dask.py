"""Dask: the chunks run on a cluster, the submitting process writes them, and the records equal a local run's."""

from __future__ import annotations

import pytest
from experiment_helpers import tiny

from allocopt.cli import main
from allocopt.experiments import load, run_experiment

distributed = pytest.importorskip("dask.distributed")

SPEC = tiny(n_runs=20, chunk_size=5)


@pytest.fixture(scope="module")
def local_records(tmp_path_factory):
    store = tmp_path_factory.mktemp("dask") / "local"
    run_experiment(SPEC, store)
    return load(store, pulls=True, recommendations=True)


def same_records(left, right) -> bool:
    plain = ["pulls", "recommendation"]
    return (left.drop(columns=plain).equals(right.drop(columns=plain))
            and all((a == b).all() for column in plain for a, b in zip(left[column], right[column])))


def test_a_client_on_a_local_cluster_stores_the_local_records(tmp_path, local_records):
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            outcome = run_experiment(SPEC, tmp_path / "dask", client=client)
    assert outcome.executor == "dask" and outcome.computed == 16 and outcome.status == "completed"
    assert same_records(load(tmp_path / "dask", pulls=True, recommendations=True), local_records)


def test_the_command_line_runs_on_a_scheduler_address(tmp_path, local_records, capsys):
    spec = tmp_path / "spec.toml"
    lines = ['name = "tiny"', "seed = 11", "n_runs = 20", "chunk_size = 5", "max_samples = 100000"]
    for instance in SPEC["instances"]:
        lines += ["[[instances]]", f'name = "{instance["name"]}"', f"theta = {instance['theta']}",
                  f"k = {instance['k']}", f'family = "{instance.get("family", "gaussian")}"']
        if "variance" in instance:
            lines.append(f"variance = {instance['variance']}")
    lines += ["[[rules]]", 'name = "kkt-ts"', "[[rules]]", 'name = "uniform"', "[fixed_confidence]",
              "delta = [0.1, 0.01]"]
    spec.write_text("\n".join(lines) + "\n")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        status = main(["experiment", "run", str(spec), "--store", str(tmp_path / "store"), "--scheduler",
                       cluster.scheduler_address])
    assert status == 0, capsys.readouterr().err
    assert same_records(load(tmp_path / "store", pulls=True, recommendations=True), local_records)


@pytest.mark.slow
def test_worker_processes_store_the_local_records(tmp_path, local_records):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            run_experiment(SPEC, tmp_path / "dask", client=client)
    assert same_records(load(tmp_path / "dask", pulls=True, recommendations=True), local_records)


@pytest.mark.slow
def test_joblib_workers_store_the_local_records(tmp_path, local_records):
    outcome = run_experiment(SPEC, tmp_path / "joblib", n_jobs=2)
    assert outcome.executor == "joblib"
    assert same_records(load(tmp_path / "joblib", pulls=True, recommendations=True), local_records)


def test_a_client_and_local_workers_are_exclusive(tmp_path):
    from allocopt.exceptions import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="'n_jobs' parameter of run_experiment must be left out"):
        run_experiment(SPEC, tmp_path / "store", n_jobs=2, client="tcp://127.0.0.1:1")
    assert not (tmp_path / "store").exists()
