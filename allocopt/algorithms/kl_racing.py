r"""KL-Racing and KL-Elimination (Kaufmann and Kalyanakrishnan 2013, Section 3), fixed confidence, top-k.

Each round pulls every arm still in the race :math:`R` once (one :class:`~allocopt.algorithms.PullEach`
step), then, with :math:`S` the accepted arms, :math:`m = k - |S|`, :math:`J` the :math:`m` arms of
:math:`R` with the largest empirical means and the KL bounds :math:`U_a, L_a` at level
:math:`\beta(t, \delta)/N_a` (:mod:`allocopt.algorithms.confidence_bounds`):

* :math:`a_B = \arg\max_{a \in R} \hat\mu_a`, :math:`a_W = \arg\min_{a \in R} \hat\mu_a`,
  :math:`u = \arg\max_{a \in R \setminus J} U_a`, :math:`l = \arg\min_{a \in J} L_a`;
* accept :math:`a_B` (move it to :math:`S`) if :math:`L_{a_B} \ge U_u` - KL-Racing only;
* eliminate :math:`a_W` if :math:`U_{a_W} \le L_l`.

At most one acceptance and one elimination per round, both tested on the same statistics. The run stops
when :math:`|S| = k` or :math:`|S| + |R| = k` and recommends :math:`S` with the :math:`k - |S|` best
survivors. KL-Elimination never accepts (Wang, Yang, You 2022, Appendix C.3: "the Elimination algorithm
never selects arm :math:`a_B` into S"), so it stops when :math:`k` arms survive.

Randomness: ties among arms of equal empirical mean (for :math:`a_B`, :math:`a_W`) or equal bound (for
:math:`u`, :math:`l`) are broken uniformly at random. The decision at pull count :math:`t` is taken by the
rule's stopping check (which receives no uniforms) or, in the first step, by ``select``; it uses the two
uniforms that the previous step stored in the run's state (0.5 before the first step, when every arm has
one pull): two for :math:`a_B, a_W` and, reused, for :math:`u, l`. Each step draws two uniforms.

A batch of Gaussian or Bernoulli runs with a named exploration rate runs through the compiled loop of
:mod:`allocopt.algorithms._compiled_kl_racing` (the engine's ``compiled_rows`` hook) when the compiled kernels are
enabled: the same rounds with the same records bit for bit; the numpy steps here stay the reference (and run with
``compiled_kernels(False)``, for a subclass, another family, or for ``batched=False``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from .._rng import random_candidate
from .._validation import as_bool
from .confidence_bounds import check_exploration, exploration_rate, kl_bound
from .lucb import _need_delta
from .protocol import BatchPullEach, PullEach, RuleContext, RunView, register_policy

__all__ = ["KLElimination", "RacingSets", "racing_decision"]


class RacingSets(NamedTuple):
    """Accepted and eliminated arms (boolean masks over the arms, one run or a batch)."""

    accepted: np.ndarray
    eliminated: np.ndarray


def _ranked_in(values: np.ndarray, members: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Mask of the ``count`` members with the largest values (ties to the smaller arm index)."""
    order = np.argsort(np.where(members, -values, np.inf), axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(values.shape[-1]), order.shape), axis=-1)
    return members & (rank < np.asarray(count)[..., None])


def _extreme(values: np.ndarray, members: np.ndarray, best: str, uniforms: Any) -> np.ndarray:
    masked = np.where(members, values, -np.inf if best == "max" else np.inf)
    target = masked.max(axis=-1, keepdims=True) if best == "max" else masked.min(axis=-1, keepdims=True)
    return np.asarray(random_candidate(members & (masked == target), uniforms))


def _take(values: np.ndarray, arm: np.ndarray) -> np.ndarray:
    return np.take_along_axis(values, arm[..., None], axis=-1)[..., 0]


def racing_decision(family, dispersion, view: RunView, sets: RacingSets, k: int, beta: Any, uniforms: np.ndarray,
                    accept: bool) -> RacingSets:
    """One round's decisions (see the module docstring); ``uniforms[..., 0:2]`` break the ties."""
    accepted, eliminated = sets.accepted.copy(), sets.eliminated.copy()
    remaining = ~(accepted | eliminated)
    n_accepted = accepted.sum(axis=-1)
    still_open = (n_accepted < k) & (n_accepted + remaining.sum(axis=-1) > k)
    means = view.means
    level = np.asarray(beta)[..., None] / view.counts
    upper = kl_bound(family, means, level, True, dispersion)
    lower = kl_bound(family, means, level, False, dispersion)
    leaders = _ranked_in(means, remaining, k - n_accepted)  # J: the k - |S| empirical best of R
    best = _extreme(means, remaining, "max", uniforms[..., 0])  # a_B
    worst = _extreme(means, remaining, "min", uniforms[..., 1])  # a_W
    challenger = _extreme(upper, remaining & ~leaders, "max", uniforms[..., 0])  # u
    weakest = _extreme(lower, leaders, "min", uniforms[..., 1])  # l
    accept_now = still_open & (_take(lower, best) >= _take(upper, challenger)) if accept else np.zeros_like(still_open)
    eliminate_now = still_open & (_take(upper, worst) <= _take(lower, weakest)) & ~(accept_now & (best == worst))
    np.put_along_axis(accepted, best[..., None], _take(accepted, best)[..., None] | accept_now[..., None], axis=-1)
    np.put_along_axis(eliminated, worst[..., None], _take(eliminated, worst)[..., None] | eliminate_now[..., None],
                      axis=-1)
    return RacingSets(accepted, eliminated)


@dataclass(frozen=True)
class KLElimination:
    r"""KL-Elimination (``racing=False``, default) and KL-Racing (``racing=True``) of Kaufmann and
    Kalyanakrishnan (2013), with the exploration rate of Wang, Yang, You (2022, Section 5) by default.

    Parameters
    ----------
    racing : bool, default False
        Also accept arms (KL-Racing).
    exploration : str or callable, default "heuristic"
        :math:`\beta(t, \delta)`, :mod:`allocopt.algorithms.confidence_bounds`.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.9, 0.1, 0.0], k=2, variance=0.25)
    >>> result = identify(problem, KLElimination(), delta=0.05, n_runs=10, rng=4)
    >>> bool(result.correct.all()), bool(result.stopped.all())
    (True, True)
    """

    racing: bool = False
    exploration: str | Callable = "heuristic"
    name = "kl-elimination"
    stopping = "rule"
    uses_glr = False
    uses_empirical_top = False  # it ranks the arms of the race itself (the engine's top-k only for the records)
    delta_dependent = True

    def __post_init__(self):
        as_bool(self.racing, "KLElimination", "racing")
        check_exploration(self.exploration, "KLElimination")

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 2

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        _need_delta(context, "KLElimination")
        return {"accepted": np.zeros((n_runs, context.n_arms), dtype=bool),
                "eliminated": np.zeros((n_runs, context.n_arms), dtype=bool),
                "decided_at": np.full((n_runs, 1), -1, dtype=np.int64),
                "tie_uniforms": np.full((n_runs, 2), 0.5)}

    def _sets(self, context: RuleContext, view: RunView, state) -> RacingSets:
        """The sets after the decision at the current pull count (computed, not stored)."""
        sets = RacingSets(state["accepted"], state["eliminated"])
        due = state["decided_at"][..., 0] != view.t
        if not np.any(due):
            return sets
        beta = exploration_rate(self.exploration, view.t, context.delta_value(self.name), context.n_arms)
        decided = racing_decision(context.family, context.dispersion, view, sets, context.k, beta,
                                  state["tie_uniforms"], self.racing)
        return RacingSets(np.where(np.asarray(due)[..., None], decided.accepted, sets.accepted),
                          np.where(np.asarray(due)[..., None], decided.eliminated, sets.eliminated))

    def _decide(self, context: RuleContext, view: RunView, state) -> RacingSets:
        sets = self._sets(context, view, state)
        state["accepted"][...] = sets.accepted
        state["eliminated"][...] = sets.eliminated
        state["decided_at"][..., 0] = view.t
        return sets

    @staticmethod
    def _finished(sets: RacingSets, k: int) -> np.ndarray:
        n_accepted = sets.accepted.sum(axis=-1)
        return (n_accepted == k) | (n_accepted + (~(sets.accepted | sets.eliminated)).sum(axis=-1) == k)

    def stop(self, context: RuleContext, view: RunView, state) -> bool:
        return bool(self._finished(self._decide(context, view, state), context.k))

    def stop_batch(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        return self._finished(self._decide(context, view, state), context.k)

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> PullEach:
        sets = self._decide(context, view, state)  # accept a_B / eliminate a_W (done once per pull count)
        state["tie_uniforms"][...] = uniforms  # the next decision's tie-breaks
        remaining = ~(sets.accepted | sets.eliminated)
        return PullEach(remaining.astype(np.int64))  # sample every arm still in the race

    def select_batch(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> BatchPullEach:
        sets = self._decide(context, view, state)
        state["tie_uniforms"][...] = uniforms
        return BatchPullEach((~(sets.accepted | sets.eliminated)).astype(np.int64))

    def _recommend(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        sets = self._sets(context, view, state)
        remaining = ~(sets.accepted | sets.eliminated)
        best_survivors = _ranked_in(view.means, remaining, context.k - sets.accepted.sum(axis=-1))
        chosen = sets.accepted | best_survivors
        return np.sort(np.argsort(~chosen, axis=-1, kind="stable")[..., :context.k], axis=-1)

    def recommend(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        return self._recommend(context, view, state)

    def recommend_batch(self, context: RuleContext, view: RunView, state) -> np.ndarray:
        return self._recommend(context, view, state)

    def compiled_rows(self, context: RuleContext, mode: str, checkpoints: np.ndarray, max_samples: int,
                      counts: np.ndarray, sums: np.ndarray, t: np.ndarray, rewards, policy_generators):
        """The engine's hook: a batch of Gaussian or Bernoulli runs at one confidence level through the compiled run
        loop, with the numpy loop's outcomes (None for a subclass, whose steps may differ, another family, or an
        exploration rate given as a callable)."""
        from ._compiled_kl_racing import RACING_FAMILIES, run_racing_rows

        if (type(self) is not KLElimination or mode != "confidence" or checkpoints.shape[0] != 1
                or context.family.name not in RACING_FAMILIES or not isinstance(self.exploration, str)
                or np.shape(context.dispersion) != (context.n_arms,)):
            return None
        return run_racing_rows(context.k, self.racing, self.exploration, context.delta_value(self.name),
                               context.dispersion, max_samples, counts, sums, t, rewards, policy_generators,
                               context.family.name)


register_policy("kl-elimination", KLElimination)
