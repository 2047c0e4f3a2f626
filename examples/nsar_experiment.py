"""Figure 2 of Shahrampour and Tarokh (2017): misidentification probability of NSAR, SAR, AT-LUCB and uniform.

The experiment is the spec ``examples/experiments/nsar.toml`` (K = 50 Bernoulli arms, setups 1-6 of Section IV.A,
M in {2, 4}, budget T = ceil(H1^(M)), NSAR with p in {0.7, 0.85, 1.1, 1.2, 1.3}, SAR, AT-LUCB and uniform, 4000
runs per setup; the spec's comments say where the paper leaves a parameter out). This script runs it into a store
(only the chunks the store does not hold: a killed run is completed by running it again) and writes its report,
the tables, the paired differences of error indicators against SAR and against AT-LUCB, and the figures, into
``docs/experiments/nsar/`` (the page docs/algorithms.md links to). The same from the shell::

    allocopt experiment run examples/experiments/nsar.toml --store stores/nsar --jobs 2
    allocopt experiment report stores/nsar --out docs/experiments/nsar

Usage: ``python examples/nsar_experiment.py [--store DIR] [--jobs N] [--out DIR]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from allocopt._scripts import progress_on_terminal
from allocopt.experiments import run_experiment, write_report

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "examples" / "experiments" / "nsar.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=ROOT / "stores" / "nsar")
    parser.add_argument("--jobs", type=int, default=None, help="local joblib workers (default: this process)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "experiments" / "nsar")
    args = parser.parse_args()
    print(run_experiment(SPEC, args.store, n_jobs=args.jobs, progress=progress_on_terminal()).message)
    print(write_report(args.store, args.out).message)


if __name__ == "__main__":
    main()
