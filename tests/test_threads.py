"""One BLAS thread inside the solvers' dense blocks, whatever the environment says."""

import numpy as np
import scipy.linalg  # noqa: F401  (both BLAS libraries loaded before counting)
from threadpoolctl import threadpool_info

from allocopt._threads import single_blas_thread


def _blas_threads():
    return [entry["num_threads"] for entry in threadpool_info() if entry["user_api"] == "blas"]


def test_single_blas_thread_limits_and_restores():
    np.linalg.cholesky(np.eye(2))  # make sure numpy's BLAS is loaded
    before = _blas_threads()
    assert before  # numpy ships a BLAS that threadpoolctl can see
    with single_blas_thread():
        assert all(threads == 1 for threads in _blas_threads())
    assert _blas_threads() == before
