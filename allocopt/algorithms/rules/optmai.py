r"""OptMAI (Zhou, Chen, Li 2014): fixed-budget selection of K arms for a small aggregate regret.

OptMAI is the instance-independent comparator of Chen, Chen, Zhang, Zhou (2017, Section 3), who run it with a
fixed budget beside AdaptiveTopK and CLUCB-PAC. Its sample complexity
:math:`\Theta(\frac{n}{\epsilon^2}(1 + \frac{\ln\delta^{-1}}{K}))` is
:func:`allocopt.complexity.zhou_sample_complexity`.

The rule spends the budget :math:`Q` in rounds :math:`r = 0, 1, \dots`; round :math:`r` gives its active arms
:math:`S_r` the share :math:`(1-\beta)\beta^r Q` of the budget, :math:`\lfloor (1-\beta)\beta^r Q / |S_r|
\rfloor` new pulls each, so that the shares sum to at most :math:`Q`, and then removes a quarter of
:math:`S_r`:

* **Quantile-Elimination** while :math:`|S_r| > 4K`: the :math:`\lfloor |S_r|/4 \rfloor` arms of lowest empirical
  mean are discarded (no arm is accepted);
* **Accept-Reject** afterwards: with :math:`m` arms still to accept, the :math:`\max(1, \lfloor |S_r|/4
  \rfloor)` active arms of largest empirical gap (the gaps of Successive Accepts and Rejects,
  :func:`~allocopt.algorithms.rules.elimination.empirical_gaps`) are removed; each is accepted if it is among the
  :math:`m` empirically best active arms, else rejected. The rounds end when :math:`K` arms are accepted (the
  others are rejected) or the active arms are exactly those still to accept (they are accepted).

:math:`|S_r|` does not depend on the rewards, so the whole schedule is known in advance
(:func:`optmai_rounds`). With :math:`|S_{r+1}| \approx \frac34 |S_r|`, the pulls per arm and round grow by the
factor :math:`\frac43\beta`; the default :math:`\beta = \frac34 e^{0.2}` makes it :math:`e^{0.2}`.

Provenance
    The paper's own text was not available when this was written (Chen et al. 2017 name OptMAI but do not restate
    it). The two phases, their names, the quarter removed per round, the geometric shares of the budget and the
    default :math:`\beta = \frac34 e^{0.2}` follow the published description of the algorithm as we know it; the
    details below are this implementation's choices, stated so that they can be checked against the paper:
    means are cumulative over all the rounds, a round removes :math:`\lfloor |S_r|/4 \rfloor` arms (at least one in
    Accept-Reject), and the shares are rounded down per arm.

Conventions shared with the other round-based rules (:mod:`allocopt.algorithms.rules.elimination`): the engine's
initial pull of every arm counts as the first pull of round 0; a round whose arms already have their pulls (a
small budget gives the first rounds no new pull) is decided at once on the current means; the budget the
rounds leave is spent on all arms in one block and never changes the recommendation; ties are broken by a
random order of the arms drawn once per run. OptMAI needs the budget (``anytime = False``): run it with
:func:`~allocopt.algorithms.identify_fixed_budget`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from ..._validation import as_float, as_int, fail
from .elimination import OPTMAI_DECISION, _Rounds, empirical_gaps
from ..engine.protocol import RuleContext, register_policy

__all__ = ["OptMAI", "OptMAIRounds", "optmai_rounds", "OPTMAI_BETA"]

OPTMAI_BETA = 0.75 * math.exp(0.2)
r"""The default :math:`\beta = \frac34 e^{0.2} \approx 0.916`: the pulls per arm grow by :math:`e^{0.2}` per round."""


class OptMAIRounds(NamedTuple):
    """OptMAI's schedule for n arms, K and the budget Q (:func:`optmai_rounds`; read-only arrays)."""

    sizes: np.ndarray
    """|S_r|: the active arms of round r (while no early end)."""
    pulls: np.ndarray
    """New pulls of each active arm in round r: floor((1 - beta) beta^r Q / |S_r|)."""
    targets: np.ndarray
    """Cumulative pulls of an arm active through round r."""
    quantile_rounds: int
    """How many rounds are Quantile-Elimination rounds (those with |S_r| > 4K)."""

    @property
    def removed(self) -> np.ndarray:
        """The arms round r removes, |S_r| - |S_{r+1}| (|S_r| in the last round): floor(|S_r|/4), at least one in
        Accept-Reject."""
        return self.sizes - np.append(self.sizes[1:], 0)


def optmai_rounds(n_arms: int, k: int, budget: int, beta: float = OPTMAI_BETA) -> OptMAIRounds:
    r"""OptMAI's rounds for ``n_arms`` arms, the top ``k`` and the budget :math:`Q`.

    Quantile-Elimination rounds while :math:`|S_r| > 4K`, removing :math:`\lfloor |S_r|/4 \rfloor` arms each;
    then Accept-Reject rounds removing :math:`\max(1, \lfloor |S_r|/4 \rfloor)` each until no arm is left; round
    :math:`r` pulls each active arm :math:`\lfloor (1-\beta)\beta^r Q/|S_r| \rfloor` more times, so that
    :math:`\sum_r |S_r| \cdot` pulls :math:`\le Q (1 - \beta^{R}) < Q`.

    Examples
    --------
    >>> rounds = optmai_rounds(20, 2, 2000)
    >>> rounds.sizes.tolist()[:6], rounds.quantile_rounds
    ([20, 15, 12, 9, 7, 6], 4)
    >>> rounds.pulls.tolist()[:3]  # floor(0.0840 * 2000 / 20), floor(0.0840 * 0.916 * 2000 / 15), ...
    [8, 10, 11]
    >>> bool((rounds.sizes * rounds.pulls).sum() <= 2000)
    True
    """
    n_arms = as_int(n_arms, "optmai_rounds", "n_arms", low=2)
    k = as_int(k, "optmai_rounds", "k", low=1, high=n_arms - 1)
    budget = as_int(budget, "optmai_rounds", "budget", low=n_arms,
                    requirement=f"an integer >= n = {n_arms} (one pull per arm)")
    return _schedule(n_arms, k, budget, _beta(beta, "optmai_rounds"))


@functools.lru_cache(maxsize=256)
def _schedule(n_arms: int, k: int, budget: int, beta: float) -> OptMAIRounds:
    """:func:`optmai_rounds` on valid arguments, computed once per (n, K, Q, beta): a rule's every step reads the
    same schedule (its arrays are read-only, since the calls share them)."""
    sizes = []
    size = n_arms
    while size > 4 * k:  # Quantile-Elimination: floor(|S_r|/4) removed
        sizes.append(size)
        size -= size // 4
    quantile_rounds = len(sizes)
    while size > 0:  # Accept-Reject: max(1, floor(|S_r|/4)) removed
        sizes.append(size)
        size -= max(1, size // 4)
    sizes_array = np.array(sizes, dtype=np.int64)
    share = (1.0 - beta) * beta ** np.arange(sizes_array.size) * budget
    pulls = np.floor(share / sizes_array).astype(np.int64)
    targets = np.cumsum(pulls)
    for array in (sizes_array, pulls, targets):
        array.flags.writeable = False
    return OptMAIRounds(sizes_array, pulls, targets, quantile_rounds)


def _beta(beta, func: str) -> float:
    value = as_float(beta, func, "beta")
    if not 0.0 < value < 1.0:
        fail(func, "beta", "a number in (0, 1) (the budget shares (1 - beta) beta^r sum to 1)", beta)
    return value


@dataclass(frozen=True)
class OptMAI(_Rounds):
    r"""OptMAI (Zhou, Chen, Li 2014): Quantile-Elimination rounds, then Accept-Reject rounds, on geometric shares
    :math:`(1-\beta)\beta^r Q` of the budget (see the module docstring, which also says what was taken from where).

    Parameters
    ----------
    beta : float, default :data:`OPTMAI_BETA`
        The ratio of the budget shares of consecutive rounds, in (0, 1).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify_fixed_budget
    >>> from allocopt.complexity import aggregate_regret
    >>> theta = np.array([0.9, 0.85, 0.8, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05, 0.02])
    >>> problem = TopKProblem(theta, k=2, family="bernoulli")
    >>> result = identify_fixed_budget(problem, OptMAI(), [3000], n_runs=20, rng=1)
    >>> bool(np.mean(aggregate_regret(theta, result.recommendations[:, 0])) < 0.05)
    True
    """

    beta: float = OPTMAI_BETA
    name = "optmai"
    rule_kind: ClassVar[int] = OPTMAI_DECISION

    def quantile_rounds(self, context: RuleContext) -> int:
        return int(self.rounds(context).quantile_rounds)

    def __post_init__(self):
        object.__setattr__(self, "beta", _beta(self.beta, "OptMAI"))

    def rounds(self, context: RuleContext) -> OptMAIRounds:
        """The schedule of a run (:func:`optmai_rounds` at the run's K, k and budget)."""
        budget = context.budget_value(self.name)
        if budget < context.n_arms:
            fail("OptMAI", "budget", f"an integer >= K = {context.n_arms} (one pull per arm)", budget)
        return _schedule(int(context.n_arms), int(context.k), int(budget), self.beta)  # (the beta is checked)

    def targets(self, context: RuleContext) -> np.ndarray:
        return self.rounds(context).targets

    def _decide(self, context, round_index, values, priority, to_accept):
        rounds = self.rounds(context)
        order = np.lexsort((priority, -values))  # decreasing empirical mean; ties in the run's random order
        if round_index < rounds.quantile_rounds:  # Quantile-Elimination: the lowest quarter is discarded
            return order[values.size - values.size // 4:]
        gaps = empirical_gaps(values[None], priority[None], np.array([to_accept]))
        removed = np.lexsort((priority, -gaps.gaps[0]))[:max(1, values.size // 4)]  # the largest gaps
        return removed, gaps.in_top[0, removed]

register_policy("optmai", OptMAI)
