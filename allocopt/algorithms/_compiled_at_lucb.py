r"""Compiled (numba) AT-LUCB step over a batch of runs, the twin of the numpy methods of
:class:`allocopt.algorithms.ATLUCB` (Jun and Nowak 2016, Algorithm 2).

One call does, row by row, what :meth:`~allocopt.algorithms.ATLUCB.advance` (the stage search, steps 1-2) and
then :meth:`~allocopt.algorithms.ATLUCB.revised` with :func:`allocopt.algorithms.lucb.critical_arms` (step 3) do
in numpy:

* the bounds at stage :math:`s`, with :math:`\ell_t = \log(5K/4) + 4\log t` (``base_level``, computed in numpy by
  the caller, so that both twins use numpy's logarithm) and
  :math:`\log(1/\delta_s) = \log(1/\delta_1) + (s-1)\log(1/\alpha)`:
  :math:`\hat\mu_a \mp \sqrt{2\sigma_a^2(\ell_t + \log(1/\delta_s))/N_a}` (minus on High, plus on Low);
* :math:`\mathrm{TERM}(t, \delta_s, \epsilon)`: :math:`\max_{\text{Low}} U_a - \min_{\text{High}} L_a < \epsilon`;
* the stage :math:`S(t)`: :math:`S(t-1)` when TERM fails there, else the first stage after it where TERM fails,
  found by the same exponential then binary search as the numpy form (the same stages are probed, in the same
  order), and the answer :math:`J(t)` (High when TERM held at :math:`S(t-1)` or :math:`S(t) = 1`);
* optionally :math:`h_t` and :math:`l_t` at :math:`\delta_{S(t)}`, ties broken as
  :func:`allocopt._rng.random_candidate` does: the :math:`\lfloor u c\rfloor`-th of the :math:`c` tied arms,
  in the order of ``top`` (``bottom``).

The floating-point operations are those of the numpy form, in the same order (IEEE doubles, no fast-math, so no
reassociation or fused multiply-add; the square root is correctly rounded in both), so the twins agree bit for
bit; ``tests/algorithms/test_compiled_at_lucb.py`` compares them on random states with ties, near-ties, k = 1 and
k = K - 1, and through the runners' outcomes.

Why compiled: the numpy step builds about twenty (R, K) temporaries and calls ``take_along_axis``, ``where``
and the tie-break several times per step (the stage search more at the steps where TERM holds); AT-LUCB was
about half of the time of Shahrampour and Tarokh's (2017) Figure 2 experiment. The kernel computes each bound
once per probed stage, and the arms at :math:`S(t)` from the bounds of the last probe when the stage stays.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._numba import compile_once

__all__ = ["ATLUCBStep", "compiled_at_lucb_step"]


class ATLUCBStep(NamedTuple):
    """One AT-LUCB step of a batch: the stage :math:`S(t)` (R,), the answer :math:`J(t)` (R, K) as a mask, and the
    arms :math:`h_t`, :math:`l_t` (R,) to pull (-1 when not asked for)."""

    stage: np.ndarray
    answer: np.ndarray
    h: np.ndarray
    l: np.ndarray


def _revise(means, counts, twice_variance, level, top, bottom, revised):
    """The bounds of one row at one level: LCB on High, UCB on Low (written into ``revised``)."""
    for index in range(top.shape[0]):
        arm = top[index]
        revised[arm] = means[arm] - np.sqrt(twice_variance[arm] * level / counts[arm])
    for index in range(bottom.shape[0]):
        arm = bottom[index]
        revised[arm] = means[arm] + np.sqrt(twice_variance[arm] * level / counts[arm])


def _term(revised, top, bottom, epsilon):
    lowest = np.inf
    for index in range(top.shape[0]):
        if revised[top[index]] < lowest:
            lowest = revised[top[index]]
    highest = -np.inf
    for index in range(bottom.shape[0]):
        if revised[bottom[index]] > highest:
            highest = revised[bottom[index]]
    return highest - lowest < epsilon


def _probe(means, counts, twice_variance, level, top, bottom, epsilon, revised):
    _revise(means, counts, twice_variance, level, top, bottom, revised)
    return _term(revised, top, bottom, epsilon)


def _pick(revised, arms, lowest, uniform):
    """The arm of ``arms`` of smallest (``lowest``) or largest bound, the floor(u c)-th of its c ties."""
    extreme = revised[arms[0]]
    ties = 1
    for index in range(1, arms.shape[0]):
        value = revised[arms[index]]
        if value < extreme if lowest else value > extreme:
            extreme = value
            ties = 1
        elif value == extreme:
            ties += 1
    pick = min(int(uniform * ties), ties - 1)
    for index in range(arms.shape[0]):
        if revised[arms[index]] == extreme:
            if pick == 0:
                return arms[index]
            pick -= 1
    return arms[0]


def _at_lucb_rows(means, counts, base_level, twice_variance, top, bottom, previous, answer, log_delta1, log_alpha,
                  epsilon, uniforms, select, stage, answer_out, h, l):
    n_rows, n_arms = means.shape
    revised = np.empty(n_arms)
    for row in range(n_rows):
        row_means, row_counts, row_top, row_bottom = means[row], counts[row], top[row], bottom[row]
        base = base_level[row]
        start = previous[row]
        terminated = _probe(row_means, row_counts, twice_variance, base + (log_delta1 + (float(start) - 1.0) * log_alpha),
                            row_top, row_bottom, epsilon, revised)
        current = start
        if terminated:
            low = start
            high = start + 1
            step = 1
            while _probe(row_means, row_counts, twice_variance, base + (log_delta1 + (float(high) - 1.0) * log_alpha),
                         row_top, row_bottom, epsilon, revised):
                low = high
                step = 2 * step
                high = start + step
            while high - low > 1:
                middle = (low + high) // 2
                if _probe(row_means, row_counts, twice_variance,
                          base + (log_delta1 + (float(middle) - 1.0) * log_alpha), row_top, row_bottom, epsilon,
                          revised):
                    low = middle
                else:
                    high = middle
            current = high
        stage[row] = current
        if terminated or current == 1:
            answer_out[row, :] = False
            for index in range(row_top.shape[0]):
                answer_out[row, row_top[index]] = True
        else:
            answer_out[row, :] = answer[row, :]
        if select:
            if current != start:  # else the bounds at S(t) = S(t-1) are in revised already
                _revise(row_means, row_counts, twice_variance, base + (log_delta1 + (float(current) - 1.0) * log_alpha),
                        row_top, row_bottom, revised)
            h[row] = _pick(revised, row_top, True, uniforms[row, 0])
            l[row] = _pick(revised, row_bottom, False, uniforms[row, 1])
        else:
            h[row] = -1
            l[row] = -1


# the row kernel calls the helpers by their global names: they are compiled first (_probe calls _revise and _term)
_COMPILED = compile_once(globals(), rebind=("_revise", "_term", "_pick", "_probe"), kernels={"rows": "_at_lucb_rows"})


def _kernel():
    return _COMPILED()["rows"]


def compiled_at_lucb_step(means: np.ndarray, counts: np.ndarray, t: np.ndarray, variance: np.ndarray,
                          top: np.ndarray, bottom: np.ndarray, previous: np.ndarray, answer: np.ndarray, *,
                          delta1: float, alpha: float, epsilon: float,
                          uniforms: np.ndarray | None = None) -> ATLUCBStep:
    r"""AT-LUCB's stage :math:`S(t)`, answer :math:`J(t)` and, given ``uniforms`` (R, 2), the arms :math:`h_t`,
    :math:`l_t` at :math:`\delta_{S(t)}`, for a batch of runs (see the module docstring).

    Parameters
    ----------
    means, counts : ndarray, shape (R, K)
        Empirical means (float64) and pull counts (at least 1).
    t : ndarray, shape (R,)
        Pulls so far.
    variance : ndarray, shape (K,)
        Sub-Gaussian variance :math:`\sigma_a^2`.
    top, bottom : ndarray, shapes (R, k), (R, K - k)
        The empirical top-k (High) and the other arms (Low).
    previous : ndarray, shape (R,)
        :math:`S(t-1)`.
    answer : ndarray of bool, shape (R, K)
        :math:`J(t-1)` as a mask.
    delta1, alpha, epsilon : float
        The rule's parameters.

    Examples
    --------
    With 1000 pulls of each arm the bounds at :math:`\delta_1` separate High = {0, 1} from Low (TERM holds),
    so the stage moves on to the first level where they overlap again:

    >>> means = np.array([[0.9, 0.8, 0.2, 0.1]])
    >>> step = compiled_at_lucb_step(means, np.full((1, 4), 1000), np.array([4000]), np.full(4, 0.25),
    ...                              np.array([[0, 1]]), np.array([[2, 3]]), np.array([1]), np.zeros((1, 4), bool),
    ...                              delta1=0.5, alpha=0.99, epsilon=0.0, uniforms=np.array([[0.5, 0.5]]))
    >>> int(step.stage[0]) > 1, step.answer.tolist(), int(step.h[0]), int(step.l[0])
    (True, [[True, True, False, False]], 1, 2)
    """
    means = np.ascontiguousarray(means, dtype=np.float64)
    n_rows, n_arms = means.shape
    select = uniforms is not None
    stage = np.empty(n_rows, dtype=np.int64)
    answer_out = np.empty((n_rows, n_arms), dtype=bool)
    h = np.empty(n_rows, dtype=np.int64)
    l = np.empty(n_rows, dtype=np.int64)
    # the numpy form's level, term by term: math.log of the constants, numpy's log of t
    base_level = np.ascontiguousarray(math.log(5.0 * n_arms / 4.0) + 4.0 * np.log(np.asarray(t, dtype=float)),
                                      dtype=np.float64)
    if base_level.shape != (n_rows,):
        base_level = np.broadcast_to(base_level, (n_rows,)).copy()
    _kernel()(means, np.ascontiguousarray(counts, dtype=np.int64), base_level,
              np.ascontiguousarray(2.0 * np.asarray(variance, dtype=float)),
              np.ascontiguousarray(top, dtype=np.int64), np.ascontiguousarray(bottom, dtype=np.int64),
              np.ascontiguousarray(previous, dtype=np.int64), np.ascontiguousarray(answer, dtype=bool),
              -math.log(delta1), -math.log(alpha), float(epsilon),
              np.ascontiguousarray(uniforms if select else np.zeros((n_rows, 2)), dtype=np.float64), select,
              stage, answer_out, h, l)
    return ATLUCBStep(stage, answer_out, h, l)

