"""Error rate against budget on instance D2P (Appendix C, Table 1): SFSR, SFSR-L and USLP.

Run ``python examples/cbmai_error_rate_d2p.py [--runs 5000] [--jobs 2] [--output PATH]``. The paper's
setting is 5000 runs per point, budgets 500-8000, sigma_r = 1, sigma_c = 0.5. Each point prints its error rate
with the 95% Clopper-Pearson interval; the PNG goes to examples/output/ by default.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import joblib

import allocopt
from allocopt._scripts import progress_on_terminal
from allocopt.algorithms import cbmai_error_rate
from allocopt.cbmai.plotting import plot_error_rates

BUDGETS = (500, 1000, 2000, 4000, 8000)
ALGORITHMS = {"SFSR": "sfsr", "SFSR-L": "sfsr-l", "USLP": "uslp"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="cbmai-d2p")
    parser.add_argument("--runs", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=1, help="joblib workers (loky)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    output = args.output or Path(__file__).parent / "output" / f"{args.instance}_error_rate.png"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problem = allocopt.CBMAIProblem.from_reference(args.instance)
    print(f"{args.instance}: optimal support {allocopt.solve_cbmai(problem).support_labels()}")
    rates = {label: [] for label in ALGORITHMS}
    start = time.perf_counter()
    with joblib.parallel_config(backend="loky", n_jobs=args.jobs):
        for label, name in ALGORITHMS.items():
            for budget in BUDGETS:
                rate = cbmai_error_rate(problem, name, budget, args.runs, rng=args.seed, sigma_r=1.0, sigma_c=0.5,
                                        progress=progress_on_terminal())
                rates[label].append(rate)
                print(f"{label:7s} N={budget:5d}  error rate {rate.error_rate:.4f}  "
                      f"95% CI [{rate.ci_low:.4f}, {rate.ci_high:.4f}]  ({rate.time:.1f} s)")
    print(f"total {time.perf_counter() - start:.1f} s for {len(ALGORITHMS) * len(BUDGETS) * args.runs} runs")
    fig, ax = plt.subplots(figsize=(6, 4.2))
    plot_error_rates(rates, ax=ax)
    ax.set_title(f"{args.instance.upper()}: {args.runs} runs per point, 95% Clopper-Pearson intervals")
    fig.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=120)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
