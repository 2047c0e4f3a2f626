"""The CBMAI linear program and its standard form.

A CBMAI instance has ``K`` arms and ``L`` cost types. Arm ``a`` has mean reward ``r_a`` and mean costs
``c[l, a]``; the cost bounds are ``cbar``. The best mixed arm solves

.. math::

    \\max_p \\{ r^T p : c\\,p \\le \\bar c,\\ 1^T p = 1,\\ p \\ge 0 \\}                     \\qquad (LP)

and, with slack variables :math:`s \\in \\mathbb R^L_+`, :math:`x = (p, s)`, :math:`\\mu = (r, 0_L)`,

.. math::

    A = \\begin{pmatrix} c & I_L \\\\ 1_K^T & 0_L^T \\end{pmatrix}, \\quad
    b = \\begin{pmatrix} \\bar c \\\\ 1 \\end{pmatrix}, \\qquad
    \\max \\{ \\mu^T x : A x = b,\\ x \\ge 0 \\}                                            \\qquad (3)

Column ``K + l`` of ``A`` (0-based) is the slack of cost ``l``: the "virtual arm" ``K + l``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_matrix, as_float_vector, as_int, fail

__all__ = ["CBMAIProblem", "arm_label", "as_arm_subset"]


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False, init=False)
class CBMAIProblem:
    """A constrained best-mixed-arm identification instance (Tang, Jain, Nayyar, Nuzzo, Section 2).

    Parameters
    ----------
    rewards : array_like, shape (K,)
        Mean rewards :math:`r_a`.
    costs : array_like, shape (L, K)
        Mean costs :math:`c_{l,a}` (one row per cost type).
    bounds : array_like, shape (L,)
        Cost bounds :math:`\\bar c_l`.
    n_unknown : int, optional
        :math:`K_0`: arms ``0 .. n_unknown-1`` are unknown (learned by sampling), arms ``n_unknown .. K-1``
        are known exactly. Default: all ``K`` arms are unknown. Must be in ``1..K``.

    Attributes
    ----------
    n_arms : int
        ``K``.
    n_costs : int
        ``L``.
    n_columns : int
        ``K + L``, the number of columns of ``A`` (true and virtual arms).

    Notes
    -----
    Arrays are stored as read-only float copies. The instance is immutable; :meth:`with_means` builds a
    perturbed copy (for example from empirical means).

    Examples
    --------
    >>> import allocopt
    >>> problem = allocopt.CBMAIProblem([1.0, 0.5], [[2.0, 0.0]], [1.0])
    >>> A, b, mu = problem.standard_form()
    >>> A
    array([[2., 0., 1.],
           [1., 1., 0.]])
    >>> b, mu
    (array([1., 1.]), array([1. , 0.5, 0. ]))
    """

    rewards: np.ndarray
    costs: np.ndarray
    bounds: np.ndarray
    n_unknown: int
    _standard_form: tuple[np.ndarray, np.ndarray, np.ndarray] = field(init=False, repr=False)

    def __init__(self, rewards: ArrayLike, costs: ArrayLike, bounds: ArrayLike, n_unknown: int | None = None) -> None:
        # the inputs are array_like; the fields hold read-only float arrays (and n_unknown the resolved integer:
        # None means every arm is unknown)
        func = "CBMAIProblem"
        rewards = as_float_vector(rewards, func, "rewards")
        n_arms = rewards.shape[0]
        costs_array = as_float_matrix(costs, func, "costs", shape=(None, n_arms))
        if costs_array.shape[0] < 1:
            fail(func, "costs", f"a two-dimensional array with at least one row and {n_arms} columns", costs)
        costs = costs_array
        n_costs = costs.shape[0]
        bounds = as_float_vector(bounds, func, "bounds", length=n_costs)
        n_unknown = n_arms if n_unknown is None else as_int(n_unknown, func, "n_unknown", low=1, high=n_arms)
        object.__setattr__(self, "rewards", _read_only(rewards))
        object.__setattr__(self, "costs", _read_only(costs))
        object.__setattr__(self, "bounds", _read_only(bounds))
        object.__setattr__(self, "n_unknown", n_unknown)
        matrix = np.zeros((n_costs + 1, n_arms + n_costs))
        matrix[:n_costs, :n_arms] = costs
        matrix[:n_costs, n_arms:] = np.eye(n_costs)
        matrix[n_costs, :n_arms] = 1.0
        rhs = np.append(bounds, 1.0)
        objective = np.concatenate([rewards, np.zeros(n_costs)])
        object.__setattr__(self, "_standard_form", tuple(_read_only(item) for item in (matrix, rhs, objective)))

    @property
    def n_arms(self) -> int:
        """``K``, the number of (true) arms."""
        return int(self.rewards.shape[0])

    @property
    def n_costs(self) -> int:
        """``L``, the number of cost types (and of slack variables)."""
        return int(self.costs.shape[0])

    @property
    def n_columns(self) -> int:
        """``K + L``, true and virtual arms."""
        return self.n_arms + self.n_costs

    @property
    def known_arms(self) -> np.ndarray:
        """Indices ``n_unknown .. K-1`` of the arms whose means are known."""
        return np.arange(self.n_unknown, self.n_arms)

    def standard_form(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(A, b, mu)`` of the standard form (3), as read-only arrays.

        ``A`` has shape ``(L+1, K+L)``: the cost rows ``[c, I_L]`` and the row ``[1_K, 0_L]``;
        ``b = (cbar, 1)`` and ``mu = (r, 0_L)``.
        """
        return self._standard_form

    def with_means(self, rewards: ArrayLike | None = None, costs: ArrayLike | None = None) -> "CBMAIProblem":
        """A copy with other mean rewards and/or costs (same shapes, bounds and ``n_unknown``)."""
        func = "CBMAIProblem.with_means"
        if rewards is not None:
            rewards = as_float_vector(rewards, func, "rewards", length=self.n_arms)
        if costs is not None:
            costs = as_float_matrix(costs, func, "costs", shape=(self.n_costs, self.n_arms))
        return CBMAIProblem(self.rewards if rewards is None else rewards, self.costs if costs is None else costs,
                            self.bounds, self.n_unknown)

    @classmethod
    def from_reference(cls, name: str) -> "CBMAIProblem":
        """The instance ``name`` of :data:`allocopt.cbmai.instances.CBMAI_INSTANCES` (for example ``"cbmai-d2p"``).

        Examples
        --------
        >>> CBMAIProblem.from_reference("cbmai-d2p")
        CBMAIProblem(K=24, L=2, n_unknown=24, rewards=[ 0.08  0.28 -0.02 ...  1.16  1.04  1.24], bounds=[1. 1.])
        """
        from .instances import CBMAI_INSTANCES  # here: problem.py is imported by instances' package

        names = list(CBMAI_INSTANCES)
        if not isinstance(name, str) or name not in names:
            fail("CBMAIProblem.from_reference", "name", "the name of a CBMAI reference instance, one of "
                 + ", ".join(repr(key) for key in names), name)
        parameters = CBMAI_INSTANCES[name].parameters
        return cls(parameters["rewards"], parameters["costs"], parameters["bounds"],
                   parameters.get("n_unknown", len(parameters["rewards"])))

    def arm_label(self, column: int) -> str:
        """``"arm a"`` for a true arm, ``"slack l"`` for the virtual arm ``K + l`` (0-based)."""
        return arm_label(column, self.n_arms)

    def __repr__(self) -> str:
        return (f"CBMAIProblem(K={self.n_arms}, L={self.n_costs}, n_unknown={self.n_unknown}, "
                f"rewards={np.array2string(self.rewards, threshold=8, precision=4)}, "
                f"bounds={np.array2string(self.bounds, precision=4)})")


def arm_label(column: int, n_arms: int) -> str:
    """Human-readable name of column ``column`` of ``A`` (true arm or slack)."""
    return f"arm {column}" if column < n_arms else f"slack {column - n_arms}"


def as_arm_subset(arms: Any, problem: CBMAIProblem, func: str, name: str = "arms", *,
                  allow_empty: bool = False) -> np.ndarray:
    """Validate a subset of the columns ``0 .. K+L-1`` (true and virtual arms); ``None`` means all.

    Returns a sorted array of distinct integer column indices; an empty collection is refused unless
    ``allow_empty`` (an LP over no column is not a question anyone means to ask).
    """
    n_columns = problem.n_columns
    requirement = (f"None or a {'' if allow_empty else 'nonempty '}collection of distinct column indices in "
                   f"0..{n_columns - 1} (arms 0..{problem.n_arms - 1}, slacks {problem.n_arms}..{n_columns - 1})")
    if arms is None:
        return np.arange(n_columns)
    if isinstance(arms, (str, bytes)):
        fail(func, name, requirement, arms)
    try:
        array = np.asarray(arms)
    except (TypeError, ValueError):
        fail(func, name, requirement, arms)
    if array.ndim != 1 or (array.size and (array.dtype == bool or not np.issubdtype(array.dtype, np.integer))):
        fail(func, name, requirement, arms)
    if array.size == 0 and not allow_empty:
        fail(func, name, requirement, arms)
    array = array.astype(int)
    if np.any(array < 0) or np.any(array >= n_columns) or np.unique(array).size != array.size:
        fail(func, name, requirement, arms)
    return np.sort(array)
