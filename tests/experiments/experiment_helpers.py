"""Small specs and synthetic stores shared by the tests of allocopt.experiments."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

# the spec of issue 30, as written there (fewer replications: the tests run it)
ISSUE_SPEC = """\
name = "example"
seed = 20261128
n_runs = 3000
chunk_size = 100
max_samples = 200000

[[instances]]
name = "gauss6"
theta = [1.0, 0.9, 0.8, 0.5, 0.4, 0.3]
k = 2
family = "gaussian"
variance = 0.25

[[instances]]
name = "bern5"
theta = [0.7, 0.6, 0.5, 0.4, 0.3]
k = 2
family = "bernoulli"

[[rules]]
name = "kkt-ts"

[[rules]]
name = "uniform"

[fixed_confidence]
delta = [0.1, 0.01]
"""


def issue_spec(n_runs: int = 60, chunk_size: int = 20, easy: bool = False) -> str:
    """The issue's spec with fewer replications (``easy``: instances with wider gaps, whose runs stop about ten
    times sooner)."""
    text = ISSUE_SPEC.replace("n_runs = 3000", f"n_runs = {n_runs}").replace("chunk_size = 100",
                                                                             f"chunk_size = {chunk_size}")
    if easy:
        text = text.replace("variance = 0.25", "variance = 0.02").replace("[0.7, 0.6, 0.5, 0.4, 0.3]",
                                                                           "[0.9, 0.8, 0.3, 0.2, 0.1]")
    return text


TINY: dict[str, Any] = {
    "name": "tiny", "seed": 11, "n_runs": 30, "chunk_size": 10, "max_samples": 100000,
    "instances": [{"name": "gauss4", "theta": [1.0, 0.8, 0.2, 0.0], "k": 2, "variance": 0.25},
                  {"name": "bern4", "theta": [0.7, 0.5, 0.4, 0.2], "k": 1, "family": "bernoulli"}],
    "rules": [{"name": "kkt-ts"}, {"name": "uniform"}],
    "fixed_confidence": {"delta": [0.1, 0.01]},
}


def tiny(**changes: Any) -> dict[str, Any]:
    """A deep copy of :data:`TINY` with top-level keys replaced."""
    spec = copy.deepcopy(TINY)
    spec.update(changes)
    return spec


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes), to compare a store before and after."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def synthetic_records(start: int, stop: int, checkpoints: Any, *, n_arms: int, k: int, rng: np.random.Generator,
                      scale: float = 1000.0, separate: bool = False, setting: str = "confidence"):
    """ChunkRecords with made-up numbers (for the store's size and the report's figures: nothing is simulated).

    Stopping times are lognormal around ``scale`` and grow with log(1/delta); a run's counts add up to its last
    stopping time; about one recommendation in 500 is wrong."""
    from allocopt.algorithms import ChunkRecords

    checkpoints = np.asarray(checkpoints)
    n, n_check = stop - start, checkpoints.shape[0]
    base = rng.lognormal(np.log(scale), 0.5, size=n)
    growth = np.log(1 / checkpoints) / np.log(10) if setting == "confidence" else np.ones(n_check)
    times = np.maximum(n_arms, (base[:, None] * growth[None, :])).astype(np.int64)
    if setting == "budget":
        times = np.broadcast_to(checkpoints.astype(np.int64), (n, n_check)).copy()
    recommendations = np.tile(np.arange(k), (n, n_check, 1))
    wrong = rng.random((n, n_check)) < 0.002
    recommendations[wrong, 0] = k
    weights = rng.dirichlet(np.ones(n_arms) * 2)
    runs = n_check if separate else 1
    ends = times if separate else times[:, -1:]
    pulls = np.stack([rng.multinomial(ends[:, run], weights) for run in range(runs)], axis=1)
    return ChunkRecords(status="completed", method="synthetic", time=0.5, setting=setting, start=start, stop=stop,
                        checkpoints=checkpoints, stopping_times=times, recommendations=recommendations,
                        correct=~wrong, stopped=np.ones((n, n_check), dtype=bool), run_pulls=pulls,
                        checkpoint_run=np.arange(n_check) if separate else np.zeros(n_check, dtype=np.int64),
                        entropy=0, max_samples=10**6, replication_steps=int(times[:, -1].sum()))


def fill_synthetic(store, rng: np.random.Generator, *, scales: dict[str, float] | None = None,
                   separate: tuple[str, ...] = ()) -> None:
    """Write synthetic records for every chunk of ``store`` (an open :class:`~allocopt.experiments.Store`)."""
    from allocopt.experiments.store import computation_versions

    spec = store.spec
    versions = computation_versions()
    for key in store.grid():
        instance, rule = spec.instances[key[0]], spec.rules[key[1]]
        records = synthetic_records(key[2], key[3], instance.checkpoints, n_arms=len(instance.theta), k=instance.k,
                                    rng=rng, scale=(scales or {}).get(rule.label, 1000.0),
                                    separate=rule.label in separate, setting=spec.setting)
        store.write_chunk(key, records, {"versions": versions, "instance": instance.name, "rule": rule.label})
