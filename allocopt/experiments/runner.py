"""Running an experiment into its store: the missing chunks, here, on joblib workers or on a Dask cluster.

Each chunk is replications ``[start, stop)`` of one (instance, rule) cell, run by
:func:`allocopt.algorithms.run_chunk` wherever the executor puts it; the records come back to the process that
called :func:`run_experiment`, which alone writes the store (one file per chunk, atomically). The records of a
chunk depend only on the spec (the seed, the cell and the range), never on where or when it ran, so a run that is
killed and run again, or run on a cluster, stores the same records as one uninterrupted local run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from .._result import Result
from ..exceptions import InvalidArgumentError
from ._deps import DASK_EXTRA, require
from .spec import ExperimentSpec, load_spec
from .store import ChunkKey, Store, computation_versions

__all__ = ["ExperimentRun", "run_experiment", "compute_chunk", "ChunkTask"]


@dataclass(frozen=True)
class ChunkTask:
    """What a worker needs to compute one chunk: the problem, the rule, the setting's arguments and the seed."""

    key: ChunkKey
    problem: Any
    rule: Any
    options: dict[str, Any]
    seed: int


def compute_chunk(task: ChunkTask) -> tuple[ChunkKey, Any, dict[str, Any]]:
    """Run one chunk (on any worker): its key, its :class:`~allocopt.algorithms.ChunkRecords` and the versions
    that computed it."""
    from ..algorithms import run_chunk

    _, _, start, stop = task.key
    records = run_chunk(task.problem, task.rule, start=start, stop=stop, rng=task.seed, **task.options)
    return task.key, records, {"versions": computation_versions()}


@dataclass(frozen=True, kw_only=True)
class ExperimentRun(Result):
    """Outcome of :func:`run_experiment`.

    Statuses: ``"completed"`` (every chunk is stored and every run stopped) and ``"sample_cap_reached"`` (every
    chunk is stored; some runs reached ``max_samples`` before stopping: their stopping times are the cap).

    Attributes
    ----------
    store : str
    spec_hash : str
    chunks, computed, skipped : int
        Chunks of the experiment, computed by this run, and found stored already.
    records : int
        Rows of the long table (replications times checkpoints, over every cell).
    censored : int
        Replications that reached the sample cap before stopping at every checkpoint.
    bytes : int
        Size of the chunk files.
    executor : str
        ``"local"``, ``"joblib"`` or ``"dask"``.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    store: str
    spec_hash: str
    chunks: int
    computed: int
    skipped: int
    records: int
    censored: int
    bytes: int
    executor: str


class _Progress:
    """Chunks done, on standard error: a tqdm bar when tqdm is installed, else one line rewritten in place."""

    def __init__(self, total: int, enabled: bool, description: str):
        self.total, self.done, self.enabled, self.description = total, 0, enabled and total > 0, description
        self.bar = None
        if self.enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                self._plain()
            else:
                self.bar = tqdm(total=total, unit="chunk", desc=description, file=sys.stderr)

    def _plain(self) -> None:
        sys.stderr.write(f"\r{self.description}: {self.done}/{self.total} chunks ({100 * self.done // self.total}%)")
        sys.stderr.flush()

    def update(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.enabled:
            self._plain()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _tasks(spec: ExperimentSpec, keys: list[ChunkKey]) -> list[ChunkTask]:
    problems = {index: instance.problem() for index, instance in enumerate(spec.instances)}
    rules: dict[tuple[int, int], Any] = {}
    tasks = []
    for key in keys:
        instance, rule = key[0], key[1]
        if (instance, rule) not in rules:
            rules[instance, rule] = spec.rules[rule].rule(spec.instances[instance])
        tasks.append(ChunkTask(key, problems[instance], rules[instance, rule], spec.cell_options(instance), spec.seed))
    return tasks


def _run_local(tasks: list[ChunkTask], n_jobs: int | None) -> Iterator[tuple[ChunkKey, Any, dict[str, Any]]]:
    from ..simulate import parallel_results, worker_count

    workers = worker_count(n_jobs, max(1, len(tasks)))
    if workers == 1:
        for task in tasks:
            yield compute_chunk(task)
        return
    from joblib import Parallel, delayed

    try:
        parallel = Parallel(n_jobs=workers, return_as="generator_unordered")
    except ValueError:  # joblib before 1.4: results in submission order
        parallel = Parallel(n_jobs=workers, return_as="generator")
    yield from parallel_results(parallel, (delayed(compute_chunk)(task) for task in tasks))


def _connect(client: Any) -> tuple[Any, bool]:
    """A Dask client and whether this call opened it (an address is connected to here)."""
    if not isinstance(client, str):
        return client, False
    distributed = require("dask.distributed", "running on a Dask cluster", DASK_EXTRA)
    try:
        return distributed.Client(client, timeout="20s"), True
    except (OSError, TimeoutError, ValueError) as error:
        raise InvalidArgumentError(f"The 'scheduler' parameter of run_experiment must be the address of a running "
                                   f"Dask scheduler. Got {client!r}, which cannot be reached: {error}.") from None


def _run_dask(tasks: list[ChunkTask], client: Any) -> Iterator[tuple[ChunkKey, Any, dict[str, Any]]]:
    distributed = require("dask.distributed", "running on a Dask cluster", DASK_EXTRA)
    futures = [client.submit(compute_chunk, task, pure=False) for task in tasks]
    try:
        for future in distributed.as_completed(futures):
            yield future.result()
    finally:
        client.cancel([future for future in futures if not future.done()])


def _records_count(spec: ExperimentSpec) -> int:
    return sum(spec.rules[j].n_runs * len(instance.checkpoints)
               for instance in spec.instances for j in range(len(spec.rules)))


def _execute(store: Store, tasks: list[ChunkTask], runner: Iterable[tuple[ChunkKey, Any, dict[str, Any]]],
             progress: _Progress, on_chunk: Callable[[ChunkKey], None] | None) -> int:
    computed = 0
    try:
        for key, records, metadata in runner:
            spec = store.spec
            store.write_chunk(key, records, dict(metadata, instance=spec.instances[key[0]].name,
                                                 rule=spec.rules[key[1]].label))
            computed += 1
            progress.update()
            if on_chunk is not None:
                on_chunk(key)
    finally:
        progress.close()
    return computed


def run_experiment(spec: Any, store: Any, *, n_jobs: int | None = None, client: Any = None,
                   scheduler: str | None = None, progress: bool = False, extend: bool = False,
                   on_chunk: Callable[[ChunkKey], None] | None = None) -> ExperimentRun:
    """Run the chunks of ``spec`` that ``store`` does not hold yet, and store them.

    Parameters
    ----------
    spec : str, Path, dict or ExperimentSpec
        See :mod:`allocopt.experiments.spec`; checked before anything is written.
    store : str or Path
        The store directory: new or empty (it is created), or a store of this spec (its chunks are kept and only
        the missing ones run). A store of another spec is refused.
    n_jobs : int, optional
        Local joblib workers (None or 1: this process).
    client : dask.distributed.Client or str, optional
        Run the chunks on this Dask cluster (a client, or a scheduler address to connect to); the records come
        back here and this process writes them.
    scheduler : str, optional
        The address of a Dask scheduler (``tcp://host:8786``; the same as passing it as ``client``).
    progress : bool
        A progress bar of the chunks on standard error (tqdm when installed, else a line of text).
    extend : bool
        Accept a store of this spec with fewer replications (only the replication counts may differ, none
        smaller): the new replications are added.
    on_chunk : callable, optional
        Called with each chunk's key ``(instance, rule, start, stop)`` once it is stored.

    Returns
    -------
    ExperimentRun

    Examples
    --------
    >>> import tempfile
    >>> spec = {"name": "tiny", "seed": 1, "n_runs": 20, "chunk_size": 10,
    ...         "instances": [{"name": "g", "theta": [1.0, 0.5, 0.0], "k": 1, "variance": 0.25}],
    ...         "rules": [{"name": "kkt-ts"}, {"name": "uniform"}], "fixed_confidence": {"delta": [0.1, 0.01]}}
    >>> folder = tempfile.mkdtemp() + "/store"
    >>> first = run_experiment(spec, folder)
    >>> first.status, first.computed, first.records
    ('completed', 4, 80)
    >>> run_experiment(spec, folder).skipped  # everything stored already: nothing runs
    4
    """
    from ..simulate import check_n_jobs

    started = time.perf_counter()
    spec = load_spec(spec)
    n_jobs = check_n_jobs(n_jobs, "run_experiment")
    if scheduler is not None:
        if client is not None:
            raise InvalidArgumentError(f"The 'scheduler' parameter of run_experiment must be left out with a Dask "
                                       f"client (the client knows its scheduler). Got {scheduler!r} instead.")
        if not isinstance(scheduler, str):
            raise InvalidArgumentError(f"The 'scheduler' parameter of run_experiment must be the address of a Dask "
                                       f"scheduler. Got {scheduler!r} instead.")
        client = scheduler
    if client is not None and n_jobs not in (None, 1):
        raise InvalidArgumentError(f"The 'n_jobs' parameter of run_experiment must be left out with a Dask client "
                                   f"(the cluster's workers run the chunks). Got {n_jobs} instead.")
    require("pyarrow", "writing the store")
    if client is not None:  # before the store is touched: a missing extra or an unreachable scheduler writes nothing
        require("dask.distributed", "running on a Dask cluster", DASK_EXTRA)
    dask_client, opened_here = _connect(client) if client is not None else (None, False)
    try:
        with Store.lock(store):
            opened = Store.for_run(store, spec, extend=extend)
            tasks = _tasks(opened.spec, opened.missing())
            bar = _Progress(len(tasks), progress, opened.spec.name)
            runner = _run_local(tasks, n_jobs) if dask_client is None else _run_dask(tasks, dask_client)
            computed = _execute(opened, tasks, runner, bar, on_chunk)
    finally:
        if opened_here and dask_client is not None:
            dask_client.close()
    executor = "dask" if dask_client is not None else "local" if n_jobs in (None, 1) else "joblib"
    return _outcome(opened, computed, time.perf_counter() - started, executor)


def _outcome(store: Store, computed: int, seconds: float, executor: str) -> ExperimentRun:
    grid = store.grid()
    stored = store.stored()
    censored = sum(int(store.chunk_metadata(stored[key]).get("censored", 0)) for key in grid if key in stored)
    done = sum(key in stored for key in grid)
    records = _records_count(store.spec)
    status = "completed" if not censored else "sample_cap_reached"
    size = store.size()
    message = (f"{store.spec.name}: {computed} chunks computed, {len(grid) - computed} found stored, {done} of "
               f"{len(grid)} in the store ({records} records, {size} bytes, {size / max(records, 1):.1f} bytes per "
               "record)")
    if censored:
        cap = store.spec.max_samples if store.spec.max_samples is not None else "the default 10^6"
        message += f"; {censored} runs reached max_samples = {cap} before stopping (their stopping time is the cap)"
    return ExperimentRun(status=status, message=message, method="run_experiment", time=seconds,
                         store=str(Path(store.path)), spec_hash=store.manifest["spec_hash"], chunks=len(grid),
                         computed=computed, skipped=len(grid) - computed, records=records, censored=censored,
                         bytes=size, executor=executor)
