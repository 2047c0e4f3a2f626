r"""The OCBA subset-selection baselines OCBAss and OCBASS (Wang, Yang, You 2022, Appendix C.3).

Both rules pull every arm :math:`\Delta_0` times (``initial``; the engine's ``initial_pulls``) and then, at
every step:

1. with the empirical top-k :math:`\hat I_t` of the sample means and the other arms :math:`\hat J_t`, find the
   pair :math:`(i_t, j_t) = \arg\min_{i \in \hat I_t, j \in \hat J_t} C_{ij}` of the pair costs at the sample
   means and the counts (ties broken uniformly at random). For Gaussian arms
   :math:`C_{ij} = (\hat\theta_i - \hat\theta_j)^2 / (2(\sigma_i^2/N_i + \sigma_j^2/N_j))`, the OCBA ratio up to
   the constant factor 1/2; for the other families the family's :math:`C_{ij}` at the counts;
2. pull one arm of the pair ``block`` = n times in a row (one block action, :class:`~.protocol.Pull`):

   * **OCBAss** (name ``"ocba-balanced"``; Gao and Chen, "A note on the subset selection for simulation
     optimization", reference [10] of Wang, Yang, You 2022) balances the sum of squared allocations: it pulls
     :math:`i_t` if :math:`\sum_{a \in \hat I_t} N_a^2/\sigma_a^2 < \sum_{a \in \hat J_t} N_a^2/\sigma_a^2`,
     else :math:`j_t` (:math:`\sigma_a^2 = 1` outside the Gaussian family, where this balance is not the
     optimality condition, as the paper remarks);
   * **OCBASS** (name ``"ocba-unbalanced"``; Gao and Chen, "A new budget allocation framework for selecting
     top simulated designs", reference [11]) has no balance step: the paper chooses :math:`i_t` or :math:`j_t`
     "arbitrarily"; here each with probability 1/2.

The paper's experiments use :math:`\Delta_0 = n = 10`, the values its references suggest. Each step consumes
two uniforms: the tie-break among minimal pairs and the coin of OCBASS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...families import kernels as _compiled_families
from ..._rng import random_candidate
from ..._validation import as_int, fail
from ..engine.loop import GAUSSIAN_STATISTIC
from ..engine._pair_kernels import pair_cost_grid, sort_arms
from .kkt_ts import pair_cost
from ..engine.protocol import Pull, RuleContext, RunView, StepKernel, register_policy
from ..engine.statistics import sequential_sum

__all__ = ["OCBA", "minimal_pair"]


def minimal_pair(context: RuleContext, counts: np.ndarray, means: np.ndarray,
                 uniforms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pair of minimal cost at the sample means (one run (K,) or a batch (R, K); ties at random with
    ``uniforms`` of shape () or (R,)): returns the pair's top and bottom arms and the empirical top-k and
    the other arms."""
    k = context.k
    arms = sort_arms(means, counts / context.dispersion, k)
    cost, _ = pair_cost_grid(context.family, "confidence", arms)
    # a tie across the boundary (or a degenerate pair at the edge of the domain) costs nothing
    cost = np.where(arms.value_top > arms.value_bottom, cost, 0.0)
    if not context.family.harmonic_costs("confidence"):  # the closed form of harmonic costs is never nan
        cost = np.where(np.isnan(cost), 0.0, cost)
    flat = cost.reshape(cost.shape[:-2] + (-1,))
    pair = random_candidate(flat == flat.min(axis=-1, keepdims=True), uniforms)
    n_bottom = means.shape[-1] - k
    row, column = pair // n_bottom, pair % n_bottom
    pair_top = np.take_along_axis(arms.top, np.asarray(row)[..., None], axis=-1)[..., 0]
    pair_bottom = np.take_along_axis(arms.bottom, np.asarray(column)[..., None], axis=-1)[..., 0]
    return pair_top, pair_bottom, arms.top, arms.bottom


@dataclass(frozen=True)
class OCBA:
    """OCBAss (``balance=True``, ``"ocba-balanced"``) and OCBASS (``balance=False``, ``"ocba-unbalanced"``).

    Parameters
    ----------
    balance : bool
        True: the sum-of-squares balance step of OCBAss; False: OCBASS's random choice within the pair.
    block : int, default 10
        Pulls per step, the paper's n.
    initial : int, default 10
        Initial pulls of every arm, the paper's :math:`\\Delta_0`.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> problem = TopKProblem([1.0, 0.9, 0.3, 0.2], k=2, variance=0.25)
    >>> result = identify(problem, OCBA(balance=True), delta=0.01, n_runs=10, rng=3)
    >>> bool(result.correct.mean() >= 0.9), bool(result.stopping_times.min() >= 40)
    (True, True)
    """

    balance: bool = True
    block: int = 10
    initial: int = 10
    uses_glr = False

    def __post_init__(self):
        if not isinstance(self.balance, (bool, np.bool_)):
            fail("OCBA", "balance", "True (OCBAss) or False (OCBASS)", self.balance)
        as_int(self.block, "OCBA", "block", low=1, requirement="an integer >= 1 (pulls per step, the paper's n)")
        as_int(self.initial, "OCBA", "initial",
               low=1, requirement="an integer >= 1 (initial pulls of every arm, the paper's Delta_0)")

    @property
    def name(self) -> str:
        return "ocba-balanced" if self.balance else "ocba-unbalanced"

    @property
    def initial_pulls(self) -> int:
        return int(self.initial)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 2

    def init_state(self, context: RuleContext, n_runs: int) -> dict[str, np.ndarray]:
        return {}

    def _squares(self, context: RuleContext, counts: np.ndarray) -> np.ndarray:
        counts = counts.astype(float)
        return counts * counts / context.dispersion

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> Pull:
        # 1. the pair (i_t, j_t) of minimal C_ij at the sample means
        i, j, top, bottom = minimal_pair(context, view.counts, view.means, uniforms[0])
        # 2. the balance step of OCBAss, or OCBASS's arbitrary (here: random) choice
        if self.balance:  # (sums left to right, as the compiled step adds)
            squares = self._squares(context, view.counts)
            pull_top = sequential_sum(squares[top]) < sequential_sum(squares[bottom])
        else:
            pull_top = uniforms[1] < 0.5
        return Pull(int(i) if pull_top else int(j), int(self.block))

    def compiled_step(self, context: RuleContext) -> StepKernel | None:
        """:func:`ocba_step` for the engine's compiled loop (None for a family without a compiled pair kernel)."""
        harmonic = context.family.harmonic_costs("confidence")
        pair = None if harmonic else _compiled_families.kernel_code(context.family.compiled_pair("confidence"))
        if not harmonic and pair is None:
            return None
        n_arms = context.n_arms
        return StepKernel(ocba_step, params=OCBAParams(
            bool(self.balance), int(self.block), GAUSSIAN_STATISTIC if pair is None else int(pair),
            np.ascontiguousarray(np.broadcast_to(context.dispersion, (n_arms,)), dtype=float), np.empty(n_arms)))

class OCBAParams(NamedTuple):
    """What :func:`ocba_step` reads."""

    balance: bool
    block: int
    pair: int
    dispersion: np.ndarray
    weight: np.ndarray  # (K,) work


def ocba_step(row, view, state, params, uniforms, each):
    """:meth:`OCBA.select` compiled: a pair of minimal cost at the sample means (ties at random), then the side."""
    counts, means, top, bottom = view.counts, view.means, view.top, view.bottom
    n_bottom = bottom.shape[0]
    weight = params.weight
    gaussian = params.pair == GAUSSIAN_STATISTIC
    for arm in range(counts.shape[0]):
        weight[arm] = counts[arm] / params.dispersion[arm]
        if gaussian:
            weight[arm] = 1.0 / weight[arm]  # the closed form reads 1/w
    smallest, tied = np.inf, 0
    for rank in range(2):  # the smallest cost, then the floor(u c)-th of its c pairs in row-major order
        pick = min(int(uniforms[0] * tied), max(tied - 1, 0))
        for i in range(top.shape[0]):
            for j in range(n_bottom):
                value = 0.0
                if means[top[i]] > means[bottom[j]] or gaussian:
                    value = pair_cost(params, means[top[i]], means[bottom[j]], weight[top[i]], weight[bottom[j]])
                    if value != value:
                        value = 0.0
                if rank == 0:
                    if value < smallest:
                        smallest, tied = value, 1
                    elif value == smallest:
                        tied += 1
                elif value == smallest:
                    if pick == 0:
                        pull_top = uniforms[1] < 0.5
                        if params.balance:
                            squares_top, squares_bottom = 0.0, 0.0
                            for a in top:
                                squares_top += float(counts[a]) * float(counts[a]) / params.dispersion[a]
                            for b in bottom:
                                squares_bottom += float(counts[b]) * float(counts[b]) / params.dispersion[b]
                            pull_top = squares_top < squares_bottom
                        return (top[i] if pull_top else bottom[j]), params.block
                    pick -= 1
    return top[0], params.block


register_policy("ocba-balanced", lambda: OCBA(balance=True))
register_policy("ocba-unbalanced", lambda: OCBA(balance=False))
