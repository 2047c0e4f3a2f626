r"""A counter-based stream of uniforms for steps that need a variable number of random numbers.

The engine hands every step of a rule a fixed number of policy uniforms (``uniforms_per_step``): that is what makes a
run reproducible to the bit whatever the chunking, the number of jobs, the batch or the compiled loop. A step whose
number of draws is not bounded in advance (TTTS re-samples the posterior until its arg max changes; Russo 2016)
takes two of its fixed uniforms as a 64-bit *key* and reads as many further uniforms as it needs from the stream of
that key:

.. math::
    z_c = \mathrm{mix}(\kappa + (c + 1)\gamma \bmod 2^{64}), \qquad
    u_c = \bigl(\lfloor z_c / 2^{12} \rfloor + \tfrac12\bigr)\, 2^{-52}, \qquad c = 0, 1, 2, \dots

with :math:`\gamma = \texttt{0x9E3779B97F4A7C15}` and SplitMix64's finaliser :math:`\mathrm{mix}` (Steele, Lea,
Flood 2014, "Fast splittable pseudorandom number generators"; the constants of Vigna's ``splitmix64.c``):
:math:`z \leftarrow (z \oplus (z \gg 30)) \cdot \texttt{0xBF58476D1CE4E5B9}`,
:math:`z \leftarrow (z \oplus (z \gg 27)) \cdot \texttt{0x94D049BB133111EB}`, :math:`z \leftarrow z \oplus
(z \gg 31)`, all modulo :math:`2^{64}`. Uniform :math:`c` is the SplitMix64 output number :math:`c + 1` of the
state :math:`\kappa`, a function of :math:`(\kappa, c)` alone: the draws can be read in any order, in blocks or one
by one, and give the same numbers. :math:`u_c` keeps the top 52 bits of :math:`z_c`, so that
:math:`\lfloor z_c/2^{12}\rfloor + 1/2` is exact in double precision and :math:`u_c \in [2^{-53}, 1 - 2^{-53}]`,
inside the open interval (0, 1) that the posterior quantile functions need.

The key of a step is :math:`\kappa = (\lfloor 2^{53} u \rfloor \ll 11) \oplus \lfloor 2^{53} u' \rfloor` for two of
its policy uniforms :math:`u, u'` (each a multiple of :math:`2^{-53}` plus half a step, so :math:`\lfloor 2^{53}u
\rfloor` holds its 53 random bits).

One implementation serves both paths: :func:`counter_uniform` is written with operations that numpy applies to an
array of counters (the rules' Python ``select``, where numpy wraps unsigned arithmetic modulo :math:`2^{64}` without
a warning) and numba to one counter (:func:`counter_uniform_kernel`, the same code object marked as a compiled kernel,
for the step kernels); the tests compare the two bit for bit, and both with an independent SplitMix64 in Python
integers.

Examples
--------
>>> key = stream_key(0.25, 0.75)
>>> first = counter_uniforms(key, 0, 4)
>>> bool(((0.0 < first) & (first < 1.0)).all()), bool(np.array_equal(counter_uniforms(key, 2, 2), first[2:]))
(True, True)
"""

from __future__ import annotations

import numpy as np

from ..._numba import kernel, kernel_copy

__all__ = ["stream_key", "counter_uniform", "counter_uniforms", "counter_uniform_kernel", "fill_counter_uniforms",
           "STREAM_KEY_UNIFORMS"]

STREAM_KEY_UNIFORMS = 2
"""Policy uniforms a step spends on its stream's key."""

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_ONE = np.uint64(1)
_SHIFT_30, _SHIFT_27, _SHIFT_31 = np.uint64(30), np.uint64(27), np.uint64(31)
_SHIFT_12, _SHIFT_11 = np.uint64(12), np.uint64(11)
_TWO_TO_53 = 9007199254740992.0
_TWO_TO_MINUS_52 = 2.0 ** -52


@kernel
def stream_key(first, second):
    r"""The 64-bit key :math:`(\lfloor 2^{53}u \rfloor \ll 11) \oplus \lfloor 2^{53}u' \rfloor` of two uniforms in
    (0, 1) (numpy.uint64 in Python)."""
    return (np.uint64(first * _TWO_TO_53) << _SHIFT_11) ^ np.uint64(second * _TWO_TO_53)


def counter_uniform(key, counter):
    r"""Uniform number ``counter`` of the stream of ``key`` (module docstring): one counter in compiled code
    (:func:`counter_uniform_kernel`), an array of counters (numpy.uint64) in Python."""
    z = key + (counter + _ONE) * _GAMMA
    z = (z ^ (z >> _SHIFT_30)) * _MIX_1
    z = (z ^ (z >> _SHIFT_27)) * _MIX_2
    z = z ^ (z >> _SHIFT_31)
    return (np.float64(z >> _SHIFT_12) + 0.5) * _TWO_TO_MINUS_52


counter_uniform_kernel = kernel_copy(counter_uniform)
""":func:`counter_uniform` as a compiled kernel (the same code), for step kernels: ``counter_uniform_kernel(key,
np.uint64(counter))``."""


@kernel
def fill_counter_uniforms(key, first, out):
    """Uniforms ``first, ..., first + len(out) - 1`` of the stream of ``key`` into ``out`` (for step kernels: what
    :func:`counter_uniforms` returns, without allocating)."""
    for index in range(out.shape[0]):
        out[index] = counter_uniform_kernel(key, np.uint64(first + index))


def counter_uniforms(key, first: int, count: int) -> np.ndarray:
    """Uniforms ``first, first + 1, ..., first + count - 1`` of the stream of ``key``, as an array.

    Examples
    --------
    >>> counter_uniforms(stream_key(0.5, 0.5), 0, 3).shape
    (3,)
    """
    counters = np.arange(first, first + count, dtype=np.uint64)
    return np.asarray(counter_uniform(np.uint64(key), counters), dtype=float)
