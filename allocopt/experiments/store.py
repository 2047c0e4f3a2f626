"""The store: a directory that holds one experiment's spec and its records, one Parquet file per chunk.

Layout::

    DIR/experiment.json     the spec in canonical form, its hash, the versions that computed the records
    DIR/spec.toml           the spec as given (spec.json for a spec given as a dict)
    DIR/chunks/III-RRR-SSSSSSSSS-TTTTTTTTT.parquet
                            replications S .. T-1 of rule RRR on instance III (indices in the spec)

Every file is written to a temporary name in its directory, flushed to disk, then renamed over its final name
(:func:`os.replace`, atomic on POSIX and Windows), so a file that exists is complete: a run killed at any moment
(even by SIGKILL) leaves whole chunks and, at worst, a temporary file that the next run removes. A chunk file holds
one row per replication: ``replication``, then for every checkpoint ``c`` (delta or budget, in the spec's order)
``stopping_time.c``, ``correct.c``, ``stopped.c``, ``recommendation.c`` (the k arms) and, in the PAC setting,
``aggregate_regret.c``; for every engine run ``r`` of a replication (one, or one per delta or budget for the rules
that need theirs) ``pulls.r`` (the counts of the K arms when it ended) and the rule's diagnostics
``diagnostic.NAME.r``. Its Parquet metadata (key ``allocopt``) names the instance, the rule, the range, the
versions that computed it, its wall-clock seconds and replication-steps.

A store belongs to one spec: a run with a spec of another identity (what the records depend on, and the name:
:attr:`~allocopt.experiments.ExperimentSpec.identity`) is refused (:class:`StoreMismatchError`); a spec that differs
only in its presentation (``description``, ``[report]``, the instances' ``group`` and ``x``) replaces the stored one,
and ``extend=True`` lets a spec that differs in its replication counts (none smaller) add replications. Only one run
writes to a store at a time (an advisory lock on ``DIR/.lock`` where the platform has :mod:`fcntl`).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import describe
from ..exceptions import AllocoptError, InvalidArgumentError
from ._deps import require
from .spec import ExperimentSpec, canonical_hash

__all__ = ["Store", "StoreMismatchError", "StoreBusyError", "computation_versions", "STORE_FORMAT"]

STORE_FORMAT = 1
MANIFEST = "experiment.json"
CHUNKS = "chunks"
_TEMPORARY = ".tmp-"
_CHUNK_NAME = re.compile(r"^(\d+)-(\d+)-(\d+)-(\d+)\.parquet$")
_METADATA_KEY = b"allocopt"
# the versions whose numbers a chunk's records depend on: a store refuses chunks computed with others
COMPUTATION_PACKAGES = ("allocopt", "numpy", "scipy", "numba")
# zstd pages without column statistics, dictionaries or the serialised Arrow schema: a third of a 100-replication
# chunk's bytes were that overhead (the records read back the same; the test of the store's size measures it)
_PARQUET_OPTIONS = {"compression": "zstd", "write_statistics": False, "use_dictionary": False, "store_schema": False}

ChunkKey = tuple[int, int, int, int]
"""``(instance, rule, start, stop)``: indices in the spec and the range of replications."""


class StoreMismatchError(InvalidArgumentError):
    """The store holds another experiment, or records computed with other versions: nothing is mixed."""


class StoreBusyError(AllocoptError):
    """Another run is writing to the store."""


def computation_versions() -> dict[str, str]:
    """The versions of Python and of the packages a chunk's records depend on."""
    import numba
    import numpy
    import scipy

    from .. import __version__

    return {"python": platform.python_version(), "allocopt": __version__, "numpy": numpy.__version__,
            "scipy": scipy.__version__, "numba": numba.__version__}


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _fsync_directory(directory: Path) -> None:
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def atomic_write(path: Path, write: Callable[[Any], None]) -> None:
    """Write ``path`` through ``write(binary_file)`` into a temporary file of its directory, flush it to disk and
    rename it over ``path``: readers see the old file or the whole new one, never a part.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "chunk.bin"
    >>> atomic_write(path, lambda handle: handle.write(b"records"))
    >>> path.read_bytes(), sorted(item.name for item in path.parent.iterdir())
    (b'records', ['chunk.bin'])
    """
    temporary = path.with_name(f"{_TEMPORARY}{path.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        with open(temporary, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    _fsync_directory(path.parent)


def _write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def _first_difference(stored: Any, given: Any, path: str = "") -> str:
    """The key path of the first place two canonical specs differ."""
    if isinstance(stored, Mapping) and isinstance(given, Mapping):
        for key in sorted(set(stored) | set(given)):
            if stored.get(key) != given.get(key):
                return _first_difference(stored.get(key), given.get(key), f"{path}.{key}" if path else key)
    if isinstance(stored, list) and isinstance(given, list) and len(stored) == len(given):
        for index, (left, right) in enumerate(zip(stored, given)):
            if left != right:
                return _first_difference(left, right, f"{path}[{index}]")
    return path or "(the whole spec)"


@dataclass
class Store:
    """An experiment store (see the module docstring). Open one with :meth:`open` (reading) or :meth:`for_run`.

    Attributes
    ----------
    path : Path
    manifest : dict
        The content of ``experiment.json``.
    spec : ExperimentSpec
        The stored spec.
    """

    path: Path
    manifest: dict[str, Any]
    spec: ExperimentSpec

    # ------------------------------------------------------------------------------------- opening

    @classmethod
    def open(cls, path: Any, func: str = "open_store") -> Store:
        """An existing store (for reading: status, records, reports)."""
        directory = Path(path)
        manifest_path = directory / MANIFEST
        if not manifest_path.is_file():
            raise InvalidArgumentError(f"The 'store' parameter of {func} must be an experiment store (a directory "
                                       f"with {MANIFEST}, made by run_experiment). Got {str(directory)!r} instead"
                                       + (": it does not exist." if not directory.exists() else "."))
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            spec = ExperimentSpec.from_canonical(manifest["spec"], text=cls._spec_text(directory, manifest))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise InvalidArgumentError(f"The 'store' parameter of {func} must be a readable experiment store. "
                                       f"Got {str(directory)!r}, whose {MANIFEST} cannot be read: "
                                       f"{error.__class__.__name__}: {error}.") from None
        if manifest.get("format") != STORE_FORMAT or canonical_hash(manifest["spec"]) != manifest.get("spec_hash"):
            raise InvalidArgumentError(f"The 'store' parameter of {func} must be an experiment store of format "
                                       f"{STORE_FORMAT} whose spec matches its hash. Got {str(directory)!r} instead.")
        return cls(directory, manifest, spec)

    @staticmethod
    def _spec_text(directory: Path, manifest: Mapping[str, Any]) -> str:
        spec_file = directory / str(manifest.get("spec_file", "spec.toml"))
        return spec_file.read_text(encoding="utf-8") if spec_file.is_file() else ""

    @classmethod
    def for_run(cls, path: Any, spec: ExperimentSpec, *, extend: bool = False) -> Store:
        """The store of ``spec`` at ``path``: created when ``path`` does not exist or is empty, opened when it holds
        this spec; refused (:class:`StoreMismatchError`) when it holds another one. A spec that differs only in its
        presentation replaces the stored one; with ``extend=True`` so does one that differs in its replication
        counts, none of them smaller.

        Call it while holding :meth:`lock`."""
        directory = Path(path)
        if directory.exists() and not directory.is_dir():
            raise InvalidArgumentError(f"The 'store' parameter of run_experiment must be a directory (new or empty, "
                                       f"or a store of this spec). Got {str(directory)!r}, which is a file.")
        if not (directory / MANIFEST).is_file():
            leftovers = [entry.name for entry in directory.iterdir()] if directory.exists() else []
            unknown = [name for name in leftovers if not (name.startswith(_TEMPORARY) or name == ".lock")]
            if unknown:
                raise InvalidArgumentError(
                    f"The 'store' parameter of run_experiment must be a new or empty directory, or a store of this "
                    f"spec. Got {str(directory)!r}, which holds {describe(sorted(unknown))} but no {MANIFEST}: it is "
                    "not an experiment store.")
            return cls._create(directory, spec)
        store = cls.open(directory, "run_experiment")
        store._accept(spec, extend)
        if not (directory / store.manifest["spec_file"]).is_file():
            _write_text(directory / store.manifest["spec_file"], spec.text)
        return store

    @classmethod
    def _create(cls, directory: Path, spec: ExperimentSpec) -> Store:
        directory.mkdir(parents=True, exist_ok=True)
        spec_file = "spec.toml" if spec.source is not None else "spec.json"
        manifest = {"format": STORE_FORMAT, "kind": "allocopt experiment store", "spec_hash": spec.hash,
                    "identity": spec.identity, "spec_file": spec_file, "created": _now(),
                    "versions": computation_versions(), "spec": spec.canonical()}
        # experiment.json first: a directory with it is a store; the spec text is written (again) if missing
        _write_text(directory / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True, allow_nan=False))
        _write_text(directory / spec_file, spec.text)
        return cls(directory, manifest, spec)

    def _accept(self, spec: ExperimentSpec, extend: bool) -> None:
        stored = self.manifest
        if stored["spec_hash"] == spec.hash:
            return
        where = _first_difference(stored["spec"], spec.canonical())
        if stored["identity"] != spec.identity:
            raise StoreMismatchError(
                f"The store {str(self.path)!r} holds the experiment {stored['spec']['name']!r} of another spec (hash "
                f"{stored['spec_hash'][:12]}; this spec's is {spec.hash[:12]}; they differ at {where}): a store keeps "
                "one experiment and nothing is mixed. Give a new directory for this spec.")
        counts = [(rule.label, old.n_runs, rule.n_runs) for rule, old in zip(spec.rules, self.spec.rules)]
        smaller = [label for label, old, new in counts if new < old]
        if smaller or (not extend and any(new != old for _, old, new in counts)):
            why = (f"fewer replications for {', '.join(smaller)} than stored (a store only grows)" if smaller else
                   "rerun with --extend (extend=True) to add the replications")
            raise StoreMismatchError(
                f"The store {str(self.path)!r} holds this experiment with other replication counts (they differ at "
                f"{where}): {why}.")
        grid = set(self.grid(spec))
        for key in self.stored():
            if key not in grid:
                (self.path / CHUNKS / self.chunk_name(key)).unlink()  # a last chunk cut short by the old count
        # the same records: more replications (extend) or another presentation (description, report, group, x)
        manifest = dict(stored, spec_hash=spec.hash, spec=spec.canonical(), updated=_now())
        _write_text(self.path / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True, allow_nan=False))
        _write_text(self.path / stored["spec_file"], spec.text)
        self.manifest, self.spec = manifest, spec

    @staticmethod
    @contextlib.contextmanager
    def lock(directory: Any) -> Iterator[None]:
        """Hold the store's write lock (an advisory lock on ``DIR/.lock``) for the block; remove the temporary
        files a killed run left. Raises :class:`StoreBusyError` when another run holds it."""
        path = Path(directory)
        if path.exists() and not path.is_dir():
            raise InvalidArgumentError(f"The 'store' parameter of run_experiment must be a directory (new or empty, "
                                       f"or a store of this spec). Got {str(path)!r}, which is a file.")
        path.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # no advisory locks here: one run at a time is the user's to keep
            yield
            return
        with open(path / ".lock", "a+b") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise StoreBusyError(f"Another run is writing to the store {str(path)!r}; wait for it to end (or "
                                     "end it) and run again: completed chunks are kept.") from None
            for folder in (path, path / CHUNKS):
                if folder.is_dir():
                    for entry in folder.iterdir():
                        if entry.name.startswith(_TEMPORARY):
                            entry.unlink()
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    # ------------------------------------------------------------------------------------- chunks

    def grid(self, spec: ExperimentSpec | None = None) -> list[ChunkKey]:
        """Every chunk of the spec, instance by instance, rule by rule, in replication order."""
        spec = spec or self.spec
        return [(i, j, start, stop) for i in range(len(spec.instances)) for j in range(len(spec.rules))
                for start, stop in spec.chunks(j)]

    @staticmethod
    def chunk_name(key: ChunkKey) -> str:
        """The file name of a chunk.

        Examples
        --------
        >>> Store.chunk_name((0, 3, 200, 300))
        '000-003-000000200-000000300.parquet'
        """
        instance, rule, start, stop = key
        return f"{instance:03d}-{rule:03d}-{start:09d}-{stop:09d}.parquet"

    def stored(self) -> dict[ChunkKey, Path]:
        """The chunk files present, by key (complete files: they are renamed into place whole)."""
        folder = self.path / CHUNKS
        if not folder.is_dir():
            return {}
        found = {}
        for entry in folder.iterdir():
            match = _CHUNK_NAME.match(entry.name)
            if match:
                found[tuple(int(value) for value in match.groups())] = entry
        return found  # type: ignore[return-value]

    def missing(self) -> list[ChunkKey]:
        """The chunks of the grid not stored yet, in grid order."""
        stored = self.stored()
        return [key for key in self.grid() if key not in stored]

    def write_chunk(self, key: ChunkKey, records: Any, metadata: Mapping[str, Any]) -> Path:
        """Write one chunk's :class:`~allocopt.algorithms.ChunkRecords` atomically; refuse records computed with
        other versions than the store's."""
        versions = metadata["versions"]
        differing = {name: (self.manifest["versions"].get(name), versions.get(name)) for name in COMPUTATION_PACKAGES
                     if self.manifest["versions"].get(name) != versions.get(name)}
        if differing:
            raise StoreMismatchError(
                f"The chunk {self.chunk_name(key)} was computed with other versions than the records of the store "
                f"{str(self.path)!r} (" + ", ".join(f"{name} {old} in the store, {new} here" for name, (old, new)
                                                    in differing.items()) + "): nothing is mixed. Run with the "
                "store's versions, or give a new directory.")
        pq = require("pyarrow.parquet", "writing the store")
        table = records_table(records, dict(metadata, identity=self.manifest["identity"], key=list(key)))
        folder = self.path / CHUNKS
        folder.mkdir(exist_ok=True)
        path = folder / self.chunk_name(key)
        atomic_write(path, lambda handle: _write_parquet(pq, table, handle))
        return path

    def chunk_metadata(self, path: Path) -> dict[str, Any]:
        """The ``allocopt`` metadata of a chunk file."""
        pq = require("pyarrow.parquet", "reading the store")
        schema = pq.read_schema(path)
        return json.loads((schema.metadata or {})[_METADATA_KEY])

    def read_chunk(self, key: ChunkKey, path: Path) -> tuple[Any, dict[str, Any]]:
        """A chunk's pyarrow table and metadata, checked against the store and the key."""
        pq = require("pyarrow.parquet", "reading the store")
        table = pq.read_table(path)
        metadata = json.loads((table.schema.metadata or {})[_METADATA_KEY])
        if metadata.get("identity") != self.manifest["identity"] or tuple(metadata.get("key", ())) != key:
            raise StoreMismatchError(f"The chunk file {str(path)!r} does not belong to the store {str(self.path)!r} "
                                     "(its metadata names another experiment or range).")
        return table, metadata

    def size(self) -> int:
        """Bytes of the chunk files."""
        return sum(path.stat().st_size for path in self.stored().values())


def _write_parquet(pq: Any, table: Any, handle: Any) -> None:
    """One row group; the ``allocopt`` metadata as the file's key-value metadata (with the Arrow schema, which
    carries it, only where pyarrow cannot add key-value metadata to a file, before pyarrow 15)."""
    metadata = table.schema.metadata
    if not hasattr(pq.ParquetWriter, "add_key_value_metadata"):
        pq.write_table(table, handle, **dict(_PARQUET_OPTIONS, store_schema=True))
        return
    with pq.ParquetWriter(handle, table.schema.remove_metadata(), **_PARQUET_OPTIONS) as writer:
        writer.write_table(table.replace_schema_metadata(None))
        writer.add_key_value_metadata({key.decode(): value.decode() for key, value in metadata.items()})


def records_table(records: Any, metadata: Mapping[str, Any]) -> Any:
    """The pyarrow table of one chunk's records (one row per replication; see the module docstring)."""
    pa = require("pyarrow", "writing the store")
    columns: dict[str, Any] = {"replication": pa.array(np.arange(records.start, records.stop, dtype=np.int64))}
    k = records.recommendations.shape[-1]
    for column in range(records.checkpoints.shape[0]):
        columns[f"stopping_time.{column}"] = pa.array(records.stopping_times[:, column])
        columns[f"correct.{column}"] = pa.array(records.correct[:, column])
        columns[f"stopped.{column}"] = pa.array(records.stopped[:, column])
        arms = pa.array(records.recommendations[:, column].astype(np.int32).reshape(-1))
        columns[f"recommendation.{column}"] = pa.FixedSizeListArray.from_arrays(arms, k)
        if records.aggregate_regret is not None:
            columns[f"aggregate_regret.{column}"] = pa.array(records.aggregate_regret[:, column])
    n_arms = records.run_pulls.shape[-1]
    for run in range(records.run_pulls.shape[1]):
        counts = pa.array(np.ascontiguousarray(records.run_pulls[:, run]).reshape(-1))
        columns[f"pulls.{run}"] = pa.FixedSizeListArray.from_arrays(counts, n_arms)
        for name, values in records.diagnostics.items():
            columns[f"diagnostic.{name}.{run}"] = pa.array(values[:, run])
    table = pa.table(columns)
    payload = dict(metadata, status=records.status, checkpoints=records.checkpoints.tolist(),
                   checkpoint_run=records.checkpoint_run.tolist(), replication_steps=records.replication_steps,
                   max_samples=records.max_samples, censored=int((~records.stopped).any(axis=1).sum()),
                   seconds=records.time)
    return table.replace_schema_metadata({_METADATA_KEY: json.dumps(payload, sort_keys=True).encode()})
