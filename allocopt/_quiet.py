"""Keep third-party solvers off the caller's terminal.

Some solvers write from compiled code straight to the process's file descriptors 1 and 2 (HiGHS prints its
banner when the first ``highspy.Highs`` object is built, whatever the options), which neither ``msg=False``
nor :func:`contextlib.redirect_stdout` can stop. :func:`silenced_output` points both descriptors at the null
device for the duration of a call and restores them afterwards (Python's own ``sys.stdout``/``sys.stderr``
buffers are flushed first, so nothing the caller printed before is lost or reordered); ``sys.stdout`` and
``sys.stderr`` are replaced too, for solvers that print from Python while those are not the descriptors
(under pytest's capture, in a notebook).

The redirection is process-wide: output written by another thread during the call is discarded as well.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

__all__ = ["silenced_output"]


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.flush()


@contextlib.contextmanager
def silenced_output(enabled: bool = True) -> Iterator[None]:
    """Discard everything written to file descriptors 1 and 2 inside the block (nothing when ``enabled`` is False).

    Examples
    --------
    >>> import os
    >>> with silenced_output():
    ...     _ = os.write(1, b"not shown")
    >>> print("shown")
    shown
    """
    if not enabled:
        yield
        return
    _flush()
    null = os.open(os.devnull, os.O_WRONLY)
    saved = []
    try:
        for descriptor in (1, 2):
            try:
                saved.append((descriptor, os.dup(descriptor)))
            except OSError:  # the descriptor is closed: nothing to protect
                continue
            os.dup2(null, descriptor)
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    finally:
        _flush()
        for descriptor, copy in saved:
            os.dup2(copy, descriptor)
            os.close(copy)
        os.close(null)
