r"""LUCB-type fixed-confidence rules for top-k identification: one bound-crossing skeleton, several bounds.

Every rule here keeps, at each step, the empirical top-k :math:`\hat I_t` ("High") and the other arms
("Low"), and a *revised mean* per arm: its lower confidence bound :math:`L_a` in High, its upper confidence
bound :math:`U_a` in Low. With

.. math:: h_t = \arg\min_{a \in \hat I_t} L_a, \qquad l_t = \arg\max_{a \notin \hat I_t} U_a

(ties broken uniformly at random), the run stops and recommends :math:`\hat I_t` as soon as
:math:`L_{h_t} \ge U_{l_t}`, and otherwise pulls

* both :math:`h_t` and :math:`l_t` (one step, a :class:`~allocopt.algorithms.PullEach` block): LUCB,
  KL-LUCB, lil'LUCB, LUCB++;
* :math:`h_t` with probability :math:`N_{l_t}/(N_{h_t} + N_{l_t})`, else :math:`l_t`: lil'RandLUCB;
* lil'CLUCB takes :math:`\tilde M_t` = the top-k of the revised means, stops when :math:`\tilde M_t =
  \hat I_t` and otherwise pulls the arm of largest radius in :math:`\hat I_t \triangle \tilde M_t`.

The rules differ in their bounds (:mod:`allocopt.algorithms.engine.confidence_bounds`):

* ``"lucb"``: :math:`\hat\mu_a \pm \sqrt{2\sigma_a^2\beta(t,\delta)/N_a}`; Kalyanakrishnan et al. (2012), LUCB1;
* ``"kl-lucb"``: KL bounds at level :math:`\beta(t,\delta)/N_a`; Kaufmann and Kalyanakrishnan (2013);
* ``"lil-lucb"``: :math:`\hat\mu_a \pm U(N_a, \delta/N)`; Jamieson and Nowak (2014), top-k form;
* ``"lucb++"``: :math:`U(N_a, \delta/(2(N-K)))` in High, :math:`U(N_a, \delta/(2K))` in Low; Simchowitz,
  Jamieson, Recht (2017);
* ``"lil-rand-lucb"``: as LUCB++, with the randomised pull; Jiang, Li, Qiao (2017), Algorithm 1;
* ``"lil-clucb"``: :math:`\hat\mu_a \pm U(N_a, \delta/N)`; Jiang, Li, Qiao (2017), Algorithm 2.

They stop by their own rule (``stopping = "rule"``) and run one confidence level at a time; they need
``context.delta`` and therefore run in :func:`~allocopt.algorithms.identify` only.

LIL versions (Jiang, Li, Qiao 2017, Section 5): ``"heuristic"`` takes :math:`\epsilon = 0` and the
algorithm's :math:`\delta` equal to the required confidence :math:`\nu`; ``"faithful"`` takes
:math:`\epsilon > 0` (default 0.01, our choice: the paper does not print it) and the largest :math:`\delta`
whose error bound is at most :math:`\nu`: :math:`c_\epsilon\delta \le \nu` (Theorem 3.1; lil'RandLUCB and
LUCB++, whose radii are the same) or :math:`c_\epsilon\delta^{1+\epsilon}/N^\epsilon \le \nu` (Theorem 4.1;
lil'CLUCB, and lil'LUCB, whose radii :math:`U(N_a, \delta/N)` give the same union bound). Both versions use
the experiments' form of :math:`U` (:math:`\log((1+\epsilon)t + 2)`), as the paper's Section 5 does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np

from ..._rng import random_candidate
from ..._validation import as_choice, as_float, fail
from ...complexity.lil import LIL_FORMS, c_eps
from ...exceptions import InvalidArgumentError
from ..engine import _kl_bounds as _bounds
from ._lucb_step import (CHANGE, FAMILY_KL, FIRST_TABLE_SIZE, GAUSSIAN_KL, HOEFFDING, LIL, PAIR, RANDOMISED,
                         LucbParams, LucbState, grow_lucb, lucb_state, lucb_step, lucb_stop, radius_table, rate_table)
from ..engine.confidence_bounds import (SUBGAUSSIAN_FAMILIES, check_exploration, exploration_rate, kl_bound,
                               lil_radii_of_counts, subgaussian_radius, subgaussian_variance)
from ..engine.protocol import PullEach, RuleContext, RunView, StepKernel, register_policy
from ..engine.statistics import top_k_order

__all__ = ["LUCB", "KLLUCB", "LilLUCB", "LUCBPlusPlus", "LilRandLUCB", "LilCLUCB", "LIL_VERSIONS",
           "in_top_mask", "critical_arms", "bounds_separate"]

LIL_VERSIONS = ("faithful", "heuristic")


# ------------------------------------------------------------------------------------------ shared pieces
def in_top_mask(top: np.ndarray, n_arms: int) -> np.ndarray:
    """Boolean mask of the arms in ``top`` (shape (k,) or (R, k)) over the last axis of length ``n_arms``."""
    mask = np.zeros(top.shape[:-1] + (n_arms,), dtype=bool)
    np.put_along_axis(mask, top, True, axis=-1)
    return mask


def _pick(arms: np.ndarray, values: np.ndarray, best: str, uniforms: Any) -> np.ndarray:
    """The arm of ``arms`` whose value is smallest (``best="min"``) or largest, ties uniformly at random."""
    chosen = np.take_along_axis(values, arms, axis=-1)
    extreme = chosen.min(axis=-1, keepdims=True) if best == "min" else chosen.max(axis=-1, keepdims=True)
    position = random_candidate(chosen == extreme, uniforms)
    return np.take_along_axis(arms, np.asarray(position)[..., None], axis=-1)[..., 0]


def critical_arms(revised: np.ndarray, top: np.ndarray, bottom: np.ndarray, uniform_h: Any,
                  uniform_l: Any) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`h_t = \arg\min_{a \in \text{High}} L_a` and :math:`l_t = \arg\max_{a \in \text{Low}} U_a`.

    ``revised`` holds :math:`L_a` on the arms of ``top`` and :math:`U_a` on those of ``bottom``; ties are
    broken by :func:`allocopt._rng.random_candidate` with the given uniforms. Works on one run (shapes (K,),
    (k,), scalars) or a batch (a leading run axis).
    """
    return _pick(top, revised, "min", uniform_h), _pick(bottom, revised, "max", uniform_l)


def bounds_separate(revised: np.ndarray, top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    r""":math:`\min_{a \in \text{High}} L_a \ge \max_{a \in \text{Low}} U_a` (the LUCB stopping rule)."""
    return (np.take_along_axis(revised, top, axis=-1).min(axis=-1)
            >= np.take_along_axis(revised, bottom, axis=-1).max(axis=-1))


def _pull_both(h: np.ndarray, l: np.ndarray, n_arms: int) -> np.ndarray:
    counts = np.zeros(np.shape(h) + (n_arms,), dtype=np.int64)
    np.put_along_axis(counts, np.asarray(h)[..., None], 1, axis=-1)
    np.put_along_axis(counts, np.asarray(l)[..., None], 1, axis=-1)
    return counts


def _need_delta(context: RuleContext, func: str) -> float:
    if context.delta is None:
        fail(func, "policy", "run in fixed confidence (allocopt.algorithms.identify, which sets the confidence "
             "level delta); this rule's bounds need delta", "no confidence level (a fixed-budget run)")
    return float(context.delta)


class _BoundCrossing:
    """The skeleton shared by the rules that stop when High's lowest LCB reaches Low's highest UCB."""

    stopping = "rule"
    uses_glr = False
    delta_dependent = True

    # subclasses: revised(context, view) -> LCB on High, UCB on Low; check(context) validates the family
    def revised(self, context: RuleContext, view: RunView) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def check(self, context: RuleContext) -> None:
        _need_delta(context, type(self).__name__)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 2

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        self.check(context)
        # the stopping check computes the bounds first; select reuses them at the same pull count
        return {"revised": np.zeros((n_runs, context.n_arms)), "revised_at": np.full((n_runs, 1), -1, dtype=np.int64)}

    def cached_revised(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        """:meth:`revised`, computed once per pull count (stored in the run's state when it has room)."""
        if "revised" not in state:
            return self.revised(context, view)
        if np.all(state["revised_at"][..., 0] == view.t):
            return state["revised"]
        revised = self.revised(context, view)
        state["revised"][...] = revised
        state["revised_at"][..., 0] = view.t
        return revised

    def stop(self, context: RuleContext, view: RunView, state) -> bool:
        return bool(bounds_separate(self.cached_revised(context, view, state), view.top, view.bottom))

    def lucb_params(self, context: RuleContext) -> LucbParams | None:  # pragma: no cover - abstract
        """The compiled step's parameters (None: the rule's bounds have no compiled form)."""
        return None

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """The compiled LUCB step (:mod:`allocopt.algorithms.rules._lucb_step`) with this rule's bounds."""
        params = self.lucb_params(context)
        if params is None:
            return None
        return StepKernel(lucb_step, params=params, state=LucbState, stop=lucb_stop, grow=grow_lucb,
                          work_state=lucb_state)

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int | PullEach:
        revised = self.cached_revised(context, view, state)  # LCB in High, UCB in Low
        h, l = critical_arms(revised, view.top, view.bottom, uniforms[0], uniforms[1])
        return PullEach(_pull_both(h, l, context.n_arms))  # sample both h_t and l_t

def _revise(means: np.ndarray, radius: np.ndarray, top: np.ndarray) -> np.ndarray:
    """LCB = mean - radius on the arms of ``top``, UCB = mean + radius elsewhere."""
    return np.where(in_top_mask(top, means.shape[-1]), means - radius, means + radius)


# ---------------------------------------------------------------------------------------- LUCB, KL-LUCB
@dataclass(frozen=True)
class LUCB(_BoundCrossing):
    r"""LUCB1 for top-k (Kalyanakrishnan, Tewari, Auer, Stone 2012, Algorithm 1 with :math:`\epsilon = 0`).

    Bounds :math:`\hat\mu_a \pm \sqrt{2\sigma_a^2\beta(t,\delta)/N_a}` (Hoeffding: :math:`\sigma_a^2` the
    Gaussian variance, 1/4 for Bernoulli rewards); pulls both :math:`h_t` and :math:`l_t` each step; stops when
    :math:`L_{h_t} \ge U_{l_t}`. Gaussian and Bernoulli arms only.

    Parameters
    ----------
    exploration : str or callable, default "heuristic"
        :math:`\beta(t, \delta)`; see :mod:`allocopt.algorithms.engine.confidence_bounds` (``"kalyanakrishnan"`` is
        the paper's :math:`\log(5Kt^4/(4\delta))`).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.9, 0.1, 0.0], k=2, variance=0.25)
    >>> result = identify(problem, LUCB(), delta=0.01, n_runs=10, rng=1)
    >>> bool(result.correct.all()), bool(result.stopped.all())
    (True, True)
    """

    exploration: str | Callable = "heuristic"
    name = "lucb"
    families = SUBGAUSSIAN_FAMILIES  # Hoeffding radii: the runners refuse poisson, exponential and gamma arms

    def __post_init__(self):
        check_exploration(self.exploration, "LUCB")

    def check(self, context: RuleContext) -> None:
        _need_delta(context, "LUCB")
        subgaussian_variance(context.family, context.dispersion, "LUCB")

    def revised(self, context: RuleContext, view: RunView) -> np.ndarray:
        beta = exploration_rate(self.exploration, view.t, context.delta_value(self.name), context.n_arms)
        variance = subgaussian_variance(context.family, context.dispersion, "LUCB")
        radius = subgaussian_radius(view.counts, np.asarray(beta)[..., None], variance)
        return _revise(view.means, radius, view.top)

    def lucb_params(self, context: RuleContext) -> LucbParams | None:
        """Hoeffding radii at a named exploration rate (None for a callable rate: the step runs in Python)."""
        if callable(self.exploration):
            return None
        variance = subgaussian_variance(context.family, context.dispersion, "LUCB")
        return _params(context, PAIR, HOEFFDING, np.zeros(context.n_arms), variance,
                       exploration=self.exploration, delta=context.delta_value(self.name))


@dataclass(frozen=True)
class KLLUCB(_BoundCrossing):
    r"""KL-LUCB (Kaufmann and Kalyanakrishnan 2013, Section 3, with :math:`\epsilon = 0`).

    LUCB with the KL bounds :math:`U_a = \max\{q: N_a d(\hat\mu_a, q) \le \beta(t,\delta)\}` and
    :math:`L_a = \min\{q: N_a d(\hat\mu_a, q) \le \beta(t,\delta)\}`; pulls both :math:`h_t` (their
    :math:`l_t`, the weakest of the empirical top-k) and :math:`l_t` (their :math:`u_t`) each step. All four
    families.

    Parameters
    ----------
    exploration : str or callable, default "heuristic"
        :math:`\beta(t, \delta)`; ``"kaufmann"`` is the paper's rate.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([0.9, 0.8, 0.2, 0.1], k=2, family="bernoulli")
    >>> result = identify(problem, KLLUCB(), delta=0.05, n_runs=10, rng=2)
    >>> bool(result.correct.all())
    True
    """

    exploration: str | Callable = "heuristic"
    name = "kl-lucb"

    def __post_init__(self):
        check_exploration(self.exploration, "KLLUCB")

    def revised(self, context: RuleContext, view: RunView) -> np.ndarray:
        beta = exploration_rate(self.exploration, view.t, context.delta_value(self.name), context.n_arms)
        level = np.asarray(beta)[..., None] / view.counts
        bottom = ~in_top_mask(view.top, context.n_arms)  # upper bounds outside the top-k, lower inside
        return kl_bound(context.family, view.means, level, bottom, context.dispersion)

    def lucb_params(self, context: RuleContext) -> LucbParams | None:
        r"""Gaussian arms, whose KL bounds are :math:`\hat\mu_a \pm \sqrt{2\sigma_a^2\beta/N_a}` in closed form, and
        the other families with compiled KL bounds, whose bounds the step computes by
        :func:`~allocopt.algorithms.engine.confidence_bounds.kl_bound`'s bisection (None for a family with a
        divergence of its own or a callable rate: the step runs in Python)."""
        code = _bounds.bound_code(context.family)
        if callable(self.exploration) or code is None:
            return None
        dispersion = np.broadcast_to(np.asarray(context.dispersion, dtype=float), (context.n_arms,))
        radius = GAUSSIAN_KL if code == 0 else FAMILY_KL
        return _params(context, PAIR, radius, np.zeros(context.n_arms), dispersion, kl_code=code,
                       exploration=self.exploration, delta=context.delta_value(self.name))


# ------------------------------------------------------------------------------------------- LIL rules
def _lil_eps(version: str, eps: float | None, func: str) -> float:
    as_choice(version, func, "version", LIL_VERSIONS)
    if version == "heuristic":
        if eps is not None and eps != 0:
            fail(func, "eps", "None or 0 for the heuristic version (epsilon = 0); use version='faithful' for "
                 "epsilon > 0", eps)
        return 0.0
    if eps is None:
        return 0.01
    return as_float(eps, func, "eps", low=0.0, high=1.0, low_open=True, high_open=True)


@dataclass(frozen=True)
class _LilRule(_BoundCrossing):
    """Shared LIL machinery: the parameters ``version``, ``eps`` and ``form`` of every lil' rule (checked when a
    rule is made), epsilon, the algorithm's delta and sigma."""

    families = SUBGAUSSIAN_FAMILIES  # LIL radii of sub-Gaussian rewards: the runners refuse the other families

    version: str = "heuristic"
    eps: float | None = None
    form: str = "experiments"
    union: ClassVar[str] = "theorem-3.1"  # which error bound fixes the faithful delta

    def __post_init__(self):
        self._validate()

    def _validate(self) -> None:
        func = type(self).__name__
        _lil_eps(self.version, self.eps, func)
        as_choice(self.form, func, "form", LIL_FORMS)

    @property
    def epsilon(self) -> float:
        """:math:`\\epsilon` used in :math:`U` (0 for the heuristic version)."""
        return _lil_eps(self.version, self.eps, type(self).__name__)

    def algorithm_delta(self, nu: float, n_arms: int) -> float:
        r"""The :math:`\delta` run by the algorithm for a required confidence :math:`\nu`."""
        if self.version == "heuristic":
            return nu
        eps = self.epsilon
        if self.union == "theorem-3.1":
            return nu / c_eps(eps)  # c_eps delta <= nu
        return (nu * n_arms**eps / c_eps(eps)) ** (1.0 / (1.0 + eps))  # c_eps delta^(1+eps) / N^eps <= nu

    def check(self, context: RuleContext) -> None:
        _need_delta(context, type(self).__name__)
        subgaussian_variance(context.family, context.dispersion, type(self).__name__)

    def _sigma(self, context: RuleContext) -> np.ndarray:
        return np.sqrt(subgaussian_variance(context.family, context.dispersion, type(self).__name__))

    def radii(self, context: RuleContext, view: RunView) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def revised(self, context: RuleContext, view: RunView) -> np.ndarray:
        return _revise(view.means, self.radii(context, view), view.top)

    def omegas(self, context: RuleContext) -> tuple[float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def lucb_params(self, context: RuleContext) -> LucbParams | None:
        """LIL radius tables (None where a radius is not real at some count: the Python step reports it)."""
        omega_top, omega_bottom = self.omegas(context)
        try:
            top = radius_table(omega_top, self.epsilon, self.form, FIRST_TABLE_SIZE)
            bottom = radius_table(omega_bottom, self.epsilon, self.form, FIRST_TABLE_SIZE)
        except InvalidArgumentError:
            return None
        return _params(context, _LUCB_KINDS.get(str(getattr(self, "name", "")), PAIR), LIL, self._sigma(context), np.zeros(context.n_arms),
                       top_table=top, bottom_table=bottom, omega_top=omega_top, omega_bottom=omega_bottom,
                       eps=self.epsilon, form=self.form)


class _SplitRadii(_LilRule):
    r"""Radii :math:`U(N_a, \delta/(2(N-K)))` in High and :math:`U(N_a, \delta/(2K))` in Low."""

    def omegas(self, context: RuleContext) -> tuple[float, float]:
        r""":math:`\omega` of the radii in High and in Low: :math:`\delta/(2(N-K))` and :math:`\delta/(2K)`."""
        n_arms, k = context.n_arms, context.k
        delta = self.algorithm_delta(context.delta_value(type(self).__name__), n_arms)
        return delta / (2 * (n_arms - k)), delta / (2 * k)

    def radii(self, context: RuleContext, view: RunView) -> np.ndarray:
        omega_high, omega_low = self.omegas(context)
        sigma = self._sigma(context)
        high = lil_radii_of_counts(view.counts, omega_high, self.epsilon, sigma, self.form)
        low = lil_radii_of_counts(view.counts, omega_low, self.epsilon, sigma, self.form)
        return np.where(in_top_mask(view.top, context.n_arms), high, low)


class _UniformRadii(_LilRule):
    r"""Radii :math:`U(N_a, \delta/N)` for every arm."""

    union = "theorem-4.1"

    def omegas(self, context: RuleContext) -> tuple[float, float]:
        r""":math:`\omega = \delta/N`, in High and in Low."""
        omega = self.algorithm_delta(context.delta_value(type(self).__name__), context.n_arms) / context.n_arms
        return omega, omega

    def radii(self, context: RuleContext, view: RunView) -> np.ndarray:
        omega, _ = self.omegas(context)
        return lil_radii_of_counts(view.counts, omega, self.epsilon, self._sigma(context), self.form)


@dataclass(frozen=True)
class LilLUCB(_UniformRadii):
    r"""lil'LUCB (Jamieson and Nowak 2014) in its top-k form, the comparator of Jiang, Li, Qiao (2017, Section 5).

    LUCB with the LIL radius :math:`U(N_a, \delta/N)` on every arm; pulls both :math:`h_t` and :math:`l_t`.
    Gaussian and Bernoulli arms (:math:`\sigma = 1/2`).

    Parameters
    ----------
    version : {"heuristic", "faithful"}
        See the module docstring.
    eps : float, optional
        :math:`\epsilon` of the faithful version (default 0.01).
    form : {"experiments", "paper"}
        The form of :math:`U` (:func:`allocopt.complexity.lil_radius`).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([0.5, 0.5, 0.0, 0.0], k=2, variance=0.25)
    >>> bool(identify(problem, LilLUCB(), delta=0.01, n_runs=5, rng=0).correct.all())
    True
    """

    name = "lil-lucb"


@dataclass(frozen=True)
class LUCBPlusPlus(_SplitRadii):
    r"""LUCB++ (Simchowitz, Jamieson, Recht 2017), the comparator of Jiang, Li, Qiao (2017, Section 5).

    LUCB with :math:`U(N_a, \delta/(2(N-K)))` in High and :math:`U(N_a, \delta/(2K))` in Low; pulls both
    :math:`h_t` and :math:`l_t`. When :math:`K = N/2` it coincides with lil'LUCB. Gaussian and Bernoulli arms.

    Parameters
    ----------
    version, eps, form
        As in :class:`LilLUCB`.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([0.5, 0.5, 0.0, 0.0, 0.0], k=2, variance=0.25)
    >>> bool(identify(problem, LUCBPlusPlus(), delta=0.01, n_runs=5, rng=0).correct.all())
    True
    """

    name = "lucb++"


@dataclass(frozen=True)
class LilRandLUCB(_SplitRadii):
    r"""lil'RandLUCB (Jiang, Li, Qiao 2017, Algorithm 1).

    Radii :math:`u_a = U(N_a, \delta/(2(N-K)))` on High (the empirical top-K) and :math:`U(N_a, \delta/(2K))`
    on Low; :math:`h_t = \arg\min_{\text{High}} \hat\mu_a - u_a`, :math:`l_t = \arg\max_{\text{Low}}
    \hat\mu_a + u_a`; return High when :math:`\hat\mu_{h_t} - u_{h_t} \ge \hat\mu_{l_t} + u_{l_t}`; else
    sample :math:`h_t` with probability :math:`N_{l_t}/(N_{h_t} + N_{l_t})` and :math:`l_t` otherwise. Three
    uniforms per step: the two tie-breaks and the coin (``h`` when ``u < N_l/(N_h + N_l)``).

    Parameters
    ----------
    version, eps, form
        As in :class:`LilLUCB`; the faithful :math:`\delta` is :math:`\nu/c_\epsilon` (Theorem 3.1).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([0.5, 0.5, 0.0, 0.0, 0.0], k=2, variance=0.25)
    >>> result = identify(problem, LilRandLUCB(version="faithful"), delta=0.01, n_runs=5, rng=0)
    >>> bool(result.correct.all())
    True
    """

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """The LUCB family's step kernel, whose parameters carry this rule's radii, choice and stop."""
        return super().compiled_step(context)

    name = "lil-rand-lucb"

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 3

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        revised = self.cached_revised(context, view, state)  # mu - u on High, mu + u on Low
        h, l = critical_arms(revised, view.top, view.bottom, uniforms[0], uniforms[1])
        # with probability T_l / (T_h + T_l) sample h, otherwise l
        probability_h = view.counts[l] / (view.counts[h] + view.counts[l])
        return int(h) if uniforms[2] < probability_h else int(l)

@dataclass(frozen=True)
class LilCLUCB(_UniformRadii):
    r"""lil'CLUCB (Jiang, Li, Qiao 2017, Algorithm 2).

    Radius :math:`u_a = U(N_a, \delta/N)`; :math:`M_t` = the empirical top-K; revised means
    :math:`\tilde\mu_a = \hat\mu_a - u_a` in :math:`M_t` and :math:`\hat\mu_a + u_a` outside;
    :math:`\tilde M_t` = the top-K of the revised means (ties to the smaller arm index, as for
    :math:`M_t`). Return :math:`M_t` when :math:`M_t = \tilde M_t`; else sample the arm of largest radius in
    :math:`M_t \triangle \tilde M_t` (ties uniformly at random: one uniform per step).

    Parameters
    ----------
    version, eps, form
        As in :class:`LilLUCB`; the faithful :math:`\delta` solves :math:`c_\epsilon\delta^{1+\epsilon}/
        N^\epsilon = \nu` (Theorem 4.1).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([0.5, 0.5, 0.0, 0.0], k=2, variance=0.25)
    >>> bool(identify(problem, LilCLUCB(), delta=0.01, n_runs=5, rng=0).correct.all())
    True
    """

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """The LUCB family's step kernel, whose parameters carry this rule's radii, choice and stop."""
        return super().compiled_step(context)

    name = "lil-clucb"

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 1

    def revised_top(self, context: RuleContext, view: RunView) -> tuple[np.ndarray, np.ndarray]:
        """The radii and the mask of :math:`\\tilde M_t` (the top-K of the revised means)."""
        radius = self.radii(context, view)
        revised = _revise(view.means, radius, view.top)
        revised_top, _ = top_k_order(revised, context.k)
        return radius, in_top_mask(revised_top, context.n_arms)

    def stop(self, context: RuleContext, view: RunView, state) -> bool:
        _, revised_mask = self.revised_top(context, view)
        return bool(np.array_equal(revised_mask, in_top_mask(view.top, context.n_arms)))

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        radius, revised_mask = self.revised_top(context, view)
        difference = revised_mask != in_top_mask(view.top, context.n_arms)  # M_t (+) M~_t
        candidates = difference & (radius == np.max(np.where(difference, radius, -np.inf)))
        return int(random_candidate(candidates, uniforms[0]))  # the arm of largest radius in it

_LUCB_KINDS = {"lil-lucb": PAIR, "lucb++": PAIR, "lil-rand-lucb": RANDOMISED, "lil-clucb": CHANGE}


def _params(context: RuleContext, kind: int, radius: int, sigma, variance, *, kl_code: int = -1, top_table=None,
            bottom_table=None, omega_top=np.nan, omega_bottom=np.nan, eps=0.0, form="experiments",
            exploration="heuristic", delta=np.nan) -> LucbParams:
    """The compiled step's parameters (unused tables of size 1; ``variance`` is the dispersion for
    :data:`FAMILY_KL`)."""
    n_arms = context.n_arms
    placeholder = np.zeros(1)
    rates = placeholder if radius == LIL else rate_table(exploration, delta, n_arms, n_arms + 2)
    scale = (_bounds.bound_scale(kl_code, variance) if radius == FAMILY_KL
             else 2.0 * np.ascontiguousarray(variance, dtype=float))
    return LucbParams(kind, radius, kl_code, context.k, np.ascontiguousarray(sigma, dtype=float), scale,
                      placeholder if top_table is None else top_table,
                      placeholder if bottom_table is None else bottom_table, rates,
                      1 << max(0, n_arms - 1).bit_length(), float(omega_top), float(omega_bottom), float(eps), form,
                      str(exploration), float(delta))

register_policy("lucb", LUCB)
register_policy("kl-lucb", KLLUCB)
register_policy("lil-lucb", LilLUCB)
register_policy("lucb++", LUCBPlusPlus)
register_policy("lil-rand-lucb", LilRandLUCB)
register_policy("lil-clucb", LilCLUCB)
