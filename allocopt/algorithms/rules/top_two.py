r"""Top-two sampling rules for best-arm identification (k = 1): TTTS, T3C and TTEI.

Each step picks a *leader* :math:`I` and a *challenger* :math:`J \ne I`, and pulls the leader with probability
:math:`\beta` (default 1/2, the robust choice of the three papers; Wang, Yang, You 2022, Appendix C.3.3) and
the challenger otherwise. The rules differ in how they choose the two arms.

TTTS, top-two Thompson sampling (Russo 2016; ``"ttts"``)
    :math:`I = \arg\max_a \tilde\theta_a` for a posterior sample :math:`\tilde\theta`; the challenger re-samples
    the posterior until the arg max differs from :math:`I` and takes that arg max, as Russo (2016, Section 3.1)
    defines it. The number of re-samples is random (geometric, of mean :math:`1/(1 - \Pi_t(I))` where
    :math:`\Pi_t(I)` is the posterior probability that :math:`I` is the best arm), so the step cannot take its
    re-samples from the engine's fixed number of uniforms per step: two of those uniforms key a counter-based
    stream (:mod:`allocopt.algorithms.engine.counter_stream`), and re-sample :math:`m = 0, 1, \dots` inverts the
    posterior at the stream's uniforms :math:`mK, \dots, mK + K - 1`. A safety cap (``max_resamples``, default
    :data:`RESAMPLE_CAP` = :math:`10^6`) bounds the search; where it is reached, the challenger is T3C's (below),
    the arm whose event :math:`\{\theta_J > \theta_I\}` the posterior makes least unlikely to first order
    (Shang et al. 2020 introduce T3C as this replacement of the re-sampling). Every TTTS result reports per run
    the steps that drew a challenger (``challenger_steps``), the re-samples drawn (``resamples``), the fallbacks
    (``resample_fallbacks``) and their share of the challenger steps (``fallback_share``). A small cap
    (``TTTS(max_resamples=8)``, the TTTS of earlier allocopt versions) makes a cheaper rule between TTTS and T3C:
    on Wang, Yang, You's Figure 1 instance with k = 1 most of its late challengers are T3C's.
T3C, top-two transportation cost (Shang, de Heide, Kaufmann, Ménard, Valko 2020; ``"t3c"``)
    :math:`I` as in TTTS; :math:`J = \arg\min_{b \ne I} W(I, b)` with the transportation cost at the empirical
    means :math:`W(I, b) = N_I d(\hat\theta_I, m) + N_b d(\hat\theta_b, m)`,
    :math:`m = (N_I\hat\theta_I + N_b\hat\theta_b)/(N_I + N_b)`, if :math:`\hat\theta_I > \hat\theta_b`, and 0
    otherwise (the pair cost :math:`t\,C_{Ib}(N/t)` of the top-k layer).
TTEI, top-two expected improvement (Qin, Klabjan, Russo 2017; ``"ttei"``, Gaussian arms only)
    With the posterior :math:`\mathcal N(\mu_a, s_a^2)`, :math:`s_a^2 = \sigma_a^2/N_a` (flat prior) and
    :math:`f(x) = x\Phi(x) + \varphi(x)`: :math:`I = \arg\max_a s_a f((\mu_a - \max_b \mu_b)/s_a)` (the expected
    improvement over the best mean) and :math:`J = \arg\max_{b \ne I} s_{Ib} f((\mu_b - \mu_I)/s_{Ib})`,
    :math:`s_{Ib}^2 = s_I^2 + s_b^2` (the expected improvement of :math:`\theta_b` over :math:`\theta_I`). The
    comparisons use :math:`\log f`, evaluated without underflow (:func:`log_expected_improvement`). The paper
    defines TTEI for Gaussian arms; the runners refuse the other families.

Ties in every arg max / arg min are broken uniformly at random (a re-sample's arg max is the first largest: ties
have probability zero there). Uniforms per step: TTTS :math:`K + 5` (the leader's sample, its tie-break, the coin,
the fallback's tie-break and the stream's key), T3C :math:`K + 3`, TTEI 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from scipy import special

from ...families import kernels as _compiled_families
from ..._numba import kernel
from ..._rng import random_candidate
from ..._special import special_functions
from ..._validation import as_float, as_int, fail
from ...topk.pairs import pair_terms
from ..engine.loop import pick_among
from ..engine.protocol import RuleContext, RunView, StepKernel, register_policy
from ..engine.counter_stream import STREAM_KEY_UNIFORMS, counter_uniforms, fill_counter_uniforms, stream_key
from ..engine.statistics import posterior_kind, posterior_quantile, posterior_sample

__all__ = ["TTTS", "T3C", "TTEI", "RESAMPLE_CAP", "log_expected_improvement", "transportation_costs"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def log_expected_improvement(x) -> np.ndarray:
    r""":math:`\log f(x)`, :math:`f(x) = x\Phi(x) + \varphi(x) = E[(Z + x)^+]` for a standard normal :math:`Z`.

    For :math:`x > -1` directly; below, :math:`f(x) = \varphi(x)(1 - y M(y))` with :math:`y = -x` and the Mills
    ratio :math:`M(y) = \Phi(-y)/\varphi(y) = \sqrt{\pi/2}\,\mathrm{erfcx}(y/\sqrt2)`, and for :math:`y \ge 100`
    the asymptotic series :math:`1 - yM(y) = y^{-2}(1 - 3y^{-2} + 15y^{-4} - 105y^{-6} + \dots)`, so that the
    logarithm keeps its relative precision where :math:`f` itself underflows.

    Examples
    --------
    >>> round(float(log_expected_improvement(0.0)), 12) == round(-0.5 * math.log(2 * math.pi), 12)
    True
    >>> bool(np.isfinite(log_expected_improvement(-1e4)))
    True
    """
    x = np.asarray(x, dtype=float)
    y = np.maximum(-x, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = np.log(np.maximum(x, -1.0) * special.ndtr(x) + np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))
        mills = math.sqrt(math.pi / 2.0) * special.erfcx(y / math.sqrt(2.0))
        inverse_square = 1.0 / (y * y)
        series = -2.0 * np.log(y) + np.log1p(inverse_square * (-3.0 + inverse_square * (15.0 - 105.0 * inverse_square)))
        bracket = np.where(y >= 100.0, series, np.log(np.maximum(1.0 - y * mills, np.finfo(float).tiny)))
        tail = -0.5 * y * y - _LOG_SQRT_2PI + bracket
    return np.where(x > -1.0, direct, tail)


def transportation_costs(context: RuleContext, counts: np.ndarray, means: np.ndarray, leader) -> np.ndarray:
    r""":math:`W(I, b)` of T3C for every arm :math:`b` (shape (K,) or (R, K)); :math:`+\infty` at :math:`b = I`."""
    leader = np.asarray(leader)
    weights = counts / context.dispersion
    mean_leader = np.take_along_axis(means, leader[..., None], axis=-1)
    weight_leader = np.take_along_axis(weights, leader[..., None], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = pair_terms(context.family, "confidence", mean_leader, means, None, None, weight_leader, weights)
    cost = np.where(mean_leader > means, terms.cost, 0.0)
    cost = np.where(np.isnan(cost), 0.0, cost)
    arms = np.arange(means.shape[-1])
    return np.where(arms == leader[..., None], np.inf, cost)


@dataclass(frozen=True)
class _TopTwo:
    """What the three rules share: the leader's probability ``beta`` (checked when a rule is made) and k = 1."""

    beta: float = 0.5
    max_k = 1
    uses_glr = False

    def __post_init__(self):
        as_float(self.beta, type(self).__name__, "beta", low=0.0, high=1.0, low_open=True, high_open=True,
                 requirement="a probability in the open interval (0, 1)")


def _sampled_leader(context, counts, sums, uniforms) -> np.ndarray:
    """TTTS's and T3C's leader: the arg max of a posterior sample (``uniforms[..., :K]``), ties broken with
    ``uniforms[..., K]``."""
    n_arms = context.n_arms
    theta = posterior_sample(context.family, context.dispersion, counts, sums, uniforms[..., :n_arms])
    return random_candidate(theta == theta.max(axis=-1, keepdims=True), uniforms[..., n_arms])


def _t3c_challenger(context, counts, means, leader, uniforms):
    cost = transportation_costs(context, counts, means, leader)
    return random_candidate(cost == cost.min(axis=-1, keepdims=True), uniforms)


@dataclass(frozen=True)
class T3C(_TopTwo):
    """Top-two transportation cost (module docstring). ``beta``: the leader's probability, in (0, 1).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.5, 0.4, 0.0], k=1, variance=0.25)
    >>> bool(identify(problem, T3C(), delta=0.01, n_runs=10, rng=3).correct.all())
    True
    """

    name = "t3c"

    def uniforms_per_step(self, context: RuleContext) -> int:
        return context.n_arms + 3

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {}

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        n_arms = context.n_arms
        leader = int(_sampled_leader(context, view.counts, view.sums, uniforms))
        if uniforms[n_arms + 1] < self.beta:
            return leader
        # challenger: the smallest transportation cost W(leader, b) at the empirical means
        return int(_t3c_challenger(context, view.counts, view.means, leader, uniforms[n_arms + 2]))

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`t3c_step` for the engine's compiled loop (None for a family without a posterior sampler or a
        compiled pair kernel: the step then runs in Python)."""
        params = top_two_params(self, context)
        return None if params is None else StepKernel(t3c_step, params=params)

RESAMPLE_CAP = 10**6
"""TTTS's default safety cap on the posterior re-samples of one step (never reached on the instances of the docs:
the mean number of re-samples is :math:`1/(1 - \\Pi_t(I))`)."""

_FIRST_BLOCK, _LARGEST_BLOCK = 4, 4096  # re-samples drawn at once by the Python select (doubling)


@dataclass(frozen=True)
class TTTS(_TopTwo):
    """Top-two Thompson sampling (Russo 2016; module docstring).

    Parameters
    ----------
    beta : float, default 0.5
        The leader's probability, in (0, 1).
    max_resamples : int, default RESAMPLE_CAP (10**6)
        Posterior re-samples drawn in search of a different arg max before the T3C fallback: the default is a
        safety cap (Russo's rule re-samples until the arg max differs); a small value, e.g. 8, gives the capped
        variant, which takes T3C's challenger whenever the leader is that likely.

    Notes
    -----
    Per run, ``diagnostics`` holds ``challenger_steps`` (steps whose coin chose the challenger), ``resamples``
    (posterior re-samples drawn), ``resample_fallbacks`` (challenger steps that reached the cap and took T3C's
    challenger) and ``fallback_share`` (fallbacks over challenger steps, 0 without a challenger step).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.5, 0.4, 0.0], k=1, variance=0.25)
    >>> result = identify(problem, TTTS(), delta=0.01, n_runs=10, rng=3)
    >>> bool(result.correct.all()), float(result.diagnostics["resample_fallbacks"].sum())
    (True, 0.0)
    """

    max_resamples: int = RESAMPLE_CAP
    name = "ttts"
    diagnostic_names = ("resample_fallbacks", "challenger_steps", "resamples", "fallback_share")

    def __post_init__(self):
        super().__post_init__()
        as_int(self.max_resamples, "TTTS", "max_resamples", low=1)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return context.n_arms + 3 + STREAM_KEY_UNIFORMS

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {name: np.zeros((n_runs, 1), dtype=np.int64)
                for name in ("resample_fallbacks", "challenger_steps", "resamples")}

    def diagnostics(self, state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        fallbacks, steps = state["resample_fallbacks"][:, 0], state["challenger_steps"][:, 0]
        return {"resample_fallbacks": fallbacks, "challenger_steps": steps, "resamples": state["resamples"][:, 0],
                "fallback_share": fallbacks / np.maximum(steps, 1)}

    def _challenger(self, context: RuleContext, view: RunView, leader: int, key) -> tuple[int | None, int]:
        """The arg max of the first re-sample whose arg max is not ``leader`` and the re-samples drawn (None and the
        cap if every re-sample up to the cap has ``leader`` as its arg max). Re-sample ``m`` inverts the posterior at
        the stream's uniforms ``m K .. m K + K - 1``; they are drawn in blocks of doubling size, which changes
        nothing but the speed."""
        n_arms, cap = context.n_arms, int(self.max_resamples)
        drawn, block = 0, _FIRST_BLOCK
        while drawn < cap:
            size = min(block, cap - drawn)
            uniforms = counter_uniforms(key, drawn * n_arms, size * n_arms).reshape(size, n_arms)
            theta = posterior_sample(context.family, context.dispersion, view.counts, view.sums, uniforms)
            beaten = theta[:, leader] < theta.max(axis=1)
            if beaten.any():
                first = int(np.argmax(beaten))
                return int(np.argmax(theta[first])), drawn + first + 1
            drawn += size
            block = min(2 * block, _LARGEST_BLOCK)
        return None, cap

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        n_arms = context.n_arms
        leader = int(_sampled_leader(context, view.counts, view.sums, uniforms))
        if uniforms[n_arms + 1] < self.beta:
            return leader
        state["challenger_steps"][0] += 1
        # challenger: re-sample until the arg max is another arm (the stream keyed by the step's last two uniforms)
        challenger, drawn = self._challenger(context, view, leader, stream_key(uniforms[n_arms + 3],
                                                                               uniforms[n_arms + 4]))
        state["resamples"][0] += drawn
        if challenger is not None:
            return challenger
        # the safety cap reached: T3C's challenger
        state["resample_fallbacks"][0] += 1
        return int(_t3c_challenger(context, view.counts, view.means, leader, uniforms[n_arms + 2]))

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`ttts_step` for the engine's compiled loop (None where :class:`T3C` has none)."""
        params = top_two_params(self, context, int(self.max_resamples))
        return None if params is None else StepKernel(ttts_step, params=params, state=TTTSState)

@dataclass(frozen=True)
class TTEI(_TopTwo):
    """Top-two expected improvement for Gaussian arms (module docstring). ``beta``: the leader's probability.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.5, 0.4, 0.0], k=1, variance=0.25)
    >>> bool(identify(problem, TTEI(), delta=0.01, n_runs=10, rng=3).correct.all())
    True
    """

    name = "ttei"
    families = ("gaussian",)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 3

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        if context.family.name not in self.families:  # the expected improvement of the Gaussian posterior
            fail("TTEI", "family", "gaussian (TTEI's expected improvement is defined for Gaussian arms)",
                 context.family.name)
        return {}

    @staticmethod
    def _leader_and_challenger(context, counts, means, uniforms):
        scale = np.sqrt(context.dispersion / counts)
        best = means.max(axis=-1, keepdims=True)
        # log of the expected improvement s_a f((mu_a - max mu)/s_a)
        value = np.log(scale) + log_expected_improvement((means - best) / scale)
        leader = random_candidate(value == value.max(axis=-1, keepdims=True), uniforms[..., 0])
        mean_leader = np.take_along_axis(means, leader[..., None], axis=-1)
        scale_leader = np.take_along_axis(scale, leader[..., None], axis=-1)
        pair_scale = np.sqrt(scale_leader**2 + scale**2)
        improvement = np.log(pair_scale) + log_expected_improvement((means - mean_leader) / pair_scale)
        improvement = np.where(np.arange(means.shape[-1]) == leader[..., None], -np.inf, improvement)
        challenger = random_candidate(improvement == improvement.max(axis=-1, keepdims=True), uniforms[..., 1])
        return leader, challenger

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        leader, challenger = self._leader_and_challenger(context, view.counts, view.means, uniforms)
        return int(leader) if uniforms[2] < self.beta else int(challenger)

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`ttei_step` for the engine's compiled loop (Gaussian arms)."""
        if context.family.name not in self.families:
            return None
        return StepKernel(ttei_step, params=top_two_params(self, context))

# ------------------------------------------------------------------------------------- compiled steps
class TopTwoParams(NamedTuple):
    """What the top-two steps read: the leader's probability, the posterior's number and clip bounds, the pair
    kernel's number (T3C's transportation costs), the dispersion, re-samples, scipy.special's functions, work."""

    beta: float
    posterior: int
    low: float
    high: float
    pair: int
    dispersion: np.ndarray
    max_resamples: int
    special: Any
    theta: np.ndarray  # (K,) work
    draws: np.ndarray  # (K,) work: a re-sample's uniforms
    arms: np.ndarray  # (K,): 0, ..., K - 1, the candidates of every arg max


class TTTSState(NamedTuple):
    """TTTS's state in the compiled loop: per run, the T3C fallbacks, the challenger steps and the re-samples."""

    resample_fallbacks: np.ndarray
    challenger_steps: np.ndarray
    resamples: np.ndarray


def top_two_params(rule, context: RuleContext, max_resamples: int = 0) -> TopTwoParams | None:
    """The parameters of the compiled top-two steps, or None where the family has no posterior sampler or no
    compiled pair kernel."""
    posterior = posterior_kind(context.family)
    pair = _compiled_families.kernel_code(context.family.compiled_pair("confidence"))
    if posterior is None or pair is None:
        return None
    return TopTwoParams(float(rule.beta), posterior[0], posterior[1], posterior[2], int(pair),
                        np.ascontiguousarray(np.broadcast_to(context.dispersion, (context.n_arms,)), dtype=float),
                        max_resamples, special_functions(), np.empty(context.n_arms), np.empty(context.n_arms),
                        np.arange(context.n_arms))


@kernel
def sample_posterior(params, counts, sums, uniforms, theta):
    """theta~ from the posterior at ``uniforms`` (one per arm), as :func:`posterior_sample`."""
    for arm in range(counts.shape[0]):
        theta[arm] = posterior_quantile(params.posterior, counts[arm], sums[arm], params.dispersion[arm],
                                        uniforms[arm], params.special, params.low, params.high)


@kernel
def t3c_challenger(params, counts, means, leader, uniform, cost):
    """T3C's challenger: a smallest transportation cost W(leader, b) at the empirical means (the pair kernel at the
    effective weights; 0 where b's mean is not below the leader's or the cost is NaN; +inf at the leader)."""
    weight_leader = counts[leader] / params.dispersion[leader]
    for arm in range(counts.shape[0]):
        if arm == leader:
            cost[arm] = np.inf
            continue
        value = 0.0
        if means[leader] > means[arm]:
            value = _compiled_families.weighted_pair(params.pair, means[leader], means[arm], weight_leader,
                                                     counts[arm] / params.dispersion[arm])[0]
            if value != value:
                value = 0.0
        cost[arm] = value
    return pick_among(params.arms, cost, False, uniform)


def t3c_step(row, view, state, params, uniforms, each):
    """:meth:`T3C.select` compiled."""
    n_arms = view.counts.shape[0]
    theta = params.theta
    sample_posterior(params, view.counts, view.sums, uniforms, theta)
    leader = pick_among(params.arms, theta, True, uniforms[n_arms])
    if uniforms[n_arms + 1] < params.beta:
        return leader, 1
    return t3c_challenger(params, view.counts, view.means, leader, uniforms[n_arms + 2], theta), 1


@kernel
def resample_arg_max(params, counts, sums, key, first, theta):
    """One re-sample of TTTS into ``theta``: :func:`sample_posterior` at the uniforms ``first .. first + K - 1`` of
    the stream of ``key`` (:func:`~allocopt.algorithms.engine.counter_stream.fill_counter_uniforms`); returns its
    first largest arm (numpy's argmax), as :meth:`TTTS.select` takes it."""
    fill_counter_uniforms(key, first, params.draws)
    sample_posterior(params, counts, sums, params.draws, theta)
    return np.argmax(theta)


def ttts_step(row, view, state, params, uniforms, each):
    """:meth:`TTTS.select` compiled: re-samples from the step's stream until another arg max (or the cap, then T3C's
    challenger)."""
    n_arms = view.counts.shape[0]
    theta = params.theta
    sample_posterior(params, view.counts, view.sums, uniforms, theta)
    leader = pick_among(params.arms, theta, True, uniforms[n_arms])
    if uniforms[n_arms + 1] < params.beta:
        return leader, 1
    state.challenger_steps[row, 0] += 1
    key = stream_key(uniforms[n_arms + 3], uniforms[n_arms + 4])
    for attempt in range(params.max_resamples):
        best = resample_arg_max(params, view.counts, view.sums, key, attempt * n_arms, theta)
        if theta[leader] < theta[best]:
            state.resamples[row, 0] += attempt + 1
            return best, 1
    state.resamples[row, 0] += params.max_resamples
    state.resample_fallbacks[row, 0] += 1
    return t3c_challenger(params, view.counts, view.means, leader, uniforms[n_arms + 2], theta), 1


_SQRT_HALF_PI = math.sqrt(math.pi / 2.0)
_INVERSE_SQRT_TWO_PI = 1.0 / math.sqrt(2.0 * math.pi)


@kernel
def log_expected_improvement_scalar(x, special):
    """:func:`log_expected_improvement` of one number (the branch it takes, with scipy.special's ndtr and erfcx)."""
    if x > -1.0:
        return math.log(max(x, -1.0) * special.ndtr(x, 0) + math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))
    y = max(-x, 1.0)
    if y >= 100.0:
        inverse_square = 1.0 / (y * y)
        bracket = -2.0 * math.log(y) + math.log1p(inverse_square * (-3.0 + inverse_square * (15.0 - 105.0
                                                                                             * inverse_square)))
    else:
        mills = _SQRT_HALF_PI * special.erfcx(y / math.sqrt(2.0), 0)
        bracket = math.log(max(1.0 - y * mills, 2.2250738585072014e-308))
    return -0.5 * y * y - _LOG_SQRT_2PI + bracket


def ttei_step(row, view, state, params, uniforms, each):
    """:meth:`TTEI.select` compiled (Gaussian arms)."""
    counts, means = view.counts, view.means
    n_arms = counts.shape[0]
    value = params.theta
    best = means[0]
    for arm in range(1, n_arms):
        best = max(best, means[arm])
    for arm in range(n_arms):
        scale = np.sqrt(params.dispersion[arm] / counts[arm])
        value[arm] = np.log(scale) + log_expected_improvement_scalar((means[arm] - best) / scale, params.special)
    leader = pick_among(params.arms, value, True, uniforms[0])
    scale_leader = np.sqrt(params.dispersion[leader] / counts[leader])
    for arm in range(n_arms):
        scale = np.sqrt(params.dispersion[arm] / counts[arm])
        pair_scale = np.sqrt(scale_leader ** 2 + scale ** 2)
        value[arm] = (-np.inf if arm == leader else np.log(pair_scale)
                      + log_expected_improvement_scalar((means[arm] - means[leader]) / pair_scale, params.special))
    challenger = pick_among(params.arms, value, True, uniforms[1])
    return (leader if uniforms[2] < params.beta else challenger), 1


register_policy("ttts", TTTS)
register_policy("t3c", T3C)
register_policy("ttei", TTEI)
