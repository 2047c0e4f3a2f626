r"""AT-LUCB (Jun and Nowak 2016, Algorithm 2): anytime top-k identification with LUCB1's bounds.

Confidence levels :math:`\delta_s = \delta_1\alpha^{s-1}`, :math:`s = 1, 2, \dots` (stages). With the
empirical top-k "High", the other arms "Low" and LUCB1's radius at level :math:`\delta` (Kalyanakrishnan et
al. 2012, with the sub-Gaussian :math:`\sigma_a` of :mod:`allocopt.algorithms.engine.confidence_bounds`)

.. math:: \beta_a(t, \delta) = \sqrt{2\sigma_a^2 \log(5 K t^4/(4\delta)) / N_a},

:math:`h_t(\delta) = \arg\min_{\text{High}} \hat\mu_a - \beta_a`, :math:`l_t(\delta) = \arg\max_{\text{Low}}
\hat\mu_a + \beta_a`, and :math:`\mathrm{TERM}(t, \delta, \epsilon)`: :math:`U_{l_t} - L_{h_t} < \epsilon`.
At each step (``t`` the number of pulls so far):

1. if :math:`\mathrm{TERM}(t, \delta_{S(t-1)}, \epsilon)`: :math:`S(t)` = the smallest :math:`s > S(t-1)`
   with :math:`\neg\mathrm{TERM}(t, \delta_s, \epsilon)`, and :math:`J(t)` = High;
2. else :math:`S(t) = S(t-1)`, and :math:`J(t)` = High if :math:`S(t) = 1`, else :math:`J(t-1)`;
3. pull both :math:`h_t(\delta_{S(t)})` and :math:`l_t(\delta_{S(t)})` (ties at random, two uniforms).

The answer at any time is :math:`J(t)` (the ``recommend`` hook), so the rule is anytime: one run of
:func:`~allocopt.algorithms.identify_fixed_budget` serves every budget (Shahrampour and Tarokh compare NSAR
with it this way). Step 1 is found by exponential then binary search over :math:`s` (TERM is
monotone in :math:`\delta`); the compiled step (:func:`at_lucb_step`) probes the same stages. The step is idempotent at a fixed :math:`t`, so the
stopping check and the recommendation recompute it without consuming randomness.

Fixed confidence (our addition, for :func:`~allocopt.algorithms.identify`): stop as soon as :math:`J(t)`
was certified at a level no larger than the target, :math:`S(t) \ge 2` and :math:`\delta_{S(t)-1} \le
\delta`. Defaults :math:`\delta_1 = 0.5`, :math:`\alpha = 0.99`, :math:`\epsilon = 0` are our choice (the
algorithm takes any :math:`\delta_1, \alpha \in (0, 1)`). Gaussian and Bernoulli rewards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..._numba import kernel
from ..._validation import as_float
from ..engine.loop import EACH, GROW, copy_into, pick_among
from ..engine.confidence_bounds import SUBGAUSSIAN_FAMILIES, subgaussian_variance
from .lucb import _pull_both, critical_arms, in_top_mask
from ..engine.protocol import PullEach, RuleContext, RunView, StepKernel, register_policy

__all__ = ["ATLUCB", "ATLUCBStage"]


class ATLUCBStage(NamedTuple):
    """Stage :math:`S(t)` (shape () or (R,)) and the answer :math:`J(t)` (a mask over the arms)."""

    stage: np.ndarray
    answer: np.ndarray


@dataclass(frozen=True)
class ATLUCB:
    r"""AT-LUCB (see the module docstring).

    Parameters
    ----------
    delta1 : float, default 0.5
        :math:`\delta_1 \in (0, 1)`.
    alpha : float, default 0.99
        :math:`\alpha \in (0, 1)`: :math:`\delta_s = \delta_1\alpha^{s-1}`.
    epsilon : float, default 0
        TERM's accuracy.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify_fixed_budget
    >>> problem = TopKProblem([0.9, 0.8, 0.2, 0.1], k=2, family="bernoulli")
    >>> result = identify_fixed_budget(problem, ATLUCB(), [20, 400], n_runs=40, rng=0)
    >>> bool(result.error_rate[1] <= result.error_rate[0])
    True
    """

    delta1: float = 0.5
    alpha: float = 0.99
    epsilon: float = 0.0
    name = "at-lucb"
    families = SUBGAUSSIAN_FAMILIES  # Hoeffding radii: the runners refuse poisson, exponential and gamma arms
    stopping = "rule"
    uses_glr = False

    def __post_init__(self):
        as_float(self.delta1, "ATLUCB", "delta1", low=0.0, high=1.0, low_open=True, high_open=True)
        as_float(self.alpha, "ATLUCB", "alpha", low=0.0, high=1.0, low_open=True, high_open=True)
        as_float(self.epsilon, "ATLUCB", "epsilon", low=0.0)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 2

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        subgaussian_variance(context.family, context.dispersion, "ATLUCB")
        return {"stage": np.ones((n_runs, 1), dtype=np.int64), "answer": np.zeros((n_runs, context.n_arms), dtype=bool)}

    def log_inverse_delta(self, stage) -> np.ndarray:
        r""":math:`\log(1/\delta_s) = \log(1/\delta_1) + (s - 1)\log(1/\alpha)`."""
        return -math.log(self.delta1) + (np.asarray(stage, dtype=float) - 1.0) * -math.log(self.alpha)

    def revised(self, context: RuleContext, view: RunView, stage) -> np.ndarray:
        """LCB in High, UCB in Low at level :math:`\\delta_s` (``stage`` of shape () or (R,))."""
        variance = subgaussian_variance(context.family, context.dispersion, "ATLUCB")
        level = (math.log(5.0 * context.n_arms / 4.0) + 4.0 * np.log(np.asarray(view.t, dtype=float))
                 + self.log_inverse_delta(stage))
        radius = np.sqrt(2.0 * variance * np.asarray(level)[..., None] / view.counts)
        return np.where(in_top_mask(view.top, context.n_arms), view.means - radius, view.means + radius)

    def term(self, context: RuleContext, view: RunView, stage) -> np.ndarray:
        r""":math:`\mathrm{TERM}(t, \delta_s, \epsilon)`: :math:`U_{l_t} - L_{h_t} < \epsilon`."""
        revised = self.revised(context, view, stage)
        lowest = np.take_along_axis(revised, view.top, axis=-1).min(axis=-1)
        highest = np.take_along_axis(revised, view.bottom, axis=-1).max(axis=-1)
        return highest - lowest < self.epsilon

    def advance(self, context: RuleContext, view: RunView, state) -> ATLUCBStage:
        """:math:`S(t)` and :math:`J(t)` from :math:`S(t-1)`, :math:`J(t-1)` (steps 1-2; not stored)."""
        previous = state["stage"][..., 0]
        terminated = self.term(context, view, previous)
        # exponential search for a stage where TERM fails, then binary search for the first one
        low = previous.copy()
        high = np.where(terminated, previous + 1, previous)
        searching = terminated.copy()
        step = np.ones_like(previous)
        while np.any(searching):
            still = searching & self.term(context, view, high)
            low = np.where(still, high, low)
            step = np.where(still, 2 * step, step)
            high = np.where(still, previous + step, high)
            searching = still
        while np.any(high - low > 1):
            middle = (low + high) // 2
            holds = self.term(context, view, middle)
            wide = high - low > 1
            low = np.where(wide & holds, middle, low)
            high = np.where(wide & ~holds, middle, high)
        stage = np.where(terminated, high, previous)
        refresh = terminated | (stage == 1)
        answer = np.where(np.asarray(refresh)[..., None], in_top_mask(view.top, context.n_arms), state["answer"])
        return ATLUCBStage(stage, answer)

    def _store(self, context: RuleContext, view: RunView, state) -> ATLUCBStage:
        current = self.advance(context, view, state)
        state["stage"][..., 0] = current.stage
        state["answer"][...] = current.answer
        return current

    def compiled_step(self, context: RuleContext) -> StepKernel:
        r""":func:`at_lucb_step` with its ``stop`` and ``recommend`` for the engine's compiled loop (the base level
        :math:`\log(5K/4) + 4\log t` tabulated over t as :meth:`revised` computes it)."""
        variance = subgaussian_variance(context.family, context.dispersion, "ATLUCB")
        n_arms = context.n_arms
        # the confidence level enters TERM's stop only (a fixed-budget run has none: its stop is never called)
        log_delta = math.nan if context.delta is None else -math.log(context.delta_value(self.name))
        return StepKernel(at_lucb_step, params=ATLUCBParams(
            float(self.epsilon), -math.log(self.delta1), -math.log(self.alpha), log_delta,
            2.0 * np.ascontiguousarray(variance, dtype=float), base_level_table(n_arms, 4 * n_arms),
            np.empty(n_arms), np.empty(n_arms, dtype=np.bool_)),
            state=ATLUCBState, stop=at_lucb_stop, recommend=at_lucb_recommend, grow=grow_at_lucb)

    def _certified(self, context: RuleContext, current: ATLUCBStage) -> np.ndarray:
        delta = context.delta_value(self.name)
        return (current.stage >= 2) & (self.log_inverse_delta(current.stage - 1) >= -math.log(delta))

    def stop(self, context: RuleContext, view: RunView, state) -> bool:
        return bool(self._certified(context, self._store(context, view, state)))

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> PullEach:
        current = self._store(context, view, state)  # S(t), J(t)
        revised = self.revised(context, view, current.stage)  # bounds at delta_{S(t)}
        h, l = critical_arms(revised, view.top, view.bottom, uniforms[0], uniforms[1])
        return PullEach(_pull_both(h, l, context.n_arms))  # pull h_t and l_t

    def _recommend(self, context: RuleContext, answer: np.ndarray) -> np.ndarray:
        return np.sort(np.argsort(~answer, axis=-1, kind="stable")[..., :context.k], axis=-1)

    def recommend(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        return self._recommend(context, self.advance(context, view, state).answer)

class ATLUCBState(NamedTuple):
    """AT-LUCB's state in the compiled loop: the stage S(t-1) and the answer J(t-1)."""

    stage: np.ndarray
    answer: np.ndarray


class ATLUCBParams(NamedTuple):
    """What the compiled AT-LUCB reads: epsilon, log(1/delta_1), log(1/alpha), log(1/delta), 2 sigma^2, the table of
    log(5K/4) + 4 log t over t, and work arrays."""

    epsilon: float
    log_inverse_delta1: float
    log_inverse_alpha: float
    log_inverse_delta: float
    twice_variance: np.ndarray
    base_level: np.ndarray
    revised: np.ndarray  # (K,) work
    answer: np.ndarray  # (K,) bool work


def base_level_table(n_arms: int, largest: int) -> np.ndarray:
    """``log(5K/4) + 4 log t`` for t = 0 .. T - 1 (T a power of two beyond ``largest``), as :meth:`ATLUCB.revised`."""
    size = max(1024, 1 << int(largest).bit_length())
    with np.errstate(divide="ignore"):
        return math.log(5.0 * n_arms / 4.0) + 4.0 * np.log(np.arange(size, dtype=float))


def grow_at_lucb(params: ATLUCBParams, largest: int) -> ATLUCBParams:
    """The parameters with a base-level table beyond ``largest``."""
    return params._replace(base_level=base_level_table(params.revised.shape[0], largest))


@kernel
def at_lucb_level(params, t, stage):
    """The level log(5K/4) + 4 log t + log(1/delta_s) of stage s at t."""
    return params.base_level[t] + (params.log_inverse_delta1 + (float(stage) - 1.0) * params.log_inverse_alpha)


@kernel
def at_lucb_revise(view, params, level):
    """The bounds at ``level`` into ``params.revised``: LCB on High, UCB on Low; returns TERM (U_l - L_h < epsilon)."""
    revised, means, counts = params.revised, view.means, view.counts
    lowest, highest = np.inf, -np.inf
    for arm in view.top:
        revised[arm] = means[arm] - np.sqrt(params.twice_variance[arm] * level / counts[arm])
        lowest = min(lowest, revised[arm])
    for arm in view.bottom:
        revised[arm] = means[arm] + np.sqrt(params.twice_variance[arm] * level / counts[arm])
        highest = max(highest, revised[arm])
    return highest - lowest < params.epsilon


@kernel
def at_lucb_advance(row, view, state, params):
    """:meth:`ATLUCB.advance` compiled: S(t) by exponential then binary search from S(t - 1), and J(t) (into
    ``params.answer``); returns S(t). The bounds at S(t) are left in ``params.revised``."""
    start = state.stage[row, 0]
    terminated = at_lucb_revise(view, params, at_lucb_level(params, view.t, start))
    current = start
    if terminated:
        low, high, step = start, start + 1, 1
        while at_lucb_revise(view, params, at_lucb_level(params, view.t, high)):
            low = high
            step = 2 * step
            high = start + step
        while high - low > 1:
            middle = (low + high) // 2
            if at_lucb_revise(view, params, at_lucb_level(params, view.t, middle)):
                low = middle
            else:
                high = middle
        current = high
        at_lucb_revise(view, params, at_lucb_level(params, view.t, current))
    if terminated or current == 1:
        params.answer[:] = False
        for arm in view.top:
            params.answer[arm] = True
    else:
        copy_into(params.answer, state.answer[row])
    return current


def at_lucb_stop(row, view, state, params):
    """:meth:`ATLUCB.stop` compiled: S(t), J(t) stored; certified when S(t) >= 2 and log(1/delta_{S(t)-1}) >=
    log(1/delta)."""
    stage = at_lucb_advance(row, view, state, params)
    state.stage[row, 0] = stage
    copy_into(state.answer[row], params.answer)
    return stage >= 2 and (params.log_inverse_delta1 + (float(stage - 1) - 1.0) * params.log_inverse_alpha
                           >= params.log_inverse_delta)


def at_lucb_step(row, view, state, params, uniforms, each):
    """:meth:`ATLUCB.select` compiled: h_t and l_t at delta_{S(t)}, both pulled."""
    if view.t + 2 >= params.base_level.shape[0]:
        each[0] = view.t + 2
        return GROW, 0
    stage = at_lucb_advance(row, view, state, params)
    state.stage[row, 0] = stage
    copy_into(state.answer[row], params.answer)
    h = pick_among(view.top, params.revised, False, uniforms[0])
    l = pick_among(view.bottom, params.revised, True, uniforms[1])
    each[:] = 0
    each[h] = 1
    each[l] = 1
    return EACH, 0


def at_lucb_recommend(row, view, state, params, out):
    """:meth:`ATLUCB.recommend` compiled: J(t), the first k of its arms in increasing order."""
    at_lucb_advance(row, view, state, params)
    filled = 0
    for arm in range(params.answer.shape[0]):
        if filled < out.shape[0] and params.answer[arm]:
            out[filled] = arm
            filled += 1
    for arm in range(params.answer.shape[0]):
        if filled < out.shape[0] and not params.answer[arm]:
            out[filled] = arm
            filled += 1
    out.sort()


register_policy("at-lucb", ATLUCB)
