"""``allocopt identify``: run a sampling rule with the Chernoff stopping rule over many replications."""

from __future__ import annotations

import argparse
import sys

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
)


def register(subparsers) -> argparse.ArgumentParser:
    from ..algorithms import POLICIES

    parser = subparsers.add_parser(
        "identify", help="fixed-confidence top-k identification: stopping times and error rates of a sampling rule",
        description="Runs a sampling rule (KKT-TS, Track-and-Stop, FWGA-TaS, uniform) with the Chernoff stopping "
                    "rule on simulated arms with means --theta, for every confidence level of --delta from one run "
                    "per replication, and prints one row per delta: mean stopping time and standard error, error "
                    "rate with a 95%% Clopper-Pearson interval, the lower bound T* kl(delta, 1-delta) and the ratio "
                    "E[tau]/(T* log(1/delta)).")
    add_instance_arguments(parser)
    parser.add_argument("--policy", default="kkt-ts", choices=sorted(POLICIES), help="sampling rule")
    parser.add_argument("--delta", type=float_list, default=[0.1, 0.01, 0.001],
                        help="comma-separated confidence levels (default 0.1,0.01,0.001)")
    parser.add_argument("--runs", type=int, default=1000, help="replications (default 1000)")
    parser.add_argument("--jobs", type=int, default=None, help="parallel workers (default: joblib's configuration)")
    parser.add_argument("--seed", type=int, default=None, help="root seed (default: fresh entropy)")
    parser.add_argument("--max-samples", type=int, default=None, help="sample cap per run")
    parser.add_argument("--threshold", default="heuristic", choices=("heuristic", "theoretical"),
                        help="stopping threshold beta(t, delta)")
    parser.add_argument("--per-run", action="store_true", help="with --json: include every run's outcome")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> ExitStatus:
    """Run the replications and print the summary; exit 1 when some run reached ``--max-samples``."""
    from ..algorithms import identify

    problem = instance_problem(args)
    delta = args.delta[0] if len(args.delta) == 1 else tuple(args.delta)
    progress = (not args.json) and sys.stderr.isatty()
    if progress:
        try:
            import tqdm  # noqa: F401
        except ImportError:
            progress = False
    result = identify(problem, args.policy, delta=delta, n_runs=args.runs, rng=args.seed,
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
