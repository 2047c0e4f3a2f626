"""Section 5.1 of Jiang, Li, Qiao (2017): samples against N for the LUCB family.

The experiment is the spec ``examples/experiments/lil_lucb.toml`` (gaussian rewards of variance 1/4, required
confidence nu = 0.01, "1-sparse" and "0.3-exponential" instances with K = 2 and K = N/2, N = 4 to 1024, 50 runs per
point; LUCB with the rate of Kalyanakrishnan et al. 2012, lil'LUCB, LUCB++, lil'RandLUCB and lil'CLUCB in their
faithful and heuristic versions). This script runs it into a store (only the chunks the store does not hold: a
killed run is completed by running it again) and writes its report, the tables, the paired differences against
lil'RandLUCB (faithful) and the figures of mean samples against N, into ``docs/experiments/lil_lucb/`` (the page
docs/lil_lucb_experiments.md links to). The same from the shell::

    allocopt experiment run examples/experiments/lil_lucb.toml --store stores/lil_lucb --jobs 2
    allocopt experiment report stores/lil_lucb --out docs/experiments/lil_lucb

Usage: ``python examples/lil_lucb_experiments.py [--store DIR] [--jobs N] [--out DIR]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from allocopt._scripts import progress_on_terminal
from allocopt.experiments import run_experiment, write_report

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "examples" / "experiments" / "lil_lucb.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=ROOT / "stores" / "lil_lucb")
    parser.add_argument("--jobs", type=int, default=None, help="local joblib workers (default: this process)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "experiments" / "lil_lucb")
    args = parser.parse_args()
    print(run_experiment(SPEC, args.store, n_jobs=args.jobs, progress=progress_on_terminal()).message)
    print(write_report(args.store, args.out).message)


if __name__ == "__main__":
    main()
