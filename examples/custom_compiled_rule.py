"""A sampling rule of your own, with its own compiled step, run by allocopt's engine.

The rule is EB-TC for best-arm identification (Jourdan, Degenne, Kaufmann 2023): the leader is the empirical best
arm; the challenger is the arm of smallest Gaussian transportation cost to it,
W(I, b) = (mu_I - mu_b)^2 / (2 (sigma_I^2 / N_I + sigma_b^2 / N_b)); the leader is pulled with probability beta.
Ties are broken uniformly at random with one uniform each.

The rule has:

* ``select``: the step of one run, written for reading (numpy), the specification;
* ``compiled_step``: the same step as a plain function that numba compiles (``eb_tc_step``), with its parameters;
  the engine builds its compiled loop around it once (numba keeps it on disk), and the tests compare the two.

The script checks that both give the same runs (allocopt.testing.check_rule) and prints the cost per
replication-step with and without the compiled step.

Run: ``python examples/custom_compiled_rule.py``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from allocopt import TopKProblem
from allocopt.algorithms import identify, register_policy
from allocopt.algorithms.engine.protocol import RuleContext, RuleTraits, RunView, StepKernel, kernel
from allocopt.testing import check_rule


@kernel
def pick_tied(values, largest, exclude, uniform):
    """The floor(u c)-th of the c arms of largest (or smallest) value in arm order, skipping ``exclude``."""
    extreme = -np.inf if largest else np.inf
    for arm in range(values.shape[0]):
        if arm != exclude:
            extreme = max(extreme, values[arm]) if largest else min(extreme, values[arm])
    tied = 0
    for arm in range(values.shape[0]):
        tied += arm != exclude and values[arm] == extreme
    pick = min(int(uniform * tied), tied - 1)
    for arm in range(values.shape[0]):
        if arm != exclude and values[arm] == extreme:
            if pick == 0:
                return arm
            pick -= 1
    return 0


def eb_tc_step(row, view, state, params, uniforms, each):
    """EB-TC's step for the compiled loop: the same arithmetic as :meth:`EBTC.select`, one number at a time."""
    beta, dispersion, cost = params
    means, counts = view.means, view.counts
    leader = pick_tied(means, True, -1, uniforms[0])
    if uniforms[2] < beta:
        return leader, 1
    for arm in range(means.shape[0]):
        gap = means[leader] - means[arm]
        cost[arm] = 0.5 * (gap * gap) / (dispersion[leader] / counts[leader] + dispersion[arm] / counts[arm])
    return pick_tied(cost, False, leader, uniforms[1]), 1


@dataclass(frozen=True)
class EBTC:
    """EB-TC with leader probability ``beta`` (Gaussian arms, k = 1)."""

    beta: float = 0.5
    name = "eb-tc"
    traits = RuleTraits(max_k=1, families=("gaussian",), uses_glr=False)

    def uniforms_per_step(self, context: RuleContext) -> int:
        return 3

    def init_state(self, context: RuleContext, n_runs: int) -> dict:
        return {}

    def select(self, context: RuleContext, view: RunView, state, uniforms: np.ndarray) -> int:
        means, counts, dispersion = view.means, view.counts, context.dispersion
        best = np.flatnonzero(means == means.max())
        leader = int(best[min(int(uniforms[0] * best.size), best.size - 1)])
        if uniforms[2] < self.beta:
            return leader
        gap = means[leader] - means
        cost = 0.5 * (gap * gap) / (dispersion[leader] / counts[leader] + dispersion / counts)
        cost[leader] = np.inf
        candidates = np.flatnonzero(cost == cost.min())
        return int(candidates[min(int(uniforms[1] * candidates.size), candidates.size - 1)])

    def compiled_step(self, context: RuleContext) -> StepKernel:
        dispersion = np.ascontiguousarray(np.broadcast_to(context.dispersion, (context.n_arms,)), dtype=float)
        return StepKernel(eb_tc_step, params=(float(self.beta), dispersion, np.empty(context.n_arms)))


class PythonEBTC(EBTC):
    """The same rule without its compiled step: the engine runs ``select`` in Python."""

    def compiled_step(self, context: RuleContext) -> None:
        return None


def main() -> None:
    register_policy("eb-tc", EBTC)
    problem = TopKProblem(1.0 - np.arange(20) / 20.0, 1, variance=0.25)  # Figure 1 of Wang, Yang, You (2022), k = 1
    check_rule(EBTC(), [problem, TopKProblem([1.0, 0.9, 0.9, 0.2], 1, variance=[0.5, 0.25, 0.25, 1.0])])
    print("check_rule: the compiled step and the specification give the same runs")
    for rule in (EBTC(), PythonEBTC()):
        identify(problem, rule, delta=0.01, n_runs=2, rng=0, n_jobs=1)  # warm-up (compiles, or loads the cache)
        start = time.process_time()
        result = identify(problem, rule, delta=(0.1, 0.01), n_runs=40, rng=1, n_jobs=1)
        cost = (time.process_time() - start) / result.replication_steps
        label = "with its compiled step" if type(rule) is EBTC else "Python select only"
        print(f"EB-TC {label:24s}: {1e9 * cost:9.0f} ns per replication-step, "
              f"mean stopping time at delta = 0.01: {result.stopping_times[:, 1].mean():.0f}")


if __name__ == "__main__":
    main()
