"""allocopt experiment run | status | report: exit statuses 0/1/2, one-line errors, strict JSON, the progress bar."""

from __future__ import annotations

import io
import json
import sys

import pytest
from experiment_helpers import issue_spec

from allocopt.cli import main
from allocopt.experiments import run_experiment
from allocopt.experiments.runner import _Progress


def run_cli(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return status, captured.out, captured.err


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "example.toml"
    path.write_text(issue_spec(n_runs=20, chunk_size=10, easy=True))
    return path


def test_run_status_and_report(tmp_path, spec, capsys):
    store, out_dir = tmp_path / "store", tmp_path / "report"
    # a run interrupted after 3 chunks (as Ctrl-C would): status shows what is done and what is to do
    def stop(key):
        if len(list((store / "chunks").iterdir())) == 3:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        run_experiment(spec, store, on_chunk=stop)
    status, out, _ = run_cli(["experiment", "status", str(store)], capsys)
    assert status == 0
    lines = out.splitlines()
    assert "3 of 8 chunks done, 5 to do" in lines[0]
    assert lines[1].split() == ["instance", "rule", "chunks", "done", "to", "do", "replications"]
    assert lines[2].split() == ["gauss6", "kkt-ts", "2", "/", "2", "0", "20", "/", "20"]
    assert lines[3].split() == ["gauss6", "uniform", "1", "/", "2", "1", "10", "/", "20"]
    # a report of an incomplete store exits 1
    status, out, _ = run_cli(["experiment", "report", str(store), "--out", str(out_dir), "--json"], capsys)
    payload = json.loads(out)
    assert status == 1 and payload["status"] == "incomplete" and (payload["stored"], payload["chunks"]) == (3, 8)
    assert (out_dir / "report.md").is_file() and (out_dir / "stopping_times.png").is_file()
    # the same command completes the run: 5 chunks computed
    status, out, _ = run_cli(["experiment", "run", str(spec), "--store", str(store)], capsys)
    assert status == 0 and out.startswith("example: 5 chunks computed, 3 found stored, 8 of 8 in the store")
    status, out, _ = run_cli(["experiment", "status", str(store), "--json"], capsys)
    payload = json.loads(out)
    assert status == 0 and payload["status"] == "completed" and payload["chunks_done"] == 8
    status, _, err = run_cli(["experiment", "report", str(store), "--out", str(out_dir), "--reference", "ttts"],
                             capsys)
    assert status == 2 and err.count("\n") == 1 and "'reference' parameter of paired_differences" in err


def test_another_spec_on_a_store_exits_2_with_one_line(tmp_path, spec, capsys):
    store = tmp_path / "store"
    assert run_cli(["experiment", "run", str(spec), "--store", str(store)], capsys)[0] == 0
    other = tmp_path / "other.toml"
    other.write_text(spec.read_text().replace("seed = 20261128", "seed = 1"))
    status, out, err = run_cli(["experiment", "run", str(other), "--store", str(store)], capsys)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("allocopt experiment: error: The store ") and "they differ at seed" in err


def test_the_progress_bar_falls_back_to_a_line_without_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    bar = _Progress(4, True, "example")
    for _ in range(4):
        bar.update()
    bar.close()
    assert stream.getvalue().split("\r")[-1] == "example: 4/4 chunks (100%)\n"
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    _Progress(4, False, "example").update()
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("edit, message", [
    (("theta = [0.9, 0.8, 0.3, 0.2, 0.1]", 'theta = [0.9, 0.8, "x", 0.2, 0.1]'),
     "instances[1].theta[2]: expected numbers (the arm means), found 'x' (text)"),
    (("delta = [0.1, 0.01]", "delta = [0.1, 1.5]"), "fixed_confidence.delta[1]: expected confidence levels in the open interval (0, 1), found 1.5"),
    (('name = "uniform"', 'name = "no-such-rule"'), "rules[1].name: expected a registered rule name (one of "),
])
def test_a_bad_spec_exits_2_with_its_key_path_and_writes_nothing(tmp_path, spec, capsys, edit, message):
    bad = tmp_path / "bad.toml"
    bad.write_text(spec.read_text().replace(*edit))
    assert bad.read_text() != spec.read_text()
    store = tmp_path / "store"
    status, out, err = run_cli(["experiment", "run", str(bad), "--store", str(store)], capsys)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"allocopt experiment: error: {bad}: {message}"), err
    assert "found 'no-such-rule' (text)" in err or "no-such-rule" not in bad.read_text()
    assert not store.exists()
