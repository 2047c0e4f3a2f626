r"""The sampling-rule protocol and the registry of rule names.

A sampling rule is a frozen configuration object (a frozen dataclass) with

``uniforms_per_step(context) -> int``
    How many uniforms in (0, 1) one step consumes (posterior samples, coins, tie-breaks). Fixed per step, so
    that one run and a batch of runs read their random streams identically.
``init_state(context, n_runs) -> dict[str, ndarray]``
    The per-run state: arrays whose first axis has length ``n_runs`` and at least two dimensions (so that
    row ``r`` is a writable view). Rules without state return ``{}``.
``select(context, view, state, uniforms) -> int | Pull``
    One step of one run, written like the paper's pseudo-code: ``view`` is a :class:`RunView` (counts, sums,
    means, the Chernoff statistic and the empirical top-k), ``state`` holds the run's rows of the state
    arrays (update them in place), ``uniforms`` is a vector of ``uniforms_per_step`` numbers.

and optionally

``select_batch(context, view, state, uniforms) -> ndarray | BatchPull``
    The same step for many runs at once (``view`` a :class:`RunView` with a leading run axis, ``state`` the
    rows of the active runs, to be updated by assignment ``state[name][...] = ...`` or returned by
    ``state_updates``). It must choose exactly the arms that ``select`` chooses; the conformance suite checks
    this for every registered rule.

and, for rules with their own stopping or recommendation,

``stop(context, view, state) -> bool`` / ``stop_batch(context, view, state) -> ndarray of bool``
    Used when the rule sets ``stopping = "rule"`` (e.g. the LUCB family's bound-crossing rules, or a PAC
    algorithm that ends when its rounds are over): checked at every step before ``select``; the run stops at
    the first step where it is True. Such rules run one confidence level at a time (``context.delta``).
``recommend(context, view, state) -> ndarray (k,)`` / ``recommend_batch(...) -> ndarray (R, k)``
    The arms recommended at a stop or a budget (default: the empirical top-k), e.g. the accepted arms of an
    elimination algorithm.

Optional class attributes: ``stopping`` (``"glr"``, the shared Chernoff rule, by default; ``"rule"`` for
the rule's own ``stop``), ``uses_glr`` (default True; a rule that never reads ``view.glr``, ``view.pair_top`` or
``view.pair_bottom`` sets it False, and the engine then computes the Chernoff statistic only when it stops on
it - in fixed-budget runs and under the rule's own stopping those fields are then NaN and -1),
``uses_empirical_top`` (default True; a rule that reads neither those fields nor ``view.top`` and ``view.bottom``
sets it False, and the engine then skips the empirical top-k except at the steps where it records a
recommendation - elsewhere ``top`` and ``bottom`` are empty), ``anytime`` (default True: one run serves every budget of a fixed-budget
experiment; False makes the runner pass the budget in ``context.budget`` and run each budget separately),
``delta_dependent`` (default False; True makes the runner run one delta at a time with ``context.delta``
set, for rules such as LUCB whose sampling uses the confidence level), ``max_k`` (e.g. 1 for best-arm rules),
``families`` (names of the reward families the rule is defined for; the runners refuse the others),
``initial_pulls`` (pulls of every arm before the rule runs, default 1) and ``diagnostics(state)`` (per-run
numbers reported in the result, e.g. solver fallbacks).

A step may pull one arm, a block "arm ``a``, ``n`` times" (:class:`Pull`), or a block of several arms
"arm ``a`` ``counts[a]`` times for every ``a``" (:class:`PullEach`, pulled in arm order), which elimination
algorithms use to spend one step per round; the stopping rule is checked between steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Protocol, runtime_checkable

import numpy as np

from ..._numba import kernel
from ..._validation import fail
from ...families import ExponentialFamily

# what a compiled step returns as its arm when it does not pull one arm (StepKernel)
EACH = -1
"""Pull ``each[a]`` times every arm ``a`` (the step wrote the counts into its ``each`` argument)."""
DEFER = -2
"""Run this step in Python (the rule's ``select``); the step changed nothing."""
GROW = -3
"""A table of the rule's is too short: ``each[0]`` is the index it needs (``StepKernel.grow``); nothing changed."""
NO_UNIFORMS = -4
"""The step needs more policy uniforms than the row holds; nothing changed."""

__all__ = ["RuleContext", "RunView", "Pull", "BatchPull", "PullEach", "BatchPullEach", "SamplingRule", "StepKernel",
           "RuleTraits", "rule_traits", "kernel", "EACH", "DEFER", "GROW", "NO_UNIFORMS",
           "POLICIES", "register_policy", "get_policy", "policy_name"]


@dataclass(frozen=True)
class RuleContext:
    """What a rule may know about the problem: no true means.

    Attributes
    ----------
    n_arms, k : int
    family : ExponentialFamily
    dispersion : ndarray, shape (K,)
        Per-arm dispersion (Gaussian variance, 1 otherwise).
    delta : float or None
        The confidence level, for delta-dependent rules run one delta at a time.
    budget : int or None
        The budget, for fixed-budget rules that are not anytime.
    epsilon : float or None
        The accuracy of a PAC run (:func:`~allocopt.algorithms.pac_identify`).
    """

    n_arms: int
    k: int
    family: ExponentialFamily
    dispersion: np.ndarray
    delta: float | None = None
    budget: int | None = None
    epsilon: float | None = None

    def delta_value(self, func: str = "RuleContext") -> float:
        """The confidence level, for rules that need one (a clear error where the runner gave none)."""
        if self.delta is None:
            fail(func, "delta", "a confidence level: the rule needs one (run it with identify or pac_identify)", None)
        return float(self.delta)

    def budget_value(self, func: str = "RuleContext") -> int:
        """The budget, for fixed-budget rules that are not anytime (a clear error where the runner gave none)."""
        if self.budget is None:
            fail(func, "budget", "a budget: the rule needs one (run it with identify_fixed_budget)", None)
        return int(self.budget)


class RunView(NamedTuple):
    """The statistics handed to a rule at a step (one run: shapes (K,), (k,); a batch: a leading run axis).

    ``t`` is the number of pulls so far; ``glr`` the Chernoff statistic :math:`Z_t`; ``top``/``bottom``
    the empirical top-k and the other arms (in increasing arm order); ``pair_top``/``pair_bottom`` the pair
    attaining :math:`Z_t`.
    """

    t: Any
    counts: np.ndarray
    sums: np.ndarray
    means: np.ndarray
    glr: Any
    top: np.ndarray
    bottom: np.ndarray
    pair_top: Any
    pair_bottom: Any


class Pull(NamedTuple):
    """A block action of one run: pull ``arm`` ``times`` times in a row."""

    arm: int
    times: int


class BatchPull(NamedTuple):
    """Block actions of a batch of runs: ``arms`` and ``counts``, each of shape (R,)."""

    arms: np.ndarray
    counts: np.ndarray


class PullEach(NamedTuple):
    """A block action of one run over several arms: pull arm ``a`` ``counts[a]`` times, in arm order
    (``counts`` of shape (K,), non-negative integers, at least one positive)."""

    counts: np.ndarray


class BatchPullEach(NamedTuple):
    """:class:`PullEach` actions of a batch of runs: ``counts`` of shape (R, K)."""

    counts: np.ndarray


@dataclass(frozen=True)
class RuleTraits:
    """What the engine and the runners need to know about a rule, declared once (a rule's ``traits`` attribute).

    Attributes
    ----------
    initial_pulls : int
        Pulls of every arm, in arm order, before the rule's first step.
    stopping : {"glr", "rule"}
        Stopped by the shared Chernoff rule, or by the rule's own ``stop`` (then run one confidence level at a time).
    uses_glr : bool
        The rule reads ``view.glr``, ``view.pair_top`` or ``view.pair_bottom``; otherwise the engine computes the
        Chernoff statistic only when it stops on it (those fields are then NaN and -1).
    uses_empirical_top : bool
        The rule reads ``view.top`` or ``view.bottom`` (or the statistic); otherwise they are empty except where a
        recommendation is recorded.
    anytime : bool
        One run serves every budget of a fixed-budget experiment; False runs each budget with ``context.budget``.
    delta_dependent : bool
        The sampling reads ``context.delta``: the runner runs one confidence level at a time.
    max_k : int or None
        The largest k the rule is defined for (1 for best-arm rules).
    families : tuple of str or None
        The reward families the rule is defined for (None: every family); the runners refuse the others.
    block_cut : {"arm-order", "water-fill"}
        How a block that would pass a budget or the sample cap is cut (:func:`~allocopt.algorithms.engine.run.cut_blocks`).
    diagnostic_names : tuple of str
        The per-run numbers the rule's ``diagnostics(state)`` reports.
    """

    initial_pulls: int = 1
    stopping: str = "glr"
    uses_glr: bool = True
    uses_empirical_top: bool = True
    anytime: bool = True
    delta_dependent: bool = False
    max_k: int | None = None
    families: tuple[str, ...] | None = None
    block_cut: str = "arm-order"
    diagnostic_names: tuple[str, ...] = ()


_TRAIT_NAMES = tuple(RuleTraits.__dataclass_fields__)


def rule_traits(rule) -> RuleTraits:
    """The rule's :class:`RuleTraits`: its ``traits`` attribute, or, for a rule written against the attribute
    protocol (one class attribute per trait), those attributes with the defaults of :class:`RuleTraits`.

    Examples
    --------
    >>> class Mine:
    ...     max_k = 1
    >>> rule_traits(Mine()).max_k, rule_traits(Mine()).stopping
    (1, 'glr')
    """
    traits = getattr(rule, "traits", None)
    if isinstance(traits, RuleTraits):
        return traits
    values = {name: getattr(rule, name) for name in _TRAIT_NAMES if hasattr(rule, name)}
    if "families" in values and values["families"] is not None:
        values["families"] = tuple(values["families"])
    if "diagnostic_names" in values:
        values["diagnostic_names"] = tuple(values["diagnostic_names"])
    return RuleTraits(**values)


@dataclass(frozen=True)
class StepKernel:
    r"""A rule's compiled step: what its ``compiled_step(context)`` returns for the engine's compiled loop
    (:mod:`allocopt.algorithms.engine.loop`), which runs it one replication at a time.

    Attributes
    ----------
    select : callable
        ``select(row, view, state, params, uniforms, each) -> (arm, times)``, a plain function that numba compiles:
        the rule's step for replication ``row``, reading ``view`` (a :class:`RunView` of that row), its ``state``
        (the fields of :attr:`state`, arrays with a leading replication axis: row ``row`` is the replication's),
        ``params`` and the step's ``per_step`` uniforms. It returns the arm and how many times to pull it, or
        ``(EACH, 0)`` after writing a count per arm into ``each``; ``(DEFER, 0)`` hands this step to the rule's
        Python ``select`` (for cases the kernel leaves to the specification); ``(GROW, 0)`` with ``each[0]`` the
        index needed asks :attr:`grow` for longer tables. It must not change ``state`` before returning
        ``DEFER`` or ``GROW`` (codes in :mod:`allocopt.algorithms.engine.loop`).
    params : NamedTuple or tuple
        Constants and read-only arrays of the rule (numbers, arrays, function pointers).
    state : NamedTuple class, optional
        Its fields name the arrays of the rule's ``init_state`` that the kernel reads and updates.
    stop : callable, optional
        ``stop(row, view, state, params) -> bool`` for a rule with its own stopping rule.
    recommend : callable, optional
        ``recommend(row, view, state, params, out)``: writes the k recommended arms (default: the empirical top-k).
    grow : callable, optional
        ``grow(params, index) -> params`` with tables reaching ``index``.
    work_state : callable, optional
        ``work_state(n_runs, n_arms) -> dict`` of arrays (leading replication axis) that only the kernel reads and
        writes (incremental structures); the fields of :attr:`state` are taken from them and from ``init_state``.
    """

    select: Callable
    params: Any = ()
    state: Any = None
    stop: Callable | None = None
    recommend: Callable | None = None
    grow: Callable | None = None
    work_state: Callable | None = None


@runtime_checkable
class SamplingRule(Protocol):
    """See the module docstring."""

    def uniforms_per_step(self, context: RuleContext) -> int: ...

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]: ...

    def select(self, context: RuleContext, view: RunView, state: dict[str, np.ndarray],
               uniforms: np.ndarray) -> int | Pull: ...


POLICIES: dict[str, Any] = {}
"""Rule names mapped to factories of their default configuration."""


def register_policy(name: str, factory) -> None:
    """Register ``factory()`` (a rule with its default configuration) under ``name``."""
    POLICIES[name] = factory


def get_policy(policy, func: str):
    """A rule object from a registered name or an object following the protocol."""
    if isinstance(policy, str):
        if policy not in POLICIES:
            fail(func, "policy", "a registered rule name (one of " + ", ".join(repr(name) for name in sorted(POLICIES))
                 + ") or an object with uniforms_per_step, init_state and select", policy)
        return POLICIES[policy]()
    if isinstance(policy, type):
        fail(func, "policy", f"a rule object, not a class: pass {policy.__name__}() (an instance, with its options) "
             "or a registered rule name", policy)
    if not isinstance(policy, SamplingRule):
        missing = [name for name in ("uniforms_per_step", "init_state", "select") if not callable(getattr(policy, name,
                                                                                                          None))]
        fail(func, "policy", "a registered rule name (one of " + ", ".join(repr(name) for name in sorted(POLICIES))
             + ") or an object with uniforms_per_step, init_state and select (this one has no "
             + " and no ".join(missing) + " method)", policy)
    return policy


def policy_name(policy) -> str:
    """A short name for results: the rule's ``name`` attribute or its class name."""
    return str(getattr(policy, "name", type(policy).__name__))
