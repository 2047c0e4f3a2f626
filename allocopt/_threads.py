"""Single-threaded BLAS around small dense linear algebra.

OpenBLAS (and MKL) start one thread per core for every dense operation above a small size. For the
matrices of the solvers (a few hundred rows) the threads' start-up and synchronisation cost far more than
the arithmetic, and on a loaded machine they can make a Cholesky factorisation a thousand times slower.
:func:`single_blas_thread` limits the BLAS libraries loaded by the process to one thread for the duration
of a ``with`` block, whatever the caller's environment (``OMP_NUM_THREADS`` and friends) says, and restores
the previous limits afterwards. Entering the block costs tens of microseconds, so it wraps whole dense
computations (an interior-point path, a sparse refinement), never a fast path.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

__all__ = ["single_blas_thread"]

_CONTROLLER = None


def _controller():
    global _CONTROLLER
    if _CONTROLLER is None:
        import scipy.linalg  # noqa: F401  (scipy's own BLAS must be loaded before the libraries are listed)
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """Context manager: one BLAS thread inside the block (the previous limits are restored on exit).

    Examples
    --------
    >>> import numpy as np
    >>> with single_blas_thread():
    ...     value = float(np.linalg.cholesky(np.eye(3) * 4.0)[0, 0])
    >>> value
    2.0
    """
    with _controller().limit(limits=1, user_api="blas"):
        yield
