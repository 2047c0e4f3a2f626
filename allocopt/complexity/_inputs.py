"""Input checks and rank helpers shared by the complexity measures.

Every public measure accepts the means of one instance as a vector of length ``K``, or of many instances as an
array of shape ``(..., K)`` (one instance per leading index). The helpers here validate such arrays with the house
message format (:mod:`allocopt._validation`) and compute the rank statistics the measures are built from.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from .._validation import as_float_array, as_float, as_int, describe, fail
from ..exceptions import InvalidInstanceError

__all__ = [
    "FloatOrArray",
    "as_means",
    "as_subset_size",
    "as_confidence",
    "ranked_descending",
    "top_m_gaps",
    "require_unique_top",
    "instance_label",
]

#: A measure of one instance (a float; numpy returns ``numpy.float64``) or of a batch (an array of shape ``(...)``).
FloatOrArray = Union[float, np.ndarray]

_MEANS_REQUIREMENT = (
    "an array of finite numbers whose last axis holds the means of at least {min_arms} arms "
    "(one instance, or a batch of instances along the leading axes)"
)


def as_means(means: Any, func: str, name: str = "means", *, min_arms: int = 2) -> np.ndarray:
    """A float copy of ``means`` with shape ``(..., K)``, ``K >= min_arms``, every entry finite."""
    requirement = _MEANS_REQUIREMENT.format(min_arms=min_arms)
    array = as_float_array(means, func, name, requirement)
    if array.ndim == 0 or array.shape[-1] < min_arms or array.size == 0:
        fail(func, name, requirement, means)
    if not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[:4].tolist()
        fail(func, name, f"{requirement}; entries at {bad} are not finite", means)
    return array


def as_subset_size(value: Any, n_arms: int, func: str, name: str) -> int:
    """The size of a top subset: an integer in ``1..n_arms - 1`` (the complement must be non-empty)."""
    return as_int(value, func, name, low=1, high=n_arms - 1,
                  requirement=f"an integer in 1..K-1 = 1..{n_arms - 1} (K = {n_arms} arms)")


def as_confidence(delta: Any, func: str) -> float:
    """A target error probability in the open interval (0, 1)."""
    return as_float(delta, func, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                    requirement="a probability in the open interval (0, 1)")


def ranked_descending(means: np.ndarray) -> np.ndarray:
    """The means sorted along the last axis from largest to smallest: ``ranked[..., r - 1] = mu_[r]``."""
    return -np.sort(-means, axis=-1)


def top_m_gaps(means: np.ndarray, ranked: np.ndarray, m: int) -> np.ndarray:
    r"""Top-``m`` gaps in the input order, :math:`\max(\mu_i - \mu_{[m+1]}, \mu_{[m]} - \mu_i)`.

    For an arm of the top ``m`` the first term is the larger, otherwise the second, so this is the case
    definition of Shahrampour and Tarokh (2017), eq. (4), written without cases. Arms tied at the boundary get a zero
    gap.
    """
    upper = ranked[..., m - 1 : m]
    lower = ranked[..., m : m + 1]
    return np.maximum(means - lower, upper - means)


def instance_label(index: tuple[int, ...]) -> str:
    """``""`` for a single instance, ``" (instance (2, 0))"`` for an entry of a batch."""
    return "" if not index else f" (instance {index})"


def require_unique_top(means: np.ndarray, ranked: np.ndarray, m: int, func: str, name: str = "means") -> None:
    """Raise :class:`InvalidInstanceError` unless :math:`\\mu_{[m]} > \\mu_{[m+1]}` in every instance.

    The message names the function, the argument, the requirement, the tied arms (0-based indices in the input
    order) and their common mean.
    """
    upper = ranked[..., m - 1]
    lower = ranked[..., m]
    tied = upper <= lower
    if not np.any(tied):
        return
    index = tuple(int(i) for i in np.argwhere(np.atleast_1d(tied))[0]) if ranked.ndim > 1 else ()
    row = means[index] if index else means
    value = float(upper[index] if index else upper)
    arms = np.flatnonzero(row == value).tolist()
    what = "a unique best arm" if m == 1 else f"a unique top-{m} set"
    raise InvalidInstanceError(
        f"The {name!r} parameter of {func} must have {what} (mu_[{m}] > mu_[{m + 1}] strictly); "
        f"arms {arms} tie at the boundary with mean {value!r}{instance_label(index)}. "
        f"Got {describe(means)} instead."
    )
