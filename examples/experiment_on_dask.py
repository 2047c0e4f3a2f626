"""An experiment spec run on a Dask cluster: the records are those of a local run, bit for bit.

Starts a local Dask cluster of worker processes (``--scheduler ADDRESS`` connects to a running one instead), runs the
spec (default: ``examples/experiments/wang_yang_you_figure_5.toml``) into a store, the workers computing the chunks
and this process writing them, and prints the summary table. Worker processes import this file, so the cluster is
started under ``if __name__ == "__main__":`` only.

Usage: ``python examples/experiment_on_dask.py [--spec SPEC] [--store DIR] [--workers 2] [--scheduler ADDRESS]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from allocopt.experiments import load, run_experiment, summarize

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    from dask.distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=ROOT / "examples" / "experiments" / "wang_yang_you_figure_5.toml")
    parser.add_argument("--store", type=Path, default=ROOT / "stores" / "figure_5_on_dask")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scheduler", default=None, help="the address of a running Dask scheduler")
    args = parser.parse_args()
    if args.scheduler is not None:
        outcome = run_experiment(args.spec, args.store, scheduler=args.scheduler)
    else:
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            outcome = run_experiment(args.spec, args.store, client=client)
    print(outcome.message)
    table = summarize(load(args.store))
    print(table[["instance", "rule", "delta", "n_runs", "mean_stopping_time", "standard_error", "error_rate"]]
          .to_string(index=False))


if __name__ == "__main__":
    main()
