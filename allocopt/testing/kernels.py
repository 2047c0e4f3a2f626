"""A rule's compiled step called directly on one run's state, to compare it with the rule's ``select``, ``stop`` and
``recommend`` (the specification) on hand-made and random states (:func:`~allocopt.testing.rules.check_rule` and the
package's tests). Needs numba."""

from __future__ import annotations

import numpy as np

from ..algorithms.engine.protocol import RunView
from ..algorithms.engine.statistics import top_k_order

__all__ = ["kernel_view", "kernel_state", "compiled_select", "compiled_stop", "compiled_recommend"]


def _compiled(function):
    import numba

    from .._numba import NJIT_OPTIONS

    from ..algorithms.engine.loop import prepare_kernels

    prepare_kernels()
    return numba.njit(**NJIT_OPTIONS)(function)


_CACHE: dict = {}


def _jit(function):
    if function not in _CACHE:
        _CACHE[function] = _compiled(function)
    return _CACHE[function]


def kernel_view(view: RunView, k: int) -> RunView:
    """A one-run view with the types the compiled loop gives (the empirical top-k where the view has none)."""
    counts = np.ascontiguousarray(view.counts, dtype=np.int64)
    sums = np.ascontiguousarray(view.sums, dtype=float)
    means = np.ascontiguousarray(view.means if view.means is not None else sums / counts, dtype=float)
    top, bottom = view.top, view.bottom
    if top is None or bottom is None:
        top, bottom = top_k_order(means, k)
    glr = np.nan if view.glr is None else float(view.glr)
    pair_top = -1 if view.pair_top is None else int(view.pair_top)
    pair_bottom = -1 if view.pair_bottom is None else int(view.pair_bottom)
    return RunView(np.int64(view.t), counts, sums, means, glr, np.ascontiguousarray(top, dtype=np.int64),
                   np.ascontiguousarray(bottom, dtype=np.int64), pair_top, pair_bottom)


def kernel_state(step, state: dict, n_arms: int):
    """The kernel's state (its NamedTuple) over the arrays of ``state`` (leading axis 1, changed in place) and the
    kernel's work arrays."""
    if step.state is None:
        return ()
    arrays = dict(state)
    if step.work_state is not None:
        for name, values in step.work_state(1, n_arms).items():
            arrays.setdefault(name, values)
    return step.state(**{name: arrays[name] for name in step.state._fields})


def compiled_select(rule, context, view: RunView, state: dict, uniforms) -> tuple[int, int, np.ndarray]:
    """The rule's compiled step on run 0 (``state`` with a leading axis of 1): its arm, times and ``each``."""
    step = rule.compiled_step(context)
    assert step is not None, "the rule has no compiled step here"
    row_view = kernel_view(view, context.k)
    kernel = kernel_state(step, state, context.n_arms)
    if step.stop is not None:
        _jit(step.stop)(0, row_view, kernel, step.params)
    each = np.zeros(context.n_arms, dtype=np.int64)
    arm, times = _jit(step.select)(0, row_view, kernel, step.params, np.ascontiguousarray(uniforms, dtype=float),
                                   each)
    return int(arm), int(times), each


def compiled_stop(rule, context, view: RunView, state: dict) -> bool:
    """The rule's compiled ``stop`` on run 0."""
    step = rule.compiled_step(context)
    return bool(_jit(step.stop)(0, kernel_view(view, context.k), kernel_state(step, state, context.n_arms),
                                step.params))


def compiled_recommend(rule, context, view: RunView, state: dict) -> np.ndarray:
    """The rule's compiled ``recommend`` on run 0 (the empirical top-k where it has none)."""
    step = rule.compiled_step(context)
    row_view = kernel_view(view, context.k)
    if step.recommend is None:
        return np.sort(row_view.top)
    out = np.zeros(context.k, dtype=np.int64)
    _jit(step.recommend)(0, row_view, kernel_state(step, state, context.n_arms), step.params, out)
    return out
