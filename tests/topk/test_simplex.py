"""The projection on the probability simplex: the numpy specification against a projection computed independently
(a bisection on the shift tau of max(v - tau, 0), whose sum falls from above 1 to 0), and its compiled twin against
the specification, bit for bit (the same operations: a sort, a running sum left to right, one division)."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt._numba import compile_kernels
from allocopt.topk import simplex
from allocopt.topk.simplex import project_to_simplex

pytest.importorskip("numba")


def bisection_projection(vector: np.ndarray) -> np.ndarray:
    """max(v - tau, 0) with sum 1: tau between min(v) - 1 (sum >= 1) and max(v) (sum 0), by bisection."""
    low, high = float(vector.min()) - 1.0, float(vector.max())
    for _ in range(200):
        middle = 0.5 * (low + high)
        if np.maximum(vector - middle, 0.0).sum() > 1.0:
            low = middle
        else:
            high = middle
    return np.maximum(vector - 0.5 * (low + high), 0.0)


def vectors():
    rng = np.random.default_rng(3)
    yield from (rng.normal(size=size) for size in (1, 2, 5, 20))
    yield rng.dirichlet(np.full(6, 0.3))  # already on the simplex
    yield np.array([0.5, 0.5, 0.5, -1.0])  # ties
    yield np.array([2.0, 0.0, 0.0])  # one vertex
    yield np.array([1e-300, -1e-300, 3e-300])  # tiny magnitudes
    yield np.array([1e12, 1e12 - 1.0, 0.0])  # large magnitudes


def test_the_projection_is_the_bisections_and_the_compiled_one_is_the_same_bits():
    compile_kernels()
    assert hasattr(simplex.project_into_simplex, "py_func")  # the numba dispatcher
    for vector in vectors():
        expected = project_to_simplex(vector)
        np.testing.assert_allclose(expected, bisection_projection(vector), atol=1e-12)
        got = np.empty_like(vector)
        simplex.project_into_simplex(vector, np.empty_like(vector), got)
        assert np.array_equal(got, expected), vector
