"""Resume: a command-line run killed with SIGKILL at random points is completed by running the same command again,
which computes only the missing chunks; the records equal those of an uninterrupted run bit for bit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from experiment_helpers import issue_spec

from allocopt.experiments import load, run_experiment, store_status

ROOT = Path(__file__).resolve().parents[2]


def start_run(spec: Path, store: Path) -> subprocess.Popen:
    environment = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "allocopt", "experiment", "run", str(spec), "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)


def chunk_files(store: Path) -> int:
    folder = store / "chunks"
    return sum(1 for name in os.listdir(folder) if name.endswith(".parquet")) if folder.is_dir() else 0


def kill_when(process: subprocess.Popen, store: Path, chunks: int, extra: float) -> int:
    """SIGKILL ``process`` ``extra`` seconds after the store holds ``chunks`` files; the chunks stored then."""
    deadline = time.monotonic() + 300
    while chunk_files(store) < chunks and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(extra)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    return chunk_files(store)


def run_killed_and_resumed(tmp_path: Path, kills: list[tuple[int, float]], n_runs: int, chunk_size: int,
                           easy: bool):
    spec = tmp_path / "example.toml"
    spec.write_text(issue_spec(n_runs=n_runs, chunk_size=chunk_size, easy=easy))
    store = tmp_path / "store"
    counts = []
    for chunks, extra in kills:
        counts.append(kill_when(start_run(spec, store), store, chunks, extra))
    before = store_status(store).chunks_done if (store / "experiment.json").exists() else 0
    resumed = start_run(spec, store)
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    total = 2 * 2 * -(-n_runs // chunk_size)
    # the resumed run computed only the missing chunks
    assert out.startswith(f"example: {total - before} chunks computed, {before} found stored, {total} of {total}")
    reference = tmp_path / "reference"
    run_experiment(spec, reference)
    killed_table, reference_table = load(store, pulls=True), load(reference, pulls=True)
    assert killed_table.drop(columns="pulls").equals(reference_table.drop(columns="pulls"))
    assert all(np.array_equal(left, right) for left, right in zip(killed_table["pulls"], reference_table["pulls"]))
    return counts, before


def test_a_run_killed_twice_is_completed_by_the_same_command(tmp_path):
    rng = np.random.default_rng(30)
    # the issue's spec on easier instances, 60 replications in chunks of 10: 24 chunks; kill once after a random
    # number of chunks (and a random fraction of a chunk's time, so that the kill may land inside a write), once later
    first = int(rng.integers(2, 8))
    kills = [(first, float(rng.uniform(0, 0.05))), (first + int(rng.integers(2, 8)), float(rng.uniform(0, 0.05)))]
    counts, before = run_killed_and_resumed(tmp_path, kills, n_runs=60, chunk_size=10, easy=True)
    assert 0 < counts[0] <= counts[1] == before < 24


@pytest.mark.slow
def test_runs_killed_at_random_times_including_start_up(tmp_path):
    rng = np.random.default_rng(31)
    kills = [(0, float(rng.uniform(0.0, 1.5)))] + [(int(count), float(rng.uniform(0, 0.1)))
                                                   for count in np.sort(rng.integers(1, 60, size=4))]
    # the issue's spec as written, 300 replications in chunks of 20: 60 chunks
    counts, before = run_killed_and_resumed(tmp_path, kills, n_runs=300, chunk_size=20, easy=False)
    assert counts == sorted(counts) and before < 60
