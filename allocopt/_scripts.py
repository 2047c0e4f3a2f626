"""Helpers for the command line and for the scripts of ``examples/`` and ``benchmarks/``.

* Progress on a terminal: :func:`progress_on_terminal` says whether a progress bar should be shown (standard
  error is a terminal and tqdm is installed), :func:`progress_iter` wraps a loop in one when it should. Run
  from ``make``, a pipe or a file, the scripts stay quiet.
* Measured figures in the documentation: a script that measures something writes it into a marked section of
  a page of ``docs/`` (:func:`write_docs_section`), headed by the provenance of the run
  (:class:`MeasuredRun`: the command, the date, the machine, the load average at the start and the end, the
  wall-clock and CPU time, the versions), so that no measured figure is typed by hand. A script that prints its
  figures can keep what it printed with :func:`tee_stdout`.

Examples
--------
>>> run = MeasuredRun.start()
>>> line = run.provenance("python benchmarks/example.py --write-docs")
>>> line.startswith("Written by `python benchmarks/example.py --write-docs` on ")
True
>>> "load average" in line and "cores" in line
True
>>> list(progress_iter(range(3), desc="quiet under pytest"))
[0, 1, 2]
>>> with tee_stdout() as printed:
...     print("measured: 1.5 ms")
measured: 1.5 ms
>>> printed.getvalue().splitlines()
['measured: 1.5 ms']
"""

from __future__ import annotations

import contextlib
import datetime
import io
import os
import platform
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

__all__ = ["progress_on_terminal", "progress_iter", "MeasuredRun", "write_marked_section", "write_docs_section",
           "script_command", "tee_stdout"]

T = TypeVar("T")


def progress_on_terminal() -> bool:
    """Whether to show a progress bar: standard error is a terminal and tqdm can be imported."""
    if not sys.stderr.isatty():
        return False
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def progress_iter(iterable: Iterable[T], *, total: int | None = None, desc: str | None = None) -> Iterator[T]:
    """``iterable`` inside a tqdm bar (on standard error) when :func:`progress_on_terminal`, else unchanged."""
    if not progress_on_terminal():
        yield from iterable
        return
    from tqdm.auto import tqdm

    yield from tqdm(iterable, total=total, desc=desc, leave=False)


def _load_average() -> float | None:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def script_command() -> str:
    """``python <folder>/<script> <arguments>``, the way the running script was started from the repository."""
    script = Path(sys.argv[0]).resolve()
    return " ".join(["python", f"{script.parent.name}/{script.name}", *sys.argv[1:]])


@dataclass(frozen=True)
class MeasuredRun:
    """When and where a measurement started; :meth:`provenance` describes the whole run once it is done."""

    started: datetime.datetime
    wall_start: float
    cpu_start: float
    load_at_start: float | None

    @classmethod
    def start(cls) -> MeasuredRun:
        """Record the start of a measurement (call it before measuring)."""
        return cls(datetime.datetime.now(datetime.timezone.utc), time.perf_counter(), time.process_time(),
                   _load_average())

    def provenance(self, command: str | None = None) -> str:
        """One sentence: the command, the date, the machine, the load, the wall-clock and CPU time, the
        versions and whether BLAS thread variables were set."""
        import numpy

        from . import __version__

        def load(value: float | None) -> str:
            return "unknown" if value is None else f"{value:.1f}"

        blas = [name for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if name in os.environ]
        return (f"Written by `{command or script_command()}` on {self.started:%Y-%m-%d %H:%M} UTC: "
                f"{platform.machine()} ({_cpu_model()}), {os.cpu_count()} cores, load average "
                f"{load(self.load_at_start)} at the start and {load(_load_average())} at the end (the machine may "
                f"be shared); {time.perf_counter() - self.wall_start:.1f} s wall-clock, "
                f"{time.process_time() - self.cpu_start:.1f} s CPU in this process; Python "
                f"{platform.python_version()}, numpy {numpy.__version__}, allocopt {__version__}; BLAS thread "
                f"variables {'set: ' + ', '.join(blas) if blas else 'unset'}.")


def write_marked_section(page: Path, begin: str, end: str, block: str, *, heading: str | None = None) -> None:
    """Put ``block`` (which starts with the marker ``begin`` and ends with ``end``) in place of the page's section
    between those markers, or append it to the page; a page that does not exist yet starts with ``heading``."""
    if page.exists():
        text = page.read_text()
    elif heading is not None:
        text = heading
    else:
        raise FileNotFoundError(page)
    if begin in text:
        before, rest = text.split(begin, 1)
        text = before + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    page.write_text(text)


def write_docs_section(page: Path, name: str, run: MeasuredRun, body: Iterable[str], *,
                       markers: tuple[str, str] | None = None) -> None:
    """Write the lines ``body`` under the provenance of ``run`` into the section ``name`` of ``page``, between the
    markers ``<!-- name: written by its script, do not edit -->`` and ``<!-- name: end -->`` (or the pair
    ``markers`` of a page written before this convention)."""
    begin, end = markers or (f"<!-- {name}: written by its script, do not edit -->", f"<!-- {name}: end -->")
    write_marked_section(page, begin, end, "\n".join([begin, "", run.provenance(), "", *body, "", end]))


class _Tee(io.StringIO):
    """Keeps what is written and passes it on to the stream it replaces."""

    def __init__(self, stream) -> None:
        super().__init__()
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(text)
        return super().write(text)

    def flush(self) -> None:
        self._stream.flush()


@contextlib.contextmanager
def tee_stdout() -> Iterator[io.StringIO]:
    """Print as usual inside the block, and keep a copy: ``getvalue()`` of the object it yields."""
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        yield tee
