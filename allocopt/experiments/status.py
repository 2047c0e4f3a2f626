"""What a store holds: chunks done and to do, per instance and rule (from the file names; nothing is read)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from .._result import Result
from .store import Store

__all__ = ["StoreStatus", "CellStatus", "store_status"]


@dataclass(frozen=True)
class CellStatus:
    """One (instance, rule) cell: chunks and replications stored, of how many."""

    instance: str
    rule: str
    chunks_done: int
    chunks: int
    replications_done: int
    replications: int


@dataclass(frozen=True, kw_only=True)
class StoreStatus(Result):
    """Outcome of :func:`store_status`: status ``"completed"`` (every chunk stored) or ``"incomplete"``.

    Attributes
    ----------
    store, name, spec_hash, setting : str
    cells : tuple of CellStatus
    chunks_done, chunks : int
    bytes : int
        Size of the chunk files.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    store: str
    name: str
    spec_hash: str
    setting: str
    cells: tuple[CellStatus, ...]
    chunks_done: int
    chunks: int
    bytes: int

    def format_table(self) -> str:
        """The cells as a text table."""
        width = max([len("instance")] + [len(cell.instance) for cell in self.cells])
        rule_width = max([len("rule")] + [len(cell.rule) for cell in self.cells])
        lines = [f"{self.name} ({self.setting}), spec hash {self.spec_hash[:12]}, store {self.store}: "
                 f"{self.chunks_done} of {self.chunks} chunks done, {self.chunks - self.chunks_done} to do, "
                 f"{self.bytes} bytes",
                 f"{'instance':<{width}}  {'rule':<{rule_width}}  {'chunks done':>11}  {'to do':>5}  {'replications':>14}"]
        for cell in self.cells:
            lines.append(f"{cell.instance:<{width}}  {cell.rule:<{rule_width}}  {cell.chunks_done:>5} / {cell.chunks:<3}"
                         f"  {cell.chunks - cell.chunks_done:>5}  {cell.replications_done:>6} / {cell.replications:<6}")
        return "\n".join(lines)


def store_status(store: Any) -> StoreStatus:
    """Chunks and replications stored, per (instance, rule) cell, of the experiment in ``store``.

    Examples
    --------
    >>> import tempfile
    >>> from allocopt.experiments import run_experiment
    >>> spec = {"name": "tiny", "seed": 1, "n_runs": 20, "chunk_size": 10,
    ...         "instances": [{"name": "g", "theta": [1.0, 0.5, 0.0], "k": 1, "variance": 0.25}],
    ...         "rules": [{"name": "uniform"}], "fixed_confidence": {"delta": 0.1}}
    >>> folder = tempfile.mkdtemp() + "/store"
    >>> _ = run_experiment(spec, folder)
    >>> status = store_status(folder)
    >>> status.status, status.chunks_done, status.chunks
    ('completed', 2, 2)
    """
    started = time.perf_counter()
    opened = store if isinstance(store, Store) else Store.open(store, "store_status")
    spec = opened.spec
    stored = opened.stored()
    cells = []
    for i, instance in enumerate(spec.instances):
        for j, rule in enumerate(spec.rules):
            ranges = spec.chunks(j)
            done = [(start, stop) for start, stop in ranges if (i, j, start, stop) in stored]
            cells.append(CellStatus(instance.name, rule.label, len(done), len(ranges),
                                    sum(stop - start for start, stop in done), rule.n_runs))
    done_total = sum(cell.chunks_done for cell in cells)
    total = sum(cell.chunks for cell in cells)
    size = sum(path.stat().st_size for path in stored.values())
    complete = done_total == total
    return StoreStatus(status="completed" if complete else "incomplete",
                       message=f"{done_total} of {total} chunks done" + ("" if complete else
                                                                          f", {total - done_total} to do"),
                       method="store_status", time=time.perf_counter() - started, store=str(opened.path),
                       name=spec.name, spec_hash=opened.manifest["spec_hash"], setting=spec.setting,
                       cells=tuple(cells), chunks_done=done_total, chunks=total, bytes=size)
