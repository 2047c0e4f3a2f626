"""Figures 1-4 of Chen, Chen, Zhang, Zhou (2017): failure probability of AdaptiveTopK's fixed-budget form.

n = 1000 Bernoulli arms, epsilon = delta = 0.01, K in {100, 250, 500}; the TWOGROUP, SYNTHETIC-0.5, UNIFORM
(SYNTHETIC-1) and SYNTHETIC-6 instances (``allocopt.testing.bandit_instances``). For every budget of a grid, the
fraction of runs (200 in the paper, ``--runs``) whose recommendation has an aggregate regret above epsilon, and the
mean aggregate regret. The
fixed-budget form is anytime, so one run per instance serves the whole grid.

Where a budget ends inside one of AdaptiveTopK's rounds, the paper ("remove the outer while loop ... keep track of
the total number of pulls, and stop pulling the arms once the budget is exhausted") does not say in which order a
round's pulls are made. ``--block-cut`` chooses the reading: ``water-fill`` (the default, label "AdaptiveTopK"):
the round is pulled in passes, one pull per undecided arm per pass, so that a cut round leaves counts that differ
by at most one and a partial round is a uniform sample of the undecided arms; ``arm-order`` (label "AdaptiveTopK
(arm order)"): each arm's whole block in turn, so that a cut round leaves the first arms with their round and the
last ones with nothing, and below the first round (about 24 pulls per arm here) most arms are ranked on one pull.
Both readings make the same pulls at the end of every round. ``--block-cut water-fill,arm-order`` runs both on
the same rewards and compares each with the comparators.

Comparators (``--comparators``): CLUCB-PAC (Chen, Lin, King, Lyu, Chen 2014) converted to a fixed budget as the
paper does (``allocopt.algorithms.CLUCBPACFixedBudget`` with epsilon = delta = 0.01: the answer of the first step
where its PAC rule holds, else the empirical top-K at the budget; anytime, one run per instance, through its
compiled run loop), and uniform allocation (the budget divided evenly over the arms; the empirical top-K, ties in
the run's random order of the arms; every budget's recommendation from one read of each reward stream, the
records of one engine run per budget), and OptMAI (Zhou, Chen, Li 2014; ``allocopt.algorithms.OptMAI`` with its
default beta = 3/4 e^0.2: it needs the budget, so each budget is its own engine run; the 2017 paper names it
without restating it, and the rule's docstring says which of its details are this implementation's reading). All
rules share the runs' rewards (common random numbers: the same seed, the same reward stream per run and arm).
UNIFORM's last arm has mean 0, which allocopt's Bernoulli family refuses, so it
is moved to 1e-6; the non-top arms are lowered by 1e-9 so that SYNTHETIC-6's top-K set is unique in double
precision. The arms are listed in a fixed random order (seed 0). Beside each instance it prints
H(t, eps) and AdaptiveTopK's Theorem 1 complexity (log log 1/eps + log n + log 1/delta) H(t, eps).

Writes ``docs/images/adaptive_topk_experiment.png`` and the table between the ``adaptive-topk-experiment``
markers of ``docs/algorithms.md``: each failure probability with its 95% Clopper-Pearson interval, and, next to the
paper's statement, the paired difference of failure indicators AdaptiveTopK minus each comparator (CLUCB-PAC,
uniform allocation, OptMAI) at each budget (the runs share their rewards) with a 95% normal interval, and how many
of the instance-budget cells come out lower, level or higher, in all and for each K.

Usage: ``python examples/adaptive_topk_experiment.py [--runs 200] [--jobs 2] [--k 100,250,500]
[--budgets 5,10,20,50,100,200] [--comparators CLUCB-PAC,uniform,OptMAI] [--block-cut water-fill,arm-order]
[--instances TWOGROUP,UNIFORM]`` (budgets in pulls per arm). The default runs
every comparator; CLUCB-PAC and OptMAI are the largest parts of the running time (CLUCB-PAC: one pull per
replication-step, most steps certified from the arms near the boundary of its adjusted top-K, see
its step kernel in ``allocopt.algorithms.rules.clucb_pac``; OptMAI: one engine run per budget, a block of pulls per round), and
``--comparators uniform`` leaves them out. ``benchmarks/algorithms.py
--experiment adaptive-topk`` times the full run.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from allocopt import TopKProblem
from allocopt._scripts import MeasuredRun, progress_on_terminal, write_docs_section
from allocopt.algorithms import (AdaptiveTopKFixedBudget, BatchPullEach, CLUCBPACFixedBudget, OptMAI, PullEach,
                                 identify_fixed_budget)
from allocopt.algorithms.engine.rewards import PolicyStreams, RewardStreams, stream_entropy
from allocopt.algorithms.engine.statistics import empirical_means
from allocopt.complexity import adaptive_topk_sample_complexity, aggregate_regret, h_t_eps
from allocopt.exceptions import InvalidArgumentError
from allocopt.simulate import binomial_confidence_interval, paired_mean_difference
from allocopt.testing.bandit_instances import synthetic_p, two_group, uniform

ROOT = Path(__file__).resolve().parent.parent
N_ARMS, EPSILON, DELTA = 1000, 0.01, 0.01
BEGIN, END = "<!-- adaptive-topk-experiment:begin -->", "<!-- adaptive-topk-experiment:end -->"
PAPER = ("Chen, Chen, Zhang, Zhou (2017), experiments on Figures 1-4: AdaptiveTopK outperforms CLUCB-PAC in almost "
         "all the datasets; OptMAI is best when K is relatively small and AdaptiveTopK outperforms it when K is "
         "large.")
OPTMAI = ("OptMAI's text (Zhou, Chen, Li 2014) was not at hand: `OptMAI` follows the published description of its "
          "phases and budget shares, and its docstring lists the details that are this implementation's reading, so "
          "the statement about OptMAI is tested against that reading.")
COMPARATORS = ("CLUCB-PAC", "uniform", "OptMAI")
READINGS = {"water-fill": "AdaptiveTopK", "arm-order": "AdaptiveTopK (arm order)"}
INSTANCES = ("TWOGROUP", "SYNTHETIC-0.5", "UNIFORM", "SYNTHETIC-6")


@dataclass(frozen=True)
class DivideBudget:
    """Uniform allocation as the paper describes it ("divide the budget uniformly across the arms"): one block of
    floor(T/n) pulls of every arm and one more pull of T mod n arms taken in the run's random order; recommends the
    empirical top-K, ties in that order. It needs the budget (anytime = False), so run by the engine each budget is
    its own run; the experiment takes every budget's recommendation from one read of the reward streams instead
    (:meth:`shared_recommendations`, the same records)."""

    name = "uniform-allocation"
    uses_glr = False
    uses_empirical_top = False
    anytime = False

    def uniforms_per_step(self, context):
        return 1

    def init_state(self, context, n_runs):
        return {"priority": np.full((n_runs, context.n_arms), np.nan)}

    @staticmethod
    def _order(uniform, n_arms):
        return np.random.default_rng(int(uniform * 2**53)).permutation(n_arms).astype(float)

    def select(self, context, view, state, uniforms):
        if np.isnan(state["priority"][0]):
            state["priority"][:] = self._order(uniforms[0], context.n_arms)
        share, extra = divmod(int(context.budget), context.n_arms)
        counts = np.full(context.n_arms, share - 1, dtype=np.int64)  # the engine pulled every arm once already
        counts[state["priority"] < extra] += 1
        return PullEach(np.maximum(counts, 0) if counts.sum() > 0 else np.ones(context.n_arms, dtype=np.int64))

    def select_batch(self, context, view, state, uniforms):
        actions = []
        for row in range(view.counts.shape[0]):
            row_state = {"priority": state["priority"][row]}
            actions.append(self.select(context, None, row_state, uniforms[row]).counts)
        return BatchPullEach(np.array(actions, dtype=np.int64))

    @staticmethod
    def _top(priority, means, k):
        """The k largest means, ties in the run's random order (the arm index before it is drawn), sorted."""
        priority = np.where(np.isnan(priority), np.arange(means.shape[-1]), priority)
        return np.sort(np.lexsort((priority, -means), axis=-1)[..., :k], axis=-1)

    def recommend(self, context, view, state):
        return self._top(state["priority"], view.means, context.k)

    def recommend_batch(self, context, view, state):
        return self._top(state["priority"], view.means, context.k)

    @classmethod
    def shared_recommendations(cls, problem: TopKProblem, budgets, n_runs: int, rng: int) -> np.ndarray:
        """The recommendations of ``identify_fixed_budget(problem, DivideBudget(), budgets, n_runs=n_runs,
        rng=rng)``, shape (n_runs, budgets, k) (budgets in increasing order, each larger than n), from one read
        of every reward stream instead of one run per budget.

        Run by the engine, budget T pulls every arm once, then one block of c_a(T) - 1 pulls of each arm a, with
        c_a(T) = floor(T/n) + 1 for the T mod n arms first in the run's random order, else floor(T/n); the block
        adds the sequential sum of its rewards. The runs of all budgets read the same stream per (run, arm), so
        arm a's sum at budget T is its first reward plus the sequential sum of its next c_a(T) - 1 rewards: the
        cumulative sums of one read of max_T c_a(T) rewards give every budget's sums, the same floating-point
        numbers in the same order of additions, and the random order comes from the run's first policy uniform,
        as in the engine's first step. A test compares every record with the per-budget runs.
        """
        n_arms, k = problem.n_arms, problem.k
        budgets = np.unique(np.asarray(budgets, dtype=np.int64))
        if budgets[0] <= n_arms:
            raise InvalidArgumentError(f"The 'budgets' parameter of DivideBudget.shared_recommendations must be "
                                       f"budgets larger than n = {n_arms} (so that every budget pulls a block after "
                                       f"the initial pulls). Got {int(budgets[0])} instead.")
        entropy = stream_entropy(rng)  # the streams of identify_fixed_budget(..., rng=rng)
        runs = np.arange(n_runs)
        priority = np.array([cls._order(uniform, n_arms) for uniform in PolicyStreams(entropy, runs, 1).next(runs)[:, 0]])
        share, extra = np.divmod(budgets, n_arms)
        counts = share[None, :, None] + (priority[:, None, :] < extra[None, :, None])  # c_a(T): (runs, budgets, n)
        streams = RewardStreams(problem.family, problem.theta, problem.dispersion, entropy, runs)
        sums = np.empty(counts.shape)
        for arm in range(n_arms):
            first = 0.0 + streams.next(runs, np.full(n_runs, arm))  # the engine's sums start at 0.0
            more = counts[:, :, arm] - 1  # (runs, budgets); a block of no pull adds nothing
            reads = more[:, -1]
            start = streams.position[:, arm].copy()
            buffered = np.flatnonzero(reads <= streams.block - start)
            width = max(int(reads.max()), 1)
            # the runs whose rewards are all buffered, together: their next rewards, zeros after the last one read
            # (adding zeros after the last term changes no cumulative sum before it)
            offsets = np.arange(width)
            window = np.where(offsets[None, :] < reads[buffered, None],
                              streams.buffer[buffered[:, None], arm,
                                             np.minimum(start[buffered, None] + offsets[None, :], streams.block - 1)],
                              0.0)
            blocks = np.zeros((n_runs, width))
            blocks[buffered] = np.cumsum(window, axis=1)
            streams.position[buffered, arm] += reads[buffered]
            for run in np.setdiff1d(runs, buffered):  # the others, one read each
                blocks[run, :reads[run]] = np.cumsum(streams.next_block(int(run), arm, int(reads[run])))
            sums[:, :, arm] = first[:, None] + np.where(more > 0, np.take_along_axis(
                blocks, np.maximum(more, 1) - 1, axis=1), 0.0)
        return cls._top(np.broadcast_to(priority[:, None, :], counts.shape), empirical_means(counts, sums), k)


def instances(k: int) -> dict[str, np.ndarray]:
    order = np.random.default_rng(0).permutation(N_ARMS)
    raw = {"TWOGROUP": two_group(N_ARMS, k), "SYNTHETIC-0.5": synthetic_p(N_ARMS, k, 0.5),
           "UNIFORM": uniform(N_ARMS), "SYNTHETIC-6": synthetic_p(N_ARMS, k, 6.0)}
    out = {}
    for name, theta in raw.items():
        theta = np.clip(theta, 1e-6, 1 - 1e-6)
        # SYNTHETIC-6's arms next to the boundary differ from 1 - K/n by less than double precision resolves;
        # lowering the non-top arms by 1e-9 makes the top-K set unique (every regret changes by at most 1e-9)
        theta[k:] -= 1e-9
        out[name] = theta[order]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--k", default="100,250,500")
    parser.add_argument("--budgets", default="5,10,20,50,100,200", help="pulls per arm")
    parser.add_argument("--comparators", default="CLUCB-PAC,uniform,OptMAI", help="of " + ", ".join(COMPARATORS))
    parser.add_argument("--block-cut", default="water-fill",
                        help="AdaptiveTopK's order of a round's pulls where a budget ends inside it, of "
                             + ", ".join(READINGS) + " (comma-separated: each is run)")
    parser.add_argument("--instances", default=",".join(INSTANCES), help="of " + ", ".join(INSTANCES))
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = [int(value) for value in args.k.split(",")]
    budgets = np.array([int(value) * N_ARMS for value in args.budgets.split(",")])
    comparators = [name for name in COMPARATORS if name in args.comparators.split(",")]
    unknown = set(args.comparators.split(",")) - set(COMPARATORS)
    if unknown or not comparators:
        parser.error(f"--comparators: one or more of {', '.join(COMPARATORS)}, got {args.comparators!r}")
    readings = args.block_cut.split(",")
    if set(readings) - set(READINGS) or len(set(readings)) != len(readings):
        parser.error(f"--block-cut: one or more of {', '.join(READINGS)}, got {args.block_cut!r}")
    chosen = args.instances.split(",")
    if set(chosen) - set(INSTANCES) or not chosen:
        parser.error(f"--instances: one or more of {', '.join(INSTANCES)}, got {args.instances!r}")
    every_rule = {"CLUCB-PAC": CLUCBPACFixedBudget(epsilon=EPSILON, delta=DELTA), "uniform": DivideBudget(),
                  "OptMAI": OptMAI()}
    adaptive = [READINGS[reading] for reading in readings]
    rules = [(READINGS[reading], AdaptiveTopKFixedBudget(delta=DELTA, block_cut=reading)) for reading in readings]
    rules += [(name, every_rule[name]) for name in comparators]
    rows, curves, failed = [], {}, {}
    run = MeasuredRun.start()
    for k in ks:
        for name, theta in instances(k).items():
            if name not in chosen:
                continue
            problem = TopKProblem(theta, k=k, family="bernoulli")
            hardness = h_t_eps(theta, k, EPSILON)
            bound = float(adaptive_topk_sample_complexity(theta, k, EPSILON, DELTA))
            print(f"{name}, K = {k}: H(t, eps) = {float(hardness.value):.4g} (t = {int(hardness.t)}), "
                  f"Theorem 1 complexity = {bound:.4g}")
            for label, rule in rules:
                clock = time.perf_counter()
                if isinstance(rule, DivideBudget):  # every budget from one read of the streams (the same records)
                    recommendations = rule.shared_recommendations(problem, budgets, args.runs, 2017)
                else:
                    recommendations = identify_fixed_budget(problem, rule, budgets, n_runs=args.runs, rng=2017,
                                                            n_jobs=args.jobs,
                                                            progress=progress_on_terminal()).recommendations
                regret = np.asarray(aggregate_regret(theta, recommendations))
                failure = (regret > EPSILON).mean(axis=0)
                curves[(k, name, label)] = failure
                failed[(k, name, label)] = regret > EPSILON
                seconds = time.perf_counter() - clock
                rows.append((k, name, label, float(hardness.value), bound, failure, regret.mean(axis=0), seconds))
                print(f"  {label:>12}: failure {np.round(failure, 3).tolist()}, mean regret "
                      f"{np.round(regret.mean(axis=0), 5).tolist()} ({seconds:.1f} s)")

    names = [name for name in instances(ks[0]) if name in chosen]
    figure, axes = plt.subplots(len(names), len(ks), figsize=(3.6 * len(ks), 2.6 * len(names)), squeeze=False)
    for row, name in enumerate(names):
        for column, k in enumerate(ks):
            axis = axes[row, column]
            for label, _ in rules:
                axis.plot(budgets, curves[(k, name, label)], marker="o", label=label)
            axis.set_xscale("log")
            axis.set_title(f"{name}, K = {k}", fontsize=9)
            axis.set_ylim(-0.05, 1.05)
    axes[-1, 0].set_xlabel("budget (pulls)")
    axes[0, 0].set_ylabel("P(regret > eps)")
    axes[0, 0].legend(fontsize=8)
    figure.suptitle(f"n = {N_ARMS}, eps = delta = {EPSILON}, {args.runs} runs per budget")
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    image = args.docs / "images" / "adaptive_topk_experiment.png"
    image.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(image, dpi=110)

    header = " | ".join(f"T = {budget}" for budget in budgets)
    table = ["Each cell: failure probability P(aggregate regret > eps) [95% Clopper-Pearson interval] / mean "
             "aggregate regret, at each budget.",
             "", "![AdaptiveTopK experiment](images/adaptive_topk_experiment.png)", "",
             f"| K | instance | rule | H(t, eps) | Theorem 1 complexity | {header} | seconds |",
             "|---|---|---|---|---|" + "---|" * len(budgets) + "---|"]
    for k, name, label, hardness, bound, failure, mean_regret, seconds in rows:
        intervals = [binomial_confidence_interval(int(round(value * args.runs)), args.runs) for value in failure]
        cells = " | ".join(f"{value:.3f} [{low:.3f}, {high:.3f}] / {mean:.2g}"
                           for value, (low, high), mean in zip(failure, intervals, mean_regret))
        table.append(f"| {k} | {name} | {label} | {hardness:.4g} | {bound:.4g} | {cells} | {seconds:.1f} |")
    measured = {"CLUCB-PAC": "CLUCB-PAC (its fixed-budget form, epsilon = delta = 0.01)",
                "uniform": "uniform allocation (a baseline)", "OptMAI": "OptMAI (beta = 3/4 e^0.2)"}
    left_out = ("" if "CLUCB-PAC" in comparators
                else " CLUCB-PAC is not in this run (`--comparators CLUCB-PAC,uniform` adds it), so the statement "
                     "about it is not tested here.")
    reading_note = ("AdaptiveTopK pulls a round in passes, one pull per undecided arm per pass, so that where a "
                    "budget ends inside a round the counts differ by at most one"
                    + ("; 'AdaptiveTopK (arm order)' pulls each arm's whole block in turn instead"
                       if "arm-order" in readings else "") + ".")
    table += ["", reading_note]
    table += ["", f"What the paper states: {PAPER} Measured here: AdaptiveTopK against "
              + ", ".join(measured[name] for name in comparators) + f", on the same runs and rewards.{left_out}"
              + (" " + OPTMAI if "OptMAI" in comparators else " OptMAI is not in this run, so the statement about it "
                 "is not tested here.")]
    for label in adaptive:
        for comparator in comparators:
            lines, verdicts = [], {"lower": 0, "level": 0, "higher": 0}
            by_k = {k: {"lower": 0, "level": 0, "higher": 0} for k in ks}
            for k in ks:
                for name in names:
                    cells = []
                    for index, budget in enumerate(budgets):
                        paired = paired_mean_difference(failed[(k, name, label)][:, index],
                                                        failed[(k, name, comparator)][:, index])
                        low, high = paired.interval()
                        verdict = "lower" if high < 0 else "higher" if low > 0 else "level"
                        verdicts[verdict] += 1
                        by_k[k][verdict] += 1
                        cells.append(f"T = {budget}: {paired.mean:+.3f} [{low:+.3f}, {high:+.3f}] {verdict}")
                    lines.append(f"* K = {k}, {name}: " + "; ".join(cells) + ".")
            table += ["", f"Measured, {label} minus {comparator} (paired failure indicators; 'lower' when the whole "
                      f"95% interval is below 0, 'higher' when above, else 'level'): {label}'s failure probability "
                      f"is lower in {verdicts['lower']}, level in {verdicts['level']} and higher in "
                      f"{verdicts['higher']} of the {sum(verdicts.values())} instance-budget cells ("
                      + "; ".join(f"K = {k}: {counts['lower']} / {counts['level']} / {counts['higher']}"
                                  for k, counts in by_k.items())
                      + " lower / level / higher). At each budget:", ""] + lines
            print(f"{label} minus {comparator}: lower {verdicts['lower']}, level {verdicts['level']}, higher "
                  f"{verdicts['higher']} of {sum(verdicts.values())} cells")
    page = args.docs / "algorithms.md"
    write_docs_section(page, "adaptive-topk-experiment", run, table, markers=(BEGIN, END))
    print(f"wrote {image} and the table in {page}")


if __name__ == "__main__":
    main()
