"""How the tests compare a compiled kernel with its numpy specification.

Additions, multiplications, divisions and square roots are correctly rounded IEEE operations in numpy and in
numba (no fast-math), so where only they enter the two agree bit for bit on every machine, and the tests say
``array_equal``. ``log``, ``exp`` and their relatives are not: numba calls the C library, numpy its own loops,
which on CPUs with AVX-512 differ from the C library in the last ulp for some inputs. Where they enter, each side
is within its stated error bound of the exact value (for the pair kernels, the family's ``pair_error_bound``), so
the two agree within the sum of the bounds, and a decision (an arg min, an arm) is the same unless another
candidate lies within that tolerance. ``pytest --perturb-transcendentals`` moves numpy's results by one ulp on half
of the inputs, so that any machine checks that no test rests on the last bit of a transcendental function.
"""

from __future__ import annotations

import numpy as np

EPS = float(np.finfo(float).eps)


def relative_error(got, expected) -> np.ndarray:
    """``|got - expected| / |expected|`` elementwise, 0 where they are equal (infinities and NaNs included)."""
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    with np.errstate(all="ignore"):
        relative = np.abs(got - expected) / np.abs(expected)
    return np.where(same, 0.0, relative)


def assert_within(got, expected, bound, what="") -> None:
    """Every entry of ``got`` within relative ``bound`` (scalar or elementwise) of ``expected``."""
    error = relative_error(got, expected)
    bound = np.broadcast_to(np.asarray(bound, dtype=float), error.shape)
    bad = np.flatnonzero(~(error <= bound))
    assert bad.size == 0, (what, bad[:5].tolist(), error.reshape(-1)[bad[:5]].tolist(), bound.reshape(-1)[bad[:5]].tolist())


def minimiser_within(values, chosen, bound) -> bool:
    """Whether index ``chosen`` of ``values`` is a minimiser up to relative ``bound`` (the decision of a side whose
    values differ from these within the bound)."""
    values = np.asarray(values, dtype=float)
    smallest = values.min()
    return bool(values[chosen] <= smallest + bound * abs(smallest))
