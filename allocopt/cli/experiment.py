"""``allocopt experiment``: run an experiment spec into a store, say what it holds, report on it.

* ``allocopt experiment run SPEC --store DIR [--jobs N | --scheduler ADDRESS] [--extend]`` runs the chunks the
  store does not hold yet (a progress bar on a terminal) and exits 0, or 1 when some run reached the sample cap;
  killed at any moment, the same command completes it;
* ``allocopt experiment status DIR`` prints the chunks done and to do per instance and rule;
* ``allocopt experiment report DIR --out OUT`` writes ``report.md``, CSV tables and PNG figures (exit 1 when the
  store is incomplete: the report covers the chunks stored).

A bad spec exits 2 with the key path, what was expected and what was found, and writes nothing; so does a store
that holds another experiment.
"""

from __future__ import annotations

import argparse
import sys

from ._common import Example, ExitStatus, print_json

__all__ = ["register", "run", "EXAMPLES", "EXAMPLE_SPEC"]

EXAMPLE_SPEC = """\
name = "cli example"
seed = 5
n_runs = 20
chunk_size = 10
max_samples = 20000

[[instances]]
name = "gauss4"
theta = [1.0, 0.8, 0.2, 0.0]
k = 2
variance = 0.25

[[rules]]
name = "kkt-ts"

[[rules]]
name = "uniform"

[fixed_confidence]
delta = [0.1, 0.01]
"""
_BAD_THETA = EXAMPLE_SPEC.replace("theta = [1.0, 0.8, 0.2, 0.0]", 'theta = [1.0, "0.8", 0.2, 0.0]')
_BAD_RULE = EXAMPLE_SPEC.replace('name = "uniform"', 'name = "no-such-rule"')
_CAPPED = EXAMPLE_SPEC.replace("max_samples = 20000", "max_samples = 40")
_SPEC = (("spec.toml", EXAMPLE_SPEC),)

EXAMPLES = (
    Example(("run", "{dir}/spec.toml", "--store", "{dir}/store"), ExitStatus.SUCCESS,
            "a small experiment: 2 rules x 2 deltas x 20 runs in 4 chunks", _SPEC),
    Example(("run", "{dir}/spec.toml", "--store", "{dir}/store", "--jobs", "2", "--json"), ExitStatus.SUCCESS,
            "two local workers, strict JSON summary", _SPEC),
    Example(("run", "{dir}/capped.toml", "--store", "{dir}/store"), ExitStatus.NOT_CERTIFIED,
            "runs stopped by the sample cap exit with 1 (their stopping times are the cap)",
            (("capped.toml", _CAPPED),)),
    Example(("run", "{dir}/bad.toml", "--store", "{dir}/store"), ExitStatus.BAD_INPUT,
            "a mean given as text: instances[0].theta[1], nothing written", (("bad.toml", _BAD_THETA),)),
    Example(("run", "{dir}/bad.toml", "--store", "{dir}/store"), ExitStatus.BAD_INPUT, "an unknown rule name",
            (("bad.toml", _BAD_RULE),)),
    Example(("run", "{dir}/missing.toml", "--store", "{dir}/store"), ExitStatus.BAD_INPUT, "no such spec file"),
    Example(("run", "{dir}/spec.toml", "--store", "{dir}/store", "--jobs", "0"), ExitStatus.BAD_INPUT,
            "zero workers", _SPEC),
    Example(("run", "{dir}/spec.toml", "--store", "{dir}/spec.toml"), ExitStatus.BAD_INPUT,
            "a store that is a file", _SPEC),
    Example(("status", "{dir}/no-store"), ExitStatus.BAD_INPUT, "status of a directory that is not a store"),
    Example(("report", "{dir}", "--out", "{dir}/report"), ExitStatus.BAD_INPUT,
            "report of a directory that is not a store", _SPEC),
)


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "experiment", help="experiments as data: run a spec into a crash-safe store, its status, its report",
        description="Experiments as data (allocopt.experiments): 'run' runs a spec (a TOML file of instances, rules, "
                    "one setting and the replications) into a store directory, one Parquet file per chunk written "
                    "atomically, skipping the chunks already stored, so that a killed run is completed by running "
                    "the same command again; 'status' prints the chunks done and to do; 'report' writes markdown "
                    "tables and PNG figures of the stopping times and error rates.")
    commands = parser.add_subparsers(dest="action", metavar="ACTION")
    commands.required = True
    run_parser = commands.add_parser("run", help="run the chunks of SPEC that the store does not hold yet",
                                     description="Runs the chunks of SPEC that the store DIR does not hold yet.")
    run_parser.add_argument("spec", metavar="SPEC", help="the experiment spec (a TOML file)")
    run_parser.add_argument("--store", required=True, metavar="DIR",
                            help="the store: a new or empty directory, or a store of this spec")
    workers = run_parser.add_mutually_exclusive_group()
    workers.add_argument("--jobs", type=int, default=None,
                         help="local joblib workers (default: this process; -1 every CPU)")
    workers.add_argument("--scheduler", default=None, metavar="ADDRESS",
                         help="run the chunks on the Dask cluster of this scheduler (e.g. tcp://host:8786)")
    run_parser.add_argument("--extend", action="store_true",
                            help="accept a store of this spec with fewer replications and add the new ones")
    run_parser.add_argument("--json", action="store_true", help="print one JSON object instead of a line")
    status_parser = commands.add_parser("status", help="chunks done and to do per instance and rule",
                                        description="Prints the chunks done and to do per instance and rule.")
    status_parser.add_argument("store", metavar="DIR", help="the store")
    status_parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    report_parser = commands.add_parser("report", help="markdown tables and PNG figures of a store",
                                        description="Writes report.md, summary.csv, paired_differences.csv and the "
                                                    "figures stopping_times.png and error_rates.png into OUT.")
    report_parser.add_argument("store", metavar="DIR", help="the store")
    report_parser.add_argument("--out", required=True, metavar="OUT", help="the report's directory (created)")
    report_parser.add_argument("--reference", default=None, metavar="RULE", action="append",
                               help="the rule the paired differences are taken against (repeat for several; "
                                    "default: the spec's [report] reference, else the first rule)")
    report_parser.add_argument("--json", action="store_true", help="print one JSON object instead of a line")
    for subparser in (run_parser, status_parser, report_parser):
        subparser.set_defaults(handler=run)
    parser.set_defaults(handler=run)
    return parser


def _run(args: argparse.Namespace) -> ExitStatus:
    from ..experiments import run_experiment

    progress = (not args.json) and sys.stderr.isatty()
    result = run_experiment(args.spec, args.store, n_jobs=args.jobs, scheduler=args.scheduler, progress=progress,
                            extend=args.extend)
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.message)
        print(f"next: allocopt experiment status {args.store}; allocopt experiment report {args.store} --out REPORT")
    return ExitStatus.SUCCESS if result.success else ExitStatus.NOT_CERTIFIED


def _status(args: argparse.Namespace) -> ExitStatus:
    from ..experiments import store_status

    result = store_status(args.store)
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.format_table())
    return ExitStatus.SUCCESS


def _report(args: argparse.Namespace) -> ExitStatus:
    from ..experiments import write_report

    result = write_report(args.store, args.out, reference=args.reference)
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.message)
        for path in result.files:
            print(f"  {path}")
    return ExitStatus.SUCCESS if result.success else ExitStatus.NOT_CERTIFIED


def run(args: argparse.Namespace) -> ExitStatus:
    """Dispatch to run, status or report."""
    return {"run": _run, "status": _status, "report": _report}[args.action](args)
