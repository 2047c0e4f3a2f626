"""The counter-based stream of uniforms (allocopt.algorithms.engine.counter_stream) against an independent SplitMix64
written here in Python integers, and its uniforms against scipy's uniform distribution."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from allocopt._numba import compile_kernels
from allocopt.algorithms.engine import counter_stream
from allocopt.algorithms.engine.counter_stream import counter_uniforms, stream_key

MASK = (1 << 64) - 1


def splitmix64(state: int, count: int) -> list[int]:
    """The first ``count`` outputs of Vigna's splitmix64.c from ``state``, in Python integers."""
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def test_the_reference_splitmix64_gives_the_published_first_output():
    # splitmix64 from state 0: its first output is 0xE220A8397B1DCDAF (the value other SplitMix64 ports test against)
    assert splitmix64(0, 1)[0] == 0xE220A8397B1DCDAF


@pytest.mark.parametrize("first, second", [(0.25, 0.75), (1e-16, 1 - 2**-53), (0.123456789, 0.987654321)])
def test_uniforms_are_the_splitmix64_outputs_of_the_key(first, second):
    key = int(first * 2.0**53) << 11 ^ int(second * 2.0**53)
    assert int(stream_key(first, second)) == key & MASK
    expected = [((z >> 12) + 0.5) / 2.0**52 for z in splitmix64(key & MASK, 50)]
    assert counter_uniforms(stream_key(first, second), 0, 50).tolist() == expected
    # counter-based: any window reads the same numbers
    assert counter_uniforms(stream_key(first, second), 17, 5).tolist() == expected[17:22]


def test_the_compiled_kernel_gives_the_same_numbers():
    import numba

    compile_kernels()
    kernel = counter_stream.counter_uniform_kernel
    assert isinstance(kernel, numba.core.registry.CPUDispatcher)
    compiled_key = stream_key(0.3, 0.6)  # the compiled stream_key

    @numba.njit
    def read(key, count):
        out = np.empty(count)
        for counter in range(count):
            out[counter] = kernel(key, np.uint64(counter))
        return out

    plain_key = np.uint64(int(0.3 * 2.0**53) << 11 ^ int(0.6 * 2.0**53))
    assert int(compiled_key) == int(plain_key)
    assert np.array_equal(read(plain_key, 1000), counter_uniforms(plain_key, 0, 1000))


def test_uniforms_are_in_the_open_interval_and_uniform():
    draws = np.concatenate([counter_uniforms(stream_key(u, 1.0 - u), 0, 20000) for u in (0.1, 0.35, 0.6, 0.85, 0.97)])
    assert draws.min() > 0.0 and draws.max() < 1.0
    assert stats.kstest(draws, stats.uniform.cdf).pvalue > 1e-3
    counts = np.histogram(draws, bins=100, range=(0.0, 1.0))[0]
    assert stats.chisquare(counts).pvalue > 1e-3
    # consecutive pairs on a 10 x 10 grid: no dependence between neighbours
    pairs = np.histogram2d(draws[:-1:2], draws[1::2], bins=10, range=[[0, 1], [0, 1]])[0]
    assert stats.chisquare(pairs.ravel()).pvalue > 1e-3
    # the extreme values: 52 bits, half a step from either end
    assert counter_uniforms(np.uint64(0), 0, 1)[0] >= 2.0**-53


def test_streams_of_neighbouring_keys_are_uncorrelated():
    base = stream_key(0.5, 0.5)
    first = counter_uniforms(base, 0, 20000)
    second = counter_uniforms(np.uint64(int(base) + 1), 0, 20000)
    assert abs(stats.pearsonr(first, second).statistic) < 4.0 / np.sqrt(20000)
