"""``allocopt identify``: run a sampling rule over many replications, in one of three settings.

* fixed confidence (default): the Chernoff stopping rule (or the rule's own), one row per ``--delta``;
* fixed budget (``--budget B1,B2,...``): the error rate of the recommendation at every budget;
* PAC (``--pac --epsilon E --delta D``): epsilon-top-k by the aggregate regret, for a rule with its own stopping
  rule (default ``adaptive-topk``).
"""

from __future__ import annotations

import argparse

from .._scripts import progress_on_terminal
from ._common import (Example, ExitStatus, add_instance_arguments, float_list, instance_problem,
                      print_json)

__all__ = ["register", "run", "EXAMPLES"]

_SMALL = ("--theta", "1,0.8,0.2,0", "--k", "2", "--variance", "0.25", "--delta", "0.1,0.01", "--runs", "20",
          "--seed", "1")
EXAMPLES = (
    Example(_SMALL, ExitStatus.SUCCESS, "KKT-TS on a small gaussian instance, two deltas from one run"),
    Example(_SMALL + ("--policy", "uniform", "--json"), ExitStatus.SUCCESS, "strict JSON summary"),
    Example(("--theta", "-0.5,0.4,0.3", "--k", "1", "--runs", "5", "--seed", "2", "--json"), ExitStatus.SUCCESS,
            "a negative first mean"),
    Example(("--theta", "0.6,0.5,0.4", "--k", "1", "--family", "bernoulli", "--runs", "3", "--seed", "3",
             "--max-samples", "10"), ExitStatus.NOT_CERTIFIED, "runs stopped by the sample cap exit with 1"),
    Example(_SMALL + ("--policy", "no-such-rule"), ExitStatus.BAD_INPUT, "an unknown policy"),
    Example(_SMALL + ("--delta", "1.5"), ExitStatus.BAD_INPUT, "delta outside (0, 1)"),
    Example(("--theta", "1,0.8,0.2", "--k", "1", "--runs", "0"), ExitStatus.BAD_INPUT, "no replication"),
    Example(_SMALL + ("--jobs", "0"), ExitStatus.BAD_INPUT, "zero workers (joblib's -1 means every CPU)"),
    Example(_SMALL + ("--jobs", "1000", "--runs", "4"), ExitStatus.SUCCESS,
            "more workers than chunks and CPUs: one per chunk, at most one per CPU, are started"),
    Example(("--theta", "0.7,0.7,0.5,0.5,0.5", "--k", "2", "--family", "bernoulli", "--policy", "sar",
             "--budget", "100,400", "--runs", "50", "--seed", "4"), ExitStatus.SUCCESS,
            "fixed budget: SAR's error rate at two budgets"),
    Example(("--theta", "0.7,0.7,0.5,0.5,0.5", "--k", "2", "--family", "bernoulli", "--policy", "nsar", "--p", "0.85",
             "--budget", "200", "--runs", "20", "--seed", "4", "--json"), ExitStatus.SUCCESS,
            "fixed budget, strict JSON, NSAR with p = 0.85"),
    Example(("--theta", "0.9,0.8,0.3,0.1", "--k", "2", "--family", "bernoulli", "--pac", "--epsilon", "0.1",
             "--delta", "0.1", "--runs", "10", "--seed", "5"), ExitStatus.SUCCESS,
            "PAC: AdaptiveTopK's samples and aggregate regret"),
    Example(("--theta", "0.9,0.8,0.3,0.1", "--k", "2", "--family", "bernoulli", "--policy", "adaptive-topk-budget",
             "--block-cut", "arm-order", "--budget", "40,400", "--runs", "10", "--seed", "5"), ExitStatus.SUCCESS,
            "AdaptiveTopK's fixed budget with a round cut in arm order"),
    Example(("--theta", "0.9,0.8,0.3,0.1", "--k", "2", "--policy", "kkt-ts", "--block-cut", "arm-order",
             "--runs", "5"), ExitStatus.BAD_INPUT, "--block-cut with a rule that has no rounds"),
    Example(("--theta", "0.9,0.8,0.3,0.1", "--k", "2", "--family", "bernoulli", "--pac", "--epsilon", "0",
             "--delta", "0.1", "--runs", "10"), ExitStatus.BAD_INPUT, "epsilon must be positive"),
    Example(("--theta", "0.9,0.8,0.3,0.1", "--k", "2", "--family", "bernoulli", "--policy", "sar", "--budget", "4",
             "--runs", "5"), ExitStatus.BAD_INPUT, "a budget too small for SAR's first round"),
    Example(("--theta", "0.9,0.8,0.3", "--k", "1", "--budget", "10,x"), ExitStatus.BAD_INPUT,
            "a budget that is not an integer"),
)


def _budget_list(text: str) -> list[int]:
    """Parse ``"100,400"`` into integers (an argparse ``type``)."""
    values = float_list(text)
    if any(value != int(value) for value in values if value == value and abs(value) != float("inf")) or any(
            value != value or abs(value) == float("inf") for value in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    return [int(value) for value in values]


def register(subparsers) -> argparse.ArgumentParser:
    from ..algorithms import POLICIES

    parser = subparsers.add_parser(
        "identify", help="fixed-confidence top-k identification: stopping times and error rates of a sampling rule",
        description="Runs a sampling rule (KKT-TS, Track-and-Stop, FWGA-TaS, uniform, ...) with the Chernoff stopping "
                    "rule on simulated arms with means --theta, for every confidence level of --delta from one run "
                    "per replication, and prints one row per delta: mean stopping time and standard error, error "
                    "rate with a 95% Clopper-Pearson interval, the lower bound T* kl(delta, 1-delta) and the ratio "
                    "E[tau]/(T* log(1/delta)). With --budget it runs the fixed-budget setting (error rate of the "
                    "recommendation at every budget; e.g. --policy sar, nsar, successive-rejects, sequential-halving, "
                    "optmai, adaptive-topk-budget); with --pac --epsilon E --delta D the PAC setting (pulls and "
                    "aggregate regret of a rule with its own stopping rule, default adaptive-topk).")
    add_instance_arguments(parser)
    parser.add_argument("--policy", default=None, choices=sorted(POLICIES),
                        help="sampling rule (default kkt-ts; adaptive-topk with --pac)")
    parser.add_argument("--p", type=float, default=None, help="NSAR's nonlinearity p > 0 (with --policy nsar)")
    parser.add_argument("--block-cut", default=None, choices=("water-fill", "arm-order"),
                        help="with --policy adaptive-topk or adaptive-topk-budget: the order of a round's pulls where "
                             "a budget or sample cap ends inside it (default water-fill: round robin passes)")
    setting = parser.add_mutually_exclusive_group()
    setting.add_argument("--budget", type=_budget_list, default=None,
                         help="fixed budget: comma-separated budgets (integers >= K)")
    setting.add_argument("--pac", action="store_true", help="PAC setting: needs --epsilon and one --delta")
    parser.add_argument("--epsilon", type=float, default=None, help="with --pac: tolerance on the aggregate regret")
    parser.add_argument("--delta", type=float_list, default=[0.1, 0.01, 0.001],
                        help="comma-separated confidence levels (default 0.1,0.01,0.001)")
    parser.add_argument("--runs", type=int, default=1000, help="replications (default 1000)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="parallel workers (default: joblib's configuration; -1 every CPU; at most one per CPU and "
                             "chunk are started)")
    parser.add_argument("--seed", type=int, default=None, help="root seed (default: fresh entropy)")
    parser.add_argument("--max-samples", type=int, default=None, help="sample cap per run")
    parser.add_argument("--threshold", default="heuristic", choices=("heuristic", "theoretical"),
                        help="stopping threshold beta(t, delta)")
    parser.add_argument("--per-run", action="store_true", help="with --json: include every run's outcome")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(handler=run)
    return parser


def _policy(args: argparse.Namespace):
    from .._validation import fail
    from ..algorithms import NSAR, AdaptiveTopK, AdaptiveTopKFixedBudget

    name = args.policy or ("adaptive-topk" if args.pac else "kkt-ts")
    if args.p is not None:
        if name != "nsar":
            fail("allocopt identify", "--p", "given only with --policy nsar", args.p)
        return NSAR(p=args.p)
    if args.block_cut is not None:
        rules = {"adaptive-topk": AdaptiveTopK, "adaptive-topk-budget": AdaptiveTopKFixedBudget}
        if name not in rules:
            fail("allocopt identify", "--block-cut", "given only with --policy adaptive-topk or adaptive-topk-budget",
                 args.block_cut)
        return rules[name](block_cut=args.block_cut)
    return name


def _run_fixed_budget(args: argparse.Namespace, problem, policy, progress: bool) -> ExitStatus:
    from ..algorithms import identify_fixed_budget

    result = identify_fixed_budget(problem, policy, args.budget, n_runs=args.runs, rng=args.seed, n_jobs=args.jobs,
                                   progress=progress)
    if args.json:
        payload = result.to_dict()
        if not args.per_run:
            for name in ("recommendations", "correct", "pulls", "diagnostics"):
                payload.pop(name, None)
            payload["mean_pulls"] = result.pulls.mean(axis=0)
        print_json(payload)
    else:
        print(f"{result.policy}: {result.n_runs} runs, fixed budget, {result.time:.1f} s")
        print(f"{'budget':>10} {'error':>8} {'95% interval':>19}")
        for row in result.summary():
            print(f"{row.budget:10d} {row.error_rate:8.4f} [{row.error_low:7.4f}, {row.error_high:7.4f}]")
    return ExitStatus.SUCCESS


def _run_pac(args: argparse.Namespace, problem, policy, progress: bool) -> ExitStatus:
    from .._validation import fail
    from ..algorithms import pac_identify

    if args.epsilon is None:
        fail("allocopt identify", "--epsilon", "given with --pac (the tolerance on the aggregate regret)", None)
    if len(args.delta) != 1:
        fail("allocopt identify", "--delta", "one confidence parameter with --pac", args.delta)
    result = pac_identify(problem, policy, epsilon=args.epsilon, delta=args.delta[0], n_runs=args.runs,
                          rng=args.seed, max_samples=args.max_samples, n_jobs=args.jobs, progress=progress)
    if args.json:
        payload = result.to_dict()
        if not args.per_run:
            for name in ("samples", "recommendations", "aggregate_regret", "correct", "stopped", "pulls",
                         "diagnostics"):
                payload.pop(name, None)
            payload["mean_pulls"] = result.pulls.mean(axis=0)
        print_json(payload)
    else:
        print(result.format_summary())
    return ExitStatus.SUCCESS if bool(result.stopped.all()) else ExitStatus.NOT_CERTIFIED


def run(args: argparse.Namespace) -> ExitStatus:
    """Run the replications and print the summary; exit 1 when some run reached ``--max-samples``."""
    from .._validation import fail
    from ..algorithms import identify

    problem = instance_problem(args)
    policy = _policy(args)
    if args.epsilon is not None and not args.pac:
        fail("allocopt identify", "--epsilon", "given only with --pac", args.epsilon)
    progress = (not args.json) and progress_on_terminal()
    if args.budget is not None:
        return _run_fixed_budget(args, problem, policy, progress)
    if args.pac:
        return _run_pac(args, problem, policy, progress)
    delta = args.delta[0] if len(args.delta) == 1 else tuple(args.delta)
    result = identify(problem, policy, delta=delta, n_runs=args.runs, rng=args.seed,
                      max_samples=args.max_samples, threshold=args.threshold, n_jobs=args.jobs, progress=progress)
    if args.json:
        payload = result.to_dict()
        if not args.per_run:
            for name in ("stopping_times", "recommendations", "correct", "stopped", "pulls", "diagnostics"):
                payload.pop(name, None)
            payload["mean_pulls"] = result.pulls.mean(axis=0)
        print_json(payload)
    else:
        print(result.format_summary())
        if result.diagnostics:
            print("diagnostics (mean per run): " + ", ".join(
                f"{name} {values.mean():.3g}" for name, values in result.diagnostics.items()))
    return ExitStatus.SUCCESS if bool(result.stopped.all()) else ExitStatus.NOT_CERTIFIED
