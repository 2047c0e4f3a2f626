"""Figure 1 of Tang, Jain, Nayyar, Nuzzo: intersection-value scores of a 5-arm, 1-constraint instance.

Run ``python examples/cbmai_figure_1.py [--output PATH]``; the PNG goes to examples/output/ by default.
The instance is ours (the paper's figure has no numbers), chosen to look like it: the segment from arm 1 to
arm 2 crosses the cost bound highest, so both score its crossing (rho_1 = rho_2, the optimal mix), and arms
3, 4 and 5 score lower crossings.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import allocopt
from allocopt.cbmai.plotting import plot_iv_scores

# (cost, reward) of arms 1..5; cost bound 1
COSTS = [0.5, 1.5, 1.8, 0.3, 0.8]
REWARDS = [0.9, 1.4, 1.0, 0.5, 0.4]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "output" / "cbmai_figure_1.png")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problem = allocopt.CBMAIProblem(REWARDS, [COSTS], [1.0])
    scores = allocopt.iv_scores(problem)
    for column, score in enumerate(scores):
        print(f"{problem.arm_label(column):8s} IV = {score:.4f}")
    print("optimal support:", allocopt.solve_cbmai(problem).support_labels())
    fig, ax = plt.subplots(figsize=(6, 4.2))
    plot_iv_scores(problem, ax=ax)
    ax.legend(loc="lower right")
    fig.tight_layout()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
