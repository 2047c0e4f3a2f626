"""The compiled empirical top-k against its numpy twin, and both against the definition written out in the test:
arm a is in the top-k of a row when fewer than k arms have a larger value, or an equal value and a smaller
index (the first k entries of a stable sort by decreasing value)."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms._compiled_top_k import compiled_top_k_order
from allocopt.algorithms.statistics import top_k_order, top_k_order_numpy

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")


def definition(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    tops, bottoms = [], []
    for row in values:
        ahead = [sum(1 for other in range(row.size) if row[other] > row[arm] or (row[other] == row[arm] and other < arm))
                 for arm in range(row.size)]
        tops.append([arm for arm in range(row.size) if ahead[arm] < k])
        bottoms.append([arm for arm in range(row.size) if ahead[arm] >= k])
    return np.array(tops), np.array(bottoms)


@pytest.mark.parametrize("n_arms", [2, 3, 7, 50])
def test_compiled_top_k_equals_the_numpy_twin_and_the_definition(n_arms):
    generator = np.random.default_rng(n_arms)
    for k in sorted({1, n_arms // 2 or 1, n_arms - 1}):
        ties = generator.integers(0, 4, (60, n_arms)) / 4.0  # Bernoulli-like means: many ties, across the boundary
        distinct = generator.standard_normal((60, n_arms))
        signed_zero = np.where(generator.random((10, n_arms)) < 0.5, -0.0, 0.0)  # -0.0 == 0.0: a tie
        for values in (ties, distinct, signed_zero):
            compiled = compiled_top_k_order(values, k)
            numpy_top, numpy_bottom = top_k_order_numpy(values, k)
            expected_top, expected_bottom = definition(values, k)
            assert np.array_equal(compiled.top, numpy_top) and np.array_equal(compiled.bottom, numpy_bottom)
            assert np.array_equal(compiled.top, expected_top) and np.array_equal(compiled.bottom, expected_bottom)


def test_top_k_order_dispatch_gives_the_same_split_with_and_without_the_kernels():
    values = np.random.default_rng(3).integers(0, 3, (40, 12)) / 2.0
    with compiled_kernels(False):
        reference = top_k_order(values, 3)
    with compiled_kernels(True):
        compiled = top_k_order(values, 3)
    assert all(np.array_equal(a, b) for a, b in zip(reference, compiled))
    single_top, single_bottom = top_k_order(values[5], 3)  # one run (1-D) always takes numpy
    assert np.array_equal(single_top, reference[0][5]) and np.array_equal(single_bottom, reference[1][5])
