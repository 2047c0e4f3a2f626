r"""scipy.special's C functions for the compiled kernels: the same code that the numpy specifications call, so a
posterior sample drawn in a kernel is the number that ``scipy.special`` gives.

The functions are the double versions exported by :mod:`scipy.special.cython_special`, as ctypes function pointers.
A compiled kernel receives them as an argument (a :class:`SpecialFunctions` inside its parameters): numba keeps on
disk the machine code of a function that is passed function pointers, not of one that holds them as globals.
Each takes Cython's trailing ``skip_dispatch`` flag, passed as 0.
"""

from __future__ import annotations

import ctypes
from typing import Any, NamedTuple

__all__ = ["SpecialFunctions", "special_functions"]

_DOUBLE = ctypes.c_double
_FLAG = ctypes.c_int


class SpecialFunctions(NamedTuple):
    """``ndtri(p, 0)``, ``betaincinv(a, b, p, 0)``, ``gammaincinv(a, p, 0)``: the inverse of the standard normal
    distribution function, of the regularised incomplete beta function in its argument and of the regularised
    lower incomplete gamma function in its argument; ``ndtr(x, 0)`` and ``erfcx(x, 0)``: the standard normal
    distribution function and the scaled complementary error function."""

    ndtri: Any
    betaincinv: Any
    gammaincinv: Any
    ndtr: Any
    erfcx: Any


_CACHE: dict[str, SpecialFunctions] = {}


def _pointer(name: str, n_arguments: int):
    from numba.extending import get_cython_function_address

    address = get_cython_function_address("scipy.special.cython_special", name)
    return ctypes.CFUNCTYPE(_DOUBLE, *([_DOUBLE] * n_arguments), _FLAG)(address)


def special_functions() -> SpecialFunctions:
    """The function pointers (built once per process).

    Examples
    --------
    >>> from scipy import special
    >>> functions = special_functions()
    >>> bool(functions.betaincinv(3.0, 5.0, 0.3, 0) == special.betaincinv(3.0, 5.0, 0.3))
    True
    >>> bool(functions.ndtri(0.975, 0) == special.ndtri(0.975))
    True
    """
    functions = _CACHE.get("functions")
    if functions is None:
        functions = _CACHE["functions"] = SpecialFunctions(
            _pointer("ndtri", 1), _pointer("__pyx_fuse_0betaincinv", 3), _pointer("gammaincinv", 2),
            _pointer("__pyx_fuse_1ndtr", 1), _pointer("__pyx_fuse_1erfcx", 1))
    return functions
