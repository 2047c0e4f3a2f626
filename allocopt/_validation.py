"""Input validation shared by every layer.

Each checker takes the name of the public function (``func``) and of the argument (``name``) so that the
error message reads like::

    The 'k' parameter of TopKProblem must be an integer in 1..K-1 = 1..4. Got 5 instead.

Checkers return a normalised copy and never modify their input.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

import numpy as np

from .exceptions import InvalidArgumentError

__all__ = [
    "describe",
    "fail",
    "as_float_array",
    "as_float_vector",
    "as_float_matrix",
    "as_int",
    "as_positive_float",
    "as_float",
    "as_choice",
    "as_bool",
    "check_in_simplex",
]


def describe(value: Any, limit: int = 120) -> str:
    """A short, unambiguous rendering of ``value`` for error messages."""
    if isinstance(value, np.ma.MaskedArray):
        text = f"masked array {value}"
    elif isinstance(value, np.ndarray):
        with np.printoptions(threshold=12, edgeitems=4, precision=6):
            text = np.array2string(value, separator=", ")
        text = f"array of shape {value.shape}: {text}" if value.ndim != 1 or value.size > 12 else text
    else:
        text = repr(value)
    text = " ".join(text.split())  # one line, however many rows the array has
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def fail(func: str, name: str, requirement: str, value: Any, *,
         error: type[Exception] = InvalidArgumentError) -> NoReturn:
    """Raise ``error`` with the house message format."""
    raise error(f"The {name!r} parameter of {func} must be {requirement}. Got {describe(value)} instead.")


def _not_numbers(array: np.ndarray) -> bool:
    """Whether an array holds text or booleans rather than numbers (numpy would convert either to floats)."""
    if array.dtype.kind in "USb":
        return True
    return array.dtype.kind == "O" and any(isinstance(item, (str, bytes, bool, np.bool_)) for item in array.flat)


def as_float_array(value: Any, func: str, name: str, requirement: str) -> np.ndarray:
    """A float copy of ``value``, any shape; text, booleans and masked entries are refused (never converted or
    dropped) with ``requirement`` in the message.

    Examples
    --------
    >>> as_float_array([1, 2.5], "f", "x", "numbers").tolist()
    [1.0, 2.5]
    >>> as_float_array([True, False], "f", "x", "numbers")
    Traceback (most recent call last):
    ...
    allocopt.exceptions.InvalidArgumentError: The 'x' parameter of f must be numbers (numbers: not text, not booleans). Got [True, False] instead.
    """
    if isinstance(value, (str, bytes, bool, np.bool_)):
        fail(func, name, requirement, value)
    if isinstance(value, np.ma.MaskedArray) and np.ma.getmaskarray(value).any():
        fail(func, name, f"{requirement}, with no masked entry (fill or drop the masked entries first)", value)
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        fail(func, name, requirement, value)
    if _not_numbers(raw):
        fail(func, name, f"{requirement} (numbers: not text, not booleans)", value)
    try:
        return np.array(raw, dtype=float, copy=True)
    except (TypeError, ValueError):
        fail(func, name, requirement, value)


def as_float_vector(
    value: Any,
    func: str,
    name: str,
    *,
    length: int | None = None,
    min_length: int = 1,
    finite: bool = True,
    allow_scalar: bool = False,
) -> np.ndarray:
    """A one-dimensional float array, finite by default, optionally of a given length.

    With ``allow_scalar=True`` a scalar is broadcast to ``length`` (which must then be given).
    """
    what = "a one-dimensional array of finite numbers" if finite else "a one-dimensional array of numbers"
    if length is not None:
        what += f" of length {length}"
    elif min_length > 1:
        what += f" of length at least {min_length}"
    array = as_float_array(value, func, name, what)
    if allow_scalar and array.ndim == 0:
        if length is None:
            fail("as_float_vector", "length", "given with allow_scalar=True", length)
        array = np.full(length, float(array))
    if array.ndim != 1:
        fail(func, name, what, value)
    if length is not None and array.shape[0] != length:
        fail(func, name, what, value)
    if array.shape[0] < min_length:
        fail(func, name, what, value)
    if finite and not np.all(np.isfinite(array)):
        bad = np.flatnonzero(~np.isfinite(array))
        fail(func, name, f"{what} (entries {bad.tolist()} are not finite)", value)
    return array


def as_float_matrix(
    value: Any,
    func: str,
    name: str,
    *,
    shape: tuple[int | None, int | None] = (None, None),
    finite: bool = True,
) -> np.ndarray:
    """A two-dimensional float array with optional fixed row and column counts."""
    rows, cols = shape
    what = "a two-dimensional array of finite numbers" if finite else "a two-dimensional array of numbers"
    if rows is not None or cols is not None:
        what += f" of shape ({'any' if rows is None else rows}, {'any' if cols is None else cols})"
    array = as_float_array(value, func, name, what)
    if array.ndim != 2:
        fail(func, name, what, value)
    if (rows is not None and array.shape[0] != rows) or (cols is not None and array.shape[1] != cols):
        fail(func, name, what, value)
    if finite and not np.all(np.isfinite(array)):
        bad = [(int(row), int(col)) for row, col in np.argwhere(~np.isfinite(array))[:10]]
        where = ", ".join(f"[{row}, {col}]" for row, col in bad)
        fail(func, name, f"{what} (entries (row, column) {where} are not finite)", value)
    return array


def as_int(value: Any, func: str, name: str, *, low: int | None = None, high: int | None = None,
           requirement: str | None = None) -> int:
    """An integer in ``low..high`` (inclusive bounds, each optional); booleans are refused."""
    if requirement is None:
        if low is not None and high is not None:
            requirement = f"an integer in {low}..{high}"
        elif low is not None:
            requirement = f"an integer >= {low}"
        elif high is not None:
            requirement = f"an integer <= {high}"
        else:
            requirement = "an integer"
    if isinstance(value, (bool, np.bool_)):
        fail(func, name, requirement, value)
    try:
        integer = operator.index(value)
    except TypeError:
        if isinstance(value, numbers.Real) and float(value).is_integer():
            integer = int(float(value))
        else:
            fail(func, name, requirement, value)
    if (low is not None and integer < low) or (high is not None and integer > high):
        fail(func, name, requirement, value)
    return int(integer)


def as_float(value: Any, func: str, name: str, *, low: float | None = None, high: float | None = None,
             low_open: bool = False, high_open: bool = False, requirement: str | None = None) -> float:
    """A finite float within optional (open or closed) bounds."""
    if requirement is None:
        parts = []
        if low is not None:
            parts.append(f"{'>' if low_open else '>='} {low}")
        if high is not None:
            parts.append(f"{'<' if high_open else '<='} {high}")
        requirement = "a finite number" + (" " + " and ".join(parts) if parts else "")
    if isinstance(value, (bool, np.bool_, str, bytes)):
        fail(func, name, requirement, value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        fail(func, name, requirement, value)
    if not np.isfinite(number):
        fail(func, name, requirement, value)
    if low is not None and (number < low or (low_open and number == low)):
        fail(func, name, requirement, value)
    if high is not None and (number > high or (high_open and number == high)):
        fail(func, name, requirement, value)
    return number


def as_positive_float(value: Any, func: str, name: str) -> float:
    """A finite float > 0."""
    return as_float(value, func, name, low=0.0, low_open=True, requirement="a finite number > 0")


def as_choice(value: Any, func: str, name: str, choices: Iterable[str]) -> str:
    """One of ``choices`` (strings); the message lists the valid ones."""
    options: Sequence[str] = tuple(choices)
    if not isinstance(value, str) or value not in options:
        fail(func, name, "one of " + ", ".join(repr(option) for option in options), value)
    return value


def as_bool(value: Any, func: str, name: str) -> bool:
    """A boolean (Python or numpy)."""
    if not isinstance(value, (bool, np.bool_)):
        fail(func, name, "True or False", value)
    return bool(value)


def check_in_simplex(psi: Any, func: str, name: str, *, length: int, tol: float = 1e-9) -> np.ndarray:
    """A point of the probability simplex of dimension ``length``: entries >= 0 summing to 1 within ``tol``.

    Returns a float copy (not renormalised).
    """
    requirement = f"a point of the probability simplex in R^{length} (nonnegative entries summing to 1 within {tol:g})"
    array = as_float_array(psi, func, name, requirement)
    if array.ndim != 1 or array.shape[0] != length or not np.all(np.isfinite(array)):
        fail(func, name, requirement, psi)
    if np.any(array < -tol):
        negative = np.flatnonzero(array < -tol)
        fail(func, name, f"{requirement}; entries {negative.tolist()} are negative", psi)
    total = float(array.sum())
    if abs(total - 1.0) > tol:
        fail(func, name, f"{requirement}; the entries sum to {total!r}", psi)
    return array
