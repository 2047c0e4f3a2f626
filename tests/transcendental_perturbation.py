"""numpy's transcendental functions moved by one ulp on about half of their inputs, for ``pytest
--perturb-transcendentals``.

On CPUs with AVX-512 numpy evaluates ``log``, ``exp`` and their relatives with its own vectorised code, whose
results differ from the C library's (which numba's compiled kernels call) in the last bit for some inputs. This
module makes any machine behave like that: each wrapped function returns its result moved one ulp up on the
inputs whose bit pattern hashes to an odd number (the same input always gives the same output, as a real
implementation does). A test that passes under it does not rest on numpy and numba agreeing to the last bit where
a transcendental function enters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

WRAPPED = ("log", "exp", "log1p", "expm1", "log2", "log10", "exp2", "power")
"""The numpy functions that the option perturbs (numpy's AVX-512 code covers these)."""

_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing of the input's bits


class PerturbedUfunc:
    """``ufunc`` with its float64 results moved one ulp up where the first input's bits hash odd."""

    def __init__(self, ufunc: np.ufunc):
        self._ufunc = ufunc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ufunc, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = self._ufunc(*args, **kwargs)
        values = np.asarray(result)
        if values.dtype != np.float64 or not args:
            return result
        first = np.asarray(args[0])
        if first.dtype != np.float64:
            first = first.astype(np.float64)
        first = np.broadcast_to(first, values.shape)
        odd = ((first.view(np.uint64) * _MIX) >> np.uint64(40)) & np.uint64(1)
        moved = np.where(odd.astype(bool) & np.isfinite(values) & (values != 0.0), np.nextafter(values, np.inf), values)
        out = kwargs.get("out")
        if out is not None:
            target = out[0] if isinstance(out, tuple) else out
            target[...] = moved
            return out
        if np.ndim(result) == 0:
            return np.float64(moved)
        return moved


def install() -> None:
    """Replace the functions of :data:`WRAPPED` in the numpy namespace (for the whole test session)."""
    for name in WRAPPED:
        ufunc = getattr(np, name)
        if not isinstance(ufunc, PerturbedUfunc):
            setattr(np, name, PerturbedUfunc(ufunc))
