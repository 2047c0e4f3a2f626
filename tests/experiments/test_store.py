"""The store: atomic chunk files, a store keeps one spec (another is refused, nothing is mixed), a store may grow
only on request, records of other versions are refused, one writer at a time."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from experiment_helpers import TINY, synthetic_records, tiny, tree

from allocopt.experiments import Store, StoreBusyError, StoreMismatchError, load, run_experiment, store_status
from allocopt.experiments import runner as runner_module
from allocopt.experiments.store import atomic_write
from allocopt.exceptions import InvalidArgumentError


def test_a_store_holds_the_spec_its_hash_the_versions_and_one_file_per_chunk(tmp_path):
    store = tmp_path / "store"
    outcome = run_experiment(TINY, store)
    manifest = json.loads((store / "experiment.json").read_text())
    assert manifest["spec_hash"] == outcome.spec_hash and len(manifest["spec_hash"]) == 64
    assert set(manifest["versions"]) == {"python", "allocopt", "numpy", "scipy", "numba"}
    assert json.loads((store / "spec.json").read_text())["name"] == "tiny"
    names = sorted(path.name for path in (store / "chunks").iterdir())
    # 2 instances x 2 rules x 3 chunks of 10 replications
    assert len(names) == 12 and names[0] == "000-000-000000000-000000010.parquet"
    assert outcome.records == 2 * 2 * 30 * 2 and outcome.computed == 12 and outcome.skipped == 0


def test_atomic_write_leaves_the_old_file_or_the_new_one(tmp_path):
    path = tmp_path / "file.bin"
    atomic_write(path, lambda handle: handle.write(b"old"))

    def crash(handle):
        handle.write(b"half of the new")
        raise OSError("disk full")
    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, crash)
    assert path.read_bytes() == b"old" and sorted(os.listdir(tmp_path)) == ["file.bin"]


def test_a_rerun_skips_stored_chunks_and_removes_a_killed_runs_temporary_files(tmp_path):
    store = tmp_path / "store"
    first = run_experiment(TINY, store, on_chunk=lambda key: None)
    chunk = next((store / "chunks").iterdir())
    leftover = store / "chunks" / f".tmp-{chunk.name}-999999-deadbeef"
    leftover.write_bytes(b"part of a chunk")  # what a SIGKILL during a write leaves
    before = tree(store / "chunks")
    again = run_experiment(TINY, store)
    assert again.computed == 0 and again.skipped == first.computed
    assert not leftover.exists()
    del before[leftover.name]
    assert tree(store / "chunks") == before


def test_another_spec_is_refused_and_nothing_is_mixed(tmp_path):
    store = tmp_path / "store"
    run_experiment(TINY, store)
    before = tree(store)
    other = tiny()
    other["instances"][1]["theta"] = [0.7, 0.5, 0.4, 0.25]
    with pytest.raises(StoreMismatchError, match=r"another spec .* they differ at instances\[1\]\.theta"):
        run_experiment(other, store)
    with pytest.raises(StoreMismatchError, match="differ at seed"):
        run_experiment(tiny(seed=12), store)
    assert tree(store) == before


def test_a_store_grows_only_on_request(tmp_path):
    store = tmp_path / "store"
    run_experiment(tiny(n_runs=25), store)  # the last chunk is 20 .. 24
    with pytest.raises(StoreMismatchError, match="rerun with --extend"):
        run_experiment(tiny(n_runs=40), store)
    with pytest.raises(StoreMismatchError, match="fewer replications"):
        run_experiment(tiny(n_runs=20), store, extend=True)
    grown = run_experiment(tiny(n_runs=40), store, extend=True)
    # per cell: chunk 20 .. 24 was cut short by the old count; 20 .. 30 and 30 .. 40 are computed
    assert grown.computed == 4 * 2 and grown.records == 2 * 2 * 40 * 2
    fresh = tmp_path / "fresh"
    run_experiment(tiny(n_runs=40), fresh)
    assert load(store).equals(load(fresh))


def test_a_directory_that_is_not_a_store_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InvalidArgumentError, match="not an experiment store"):
        run_experiment(TINY, tmp_path)
    assert sorted(os.listdir(tmp_path)) == [".lock", "notes.txt"]
    with pytest.raises(InvalidArgumentError, match="it does not exist"):
        store_status(tmp_path / "nothing")


def test_records_of_other_versions_are_refused(tmp_path, monkeypatch):
    store = tmp_path / "store"
    run_experiment(tiny(n_runs=10), store)
    versions = runner_module.computation_versions()
    monkeypatch.setattr(runner_module, "computation_versions", lambda: dict(versions, numpy="0.0.1"))
    with pytest.raises(StoreMismatchError, match="numpy .* in the store, 0.0.1 here"):
        run_experiment(tiny(n_runs=20), store, extend=True)
    assert store_status(store).chunks_done == 4  # the first spec's chunks only


def test_one_writer_at_a_time(tmp_path):
    store = tmp_path / "store"
    with Store.lock(store):
        with pytest.raises(StoreBusyError, match="Another run is writing"):
            run_experiment(TINY, store)


def test_a_chunk_file_of_another_store_is_refused(tmp_path):
    run_experiment(tiny(n_runs=10), tmp_path / "a")
    run_experiment(tiny(n_runs=10, seed=99), tmp_path / "b")
    name = "000-000-000000000-000000010.parquet"
    (tmp_path / "a" / "chunks" / name).write_bytes((tmp_path / "b" / "chunks" / name).read_bytes())
    with pytest.raises(StoreMismatchError, match="does not belong to the store"):
        load(tmp_path / "a")


def test_the_files_round_trip(tmp_path):
    spec = tiny(n_runs=10)
    with Store.lock(tmp_path / "store"):
        from allocopt.experiments import load_spec

        store = Store.for_run(tmp_path / "store", load_spec(spec))
    records = synthetic_records(0, 10, [0.1, 0.01], n_arms=4, k=2, rng=np.random.default_rng(1), separate=True)
    store.write_chunk((0, 0, 0, 10), records, {"versions": store.manifest["versions"]})
    table = load(store, pulls=True, recommendations=True)
    assert len(table) == 20 and table["replication"].tolist() == list(np.repeat(np.arange(10), 2))
    np.testing.assert_array_equal(table["stopping_time"].to_numpy().reshape(10, 2), records.stopping_times)
    np.testing.assert_array_equal(np.stack(table["pulls"].to_numpy()).reshape(10, 2, 4), records.pulls)
    np.testing.assert_array_equal(np.stack(table["recommendation"].to_numpy()).reshape(10, 2, 2),
                                  records.recommendations)
    np.testing.assert_array_equal(table["correct"].to_numpy().reshape(10, 2), records.correct)


def test_a_new_presentation_replaces_the_stored_one_without_touching_the_records(tmp_path):
    store = tmp_path / "store"
    run_experiment(TINY, store)
    chunks = tree(store / "chunks")
    retold = tiny(description="the same records, told again", report={"reference": "uniform", "notes": "n"})
    outcome = run_experiment(retold, store)
    assert outcome.computed == 0
    assert tree(store / "chunks") == chunks
    manifest = json.loads((store / "experiment.json").read_text())
    assert manifest["spec"]["description"] == "the same records, told again"
    assert manifest["spec"]["report"] == {"notes": "n", "reference": "uniform"}
