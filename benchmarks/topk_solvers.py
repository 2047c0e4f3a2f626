"""Top-k solvers measured in one run: per-call latency, batches, and the exact solver at scale.

1. Latency at K = 20, k = 10: median (and 90th percentile) wall time per ``solve_topk(method="exact")`` call
   for each family on a linspace instance, and on noisy empirical Gaussian means (a Track-and-Stop-like
   stream); the median CPU time of the numpy path (compiled kernels off) beside it; CVXPY's time on the same
   instance after its first call, and the ratio. ``--latency-only`` stops there.
2. Per-iteration cost of ``fwga`` and ``kkt-tracking`` against a plain numpy loop of KKT-Tracking's update.
3. Batch: ``solve_topk_batch`` on R = 10^4 instances at K = 20: noisy Gaussian means, noisy Bernoulli means,
   and empirical Bernoulli means (which tie). ``--batch-only`` runs only this section.
4. Scale: every instance class, Gaussian and Bernoulli arms (``--families`` for others), both kinds of cost
   (``--kinds``), k = K/2, K = 10^3 by default (``--scale 1000 10000 100000`` for more): time, certified
   relative gap, pivots and status. Each row runs in its own process with a time
   limit (``--limit`` seconds), so a slow class is reported as such instead of stopping the run.
   ``--no-scale`` leaves it out (sections 1-3 only).

The machine is shared and loaded: the figures are wall-clock times under that load. BLAS thread variables
are reported and should be unset (a user's default environment). ``--write-docs`` writes the tables, with the
date and the machine, to ``docs/topk_benchmark.md`` (included from ``docs/topk.md``).

``--all`` adds the earlier comparisons (CVXPY ratios up to K = 200, large linspace instances, warm-start
sequences, the iterative methods given the exact solver's wall time); they print only.

Run: python benchmarks/topk_solvers.py [--quick] [--latency-only | --batch-only | --no-scale] [--scale 1000 10000]
[--write-docs] [--all]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from allocopt import TopKProblem, solve_topk, solve_topk_batch
from allocopt._numba import compiled_kernels
from allocopt.testing.topk_classes import TOPK_INSTANCE_CLASSES, topk_instance_class

warnings.simplefilter("ignore")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def latency_instance(family: str, n_arms: int = 20) -> TopKProblem:
    if family == "gaussian":
        return TopKProblem(np.linspace(1.0, 0.0, n_arms), n_arms // 2, variance=0.25)
    if family == "bernoulli":
        return TopKProblem(np.linspace(0.9, 0.1, n_arms), n_arms // 2, family="bernoulli")
    return TopKProblem(np.linspace(3.0, 0.5, n_arms), n_arms // 2, family=family)


def call_times(function, repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU time of each of ``repeats`` calls."""
    times, cpu_times = [], []
    for _ in range(repeats):
        cpu_started = time.process_time()  # outside the wall-clock window (a CPU clock read costs about 1 µs here)
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
        cpu_times.append(time.process_time() - cpu_started)
    return times, cpu_times


def quantiles(function, repeats: int) -> tuple[float, float, float]:
    """Median and 90th percentile of the wall time per call, and the median CPU time per call (on a loaded
    machine the wall time includes the waits for a core; the CPU time does not)."""
    times, cpu_times = call_times(function, repeats)
    return float(np.median(times)), float(np.quantile(times, 0.9)), float(np.median(cpu_times))


LATENCY_ROUNDS = 10


def latency(lines: list[str], repeats: int) -> None:
    lines.append("## Latency at K = 20, k = 10 (exact solver, same certificate as always)\n")
    lines.append(f"Each family's {repeats} timed calls run in {LATENCY_ROUNDS} rounds, the families taking turns "
                 "within each round, so that every row meets the same spells of a faster or slower machine (on "
                 "this shared 2-core machine a call's time varies by up to 2-3x over spells of seconds).\n")
    lines.append("| instance | exact median [µs] | exact p90 [µs] | exact median CPU [µs] | numpy path median CPU [µs] "
                 "| cvxpy [ms] | cvxpy / exact | rel. gap | path |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    families = ("gaussian", "bernoulli", "poisson", "exponential")
    problems = {family: latency_instance(family) for family in families}
    results = {}
    for family in families:
        for _ in range(20):
            results[family] = solve_topk(problems[family])
    times: dict[str, list[float]] = {family: [] for family in families}
    cpu_times: dict[str, list[float]] = {family: [] for family in families}
    for _ in range(LATENCY_ROUNDS):
        for family in families:
            problem = problems[family]
            round_times, round_cpu = call_times(lambda: solve_topk(problem), repeats // LATENCY_ROUNDS)
            times[family] += round_times
            cpu_times[family] += round_cpu
    for family in families:
        problem, result = problems[family], results[family]
        median, p90 = float(np.median(times[family])), float(np.quantile(times[family], 0.9))
        cpu = float(np.median(cpu_times[family]))
        with compiled_kernels(False):  # the numpy path, side by side (the compiled kernels off)
            solve_topk(problem)
            _, _, numpy_cpu = quantiles(lambda: solve_topk(problem), max(repeats // 10, 20))
        solve_topk(problem, method="cvxpy")  # CVXPY's first call (compilation) is not timed
        cvxpy_time, _, _ = quantiles(lambda: solve_topk(problem, method="cvxpy"), 5)
        lines.append(f"| {family} linspace | {median * 1e6:.0f} | {p90 * 1e6:.0f} | {cpu * 1e6:.0f} | "
                     f"{numpy_cpu * 1e6:.0f} | {cvxpy_time * 1e3:.1f} | "
                     f"{cvxpy_time / median:.0f} | {result.relative_gap:.1e} | {result.message} |")
        print(lines[-1], flush=True)
    # noisy empirical means: a stream of instances as along a Track-and-Stop run
    rng = np.random.default_rng(5)
    base = np.linspace(1.0, 0.0, 20)
    problems = [TopKProblem(base + rng.normal(0.0, 0.1, 20), 10, variance=0.25) for _ in range(repeats)]
    times, cpu_times, gaps = [], [], []
    for problem in problems:
        cpu_started = time.process_time()
        started = time.perf_counter()
        result = solve_topk(problem)
        times.append(time.perf_counter() - started)
        cpu_times.append(time.process_time() - cpu_started)
        gaps.append(result.relative_gap)
    lines.append(f"| gaussian noisy means ({repeats} instances) | {np.median(times) * 1e6:.0f} | "
                 f"{np.quantile(times, 0.9) * 1e6:.0f} | {np.median(cpu_times) * 1e6:.0f} | | | "
                 f"max {max(gaps):.1e} | |")
    print(lines[-1], flush=True)


def plain_tracking(problem: TopKProblem, iterations: int) -> np.ndarray:
    """KKT-Tracking's update for Gaussian arms as a bare numpy loop (no certificate, no history)."""
    theta, k = problem.theta, problem.k
    top, bottom = problem.top, problem.bottom
    difference2 = (theta[top][:, None] - theta[bottom][None, :]) ** 2 / (2.0 * 0.25)
    psi = np.full(problem.n_arms, 1.0 / problem.n_arms)
    for t in range(1, iterations + 1):
        w_top, w_bottom = psi[top][:, None], psi[bottom][None, :]
        costs = difference2 * w_top * w_bottom / (w_top + w_bottom)
        row, column = divmod(int(np.argmin(costs)), problem.n_arms - k)
        i, j = top[row], bottom[column]
        h = psi[j] / (psi[i] + psi[j])
        psi *= (t - 1) / t
        psi[i] += h / t
        psi[j] += (1.0 - h) / t
    return psi


def iterations(lines: list[str]) -> None:
    lines.append("\n## Per-iteration cost at K = 20 (gaussian linspace)\n")
    lines.append("| method | µs / iteration | plain numpy loop [µs / iteration] | ratio |")
    lines.append("|---|---|---|---|")
    problem = latency_instance("gaussian")
    started = time.perf_counter()
    plain_tracking(problem, 2000)
    plain = (time.perf_counter() - started) / 2000
    for method in ("kkt-tracking", "fwga"):
        solve_topk(problem, method=method, iterations=10, tol=0.0)  # loads the compiled loop (not timed)
        # the difference of two runs removes the one-off final certificate; many iterations keep it above
        # that certificate's variation when an iteration costs well under a microsecond
        short = solve_topk(problem, method=method, iterations=200, tol=0.0)
        long = solve_topk(problem, method=method, iterations=100_200, tol=0.0)
        per_iteration = (long.time - short.time) / 100_000
        lines.append(f"| {method} | {per_iteration * 1e6:.2f} | {plain * 1e6:.0f} | {per_iteration / plain:.3f} |")
        print(lines[-1], flush=True)


def batch_instances(n_rows: int) -> list[tuple[str, str, np.ndarray]]:
    """The batch rows: noisy Gaussian means (variance 1/4), noisy Bernoulli means (clipped to [0.01, 0.99]) and
    empirical Bernoulli means s/n of 10-40 draws, which tie often (as along a Track-and-Stop run), K = 20."""
    rng = np.random.default_rng(11)
    gaussian = np.linspace(1.0, 0.0, 20) + rng.normal(0.0, 0.1, (n_rows, 20))
    bernoulli = np.clip(np.linspace(0.9, 0.1, 20) + rng.normal(0.0, 0.03, (n_rows, 20)), 0.01, 0.99)
    draws = rng.integers(10, 41, (n_rows, 20))
    empirical = rng.binomial(draws, np.linspace(0.9, 0.1, 20)) / draws
    return [("gaussian", "noisy linspace means", gaussian), ("bernoulli", "noisy linspace means", bernoulli),
            ("bernoulli", "empirical means s/n (ties)", empirical)]


def batch(lines: list[str], n_rows: int) -> None:
    lines.append(f"\n## Batch: solve_topk_batch, R = {n_rows} instances, K = 20, k = 10\n")
    lines.append("| family | instances | time [s] | CPU [s] | solved together | solved one by one | invalid | all valid "
                 "optimal | max rel. gap | load |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for family, name, theta in batch_instances(n_rows):
        options = {"variance": 0.25} if family == "gaussian" else {}
        solve_topk_batch(theta[:10], 10, family=family, **options)
        cpu_started = time.process_time()
        result = solve_topk_batch(theta, 10, family=family, **options)
        cpu = time.process_time() - cpu_started
        valid = result.status != "invalid_instance"
        lines.append(f"| {family} | {name} | {result.time:.3f} | {cpu:.3f} | "
                     f"{int((~result.solved_individually & valid).sum())} | {int(result.solved_individually.sum())} | "
                     f"{int((~valid).sum())} | {bool(result.success[valid].all())} | "
                     f"{np.nanmax(result.relative_gap[valid]):.1e} | {os.getloadavg()[0]:.1f} |")
        print(lines[-1], flush=True)


def scale_row(name: str, family: str, n_arms: int, kind: str = "confidence") -> dict:
    problem = topk_instance_class(name, n_arms, family)
    started = time.perf_counter()
    result = solve_topk(problem, kind=kind)
    elapsed = time.perf_counter() - started
    return {"time": elapsed, "relative_gap": float(result.relative_gap), "pivots": int(result.iterations),
            "status": result.status}


def scale(lines: list[str], sizes, limit: float, families=("gaussian", "bernoulli"),
          kinds=("confidence", "budget")) -> None:
    lines.append(f"\n## Scale: exact solver, k = K/2 (time limit {limit:.0f} s per row)\n")
    lines.append("Each row is one `solve_topk` call in a fresh process with no BLAS thread variable set; its time "
                 "includes loading the compiled kernels from numba's cache (about half a second). The goals: "
                 "certified (relative gap at most 1e-9) within 10 s at K = 10^4 and within 60 s at K = 10^5.\n")
    lines.append("| class | family | kind | K | time [s] | certified rel. gap | pivots | status |")
    lines.append("|---|---|---|---|---|---|---|---|")
    environment = {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}
    for name in TOPK_INSTANCE_CLASSES:
        for family in (family for family in families if name != "heteroscedastic" or family == "gaussian"):
            for kind in kinds:
                for n_arms in sizes:
                    command = [sys.executable, __file__, "--scale-row", name, family, str(n_arms), kind]
                    try:
                        output = subprocess.run(command, capture_output=True, text=True, timeout=limit,
                                                env=environment, check=True).stdout
                        row = json.loads(output.strip().splitlines()[-1])
                        cells = (f"{row['time']:.2f} | {row['relative_gap']:.1e} | {row['pivots']} | "
                                 f"{row['status']}")
                    except subprocess.TimeoutExpired:
                        cells = f"> {limit:.0f} | | | time limit"
                    except subprocess.CalledProcessError as error:
                        cells = f"| | | error: {error.stderr.strip().splitlines()[-1][:60]}"
                    lines.append(f"| {name} | {family} | {kind} | {n_arms} | {cells} |")
                    print(lines[-1], flush=True)


def kept_scale_section(text: str) -> list[str]:
    """The scale section of an earlier docs/topk_benchmark.md, with the sentence saying when and how it was
    measured (a run without scale rows keeps the earlier rows rather than dropping them)."""
    start = text.find("\n## Scale")
    if start < 0:
        return []
    section = text[start:].rstrip("\n").split("\n")
    measured = next((line for line in text.splitlines() if line.startswith("Measured by")), "")
    if any(line.startswith("Kept from an earlier run") for line in section):  # kept before: as it is
        return section
    note = ["", f"Kept from an earlier run (this run measured no scale rows). {measured}"] if measured else []
    return section[:2] + note + section[2:]


def machine() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    threads = {name: os.environ[name] for name in THREAD_VARIABLES if name in os.environ}
    return (f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()} "
            f"{platform.processor() or ''}, {os.cpu_count()} cores, load average {load[0]:.1f} at the start, "
            f"Python {platform.python_version()}, numpy {np.__version__}, BLAS thread variables "
            f"{threads if threads else 'unset'}")


# ------------------------------------------------------------------ the earlier comparisons (--all)
def instance(family: str, n_arms: int, k: int) -> TopKProblem:
    if family == "gaussian":
        return TopKProblem(np.linspace(1.0, 0.0, n_arms), k, family="gaussian", variance=0.25)
    return TopKProblem(np.linspace(0.9, 0.1, n_arms), k, family="bernoulli")


def best_time(function, repeats: int) -> tuple[float, object]:
    best, result = np.inf, None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return best, result


def _timed_cvxpy(problem, repeats, **options):
    try:
        return best_time(lambda: solve_topk(problem, method="cvxpy", **options), repeats)
    except Exception as error:  # the plain model can fail outright on large instances
        return np.nan, error


def ratios(sizes, cvxpy_repeats: int) -> None:
    print("\ncvxpy / exact for growing K, k = K/2. 'plain (17)': problem (17) in CVXPY + Clarabel at its defaults (a generic "
          "conic solve); 'oracle': allocopt's scaled CVXPY model (method='cvxpy' defaults)")
    print(f"{'family':10s} {'K':>5s} {'exact [s]':>10s} {'plain(17) [s]':>13s} {'ratio':>7s} {'oracle [s]':>10s} "
          f"{'ratio':>7s} {'exact gap':>10s} {'plain gap':>10s} {'oracle gap':>10s}")
    for family in ("gaussian", "bernoulli"):
        for n_arms in sizes:
            problem = instance(family, n_arms, n_arms // 2)
            solve_topk(problem, method="exact")  # warm caches and imports
            exact_time, exact = best_time(lambda: solve_topk(problem, method="exact"), 20)
            plain_time, plain = _timed_cvxpy(problem, cvxpy_repeats, formulation="epigraph", scale=False)
            oracle_time, oracle = _timed_cvxpy(problem, cvxpy_repeats)

            def gap(result):
                return f"{result.relative_gap:10.1e}" if hasattr(result, "relative_gap") else f"{'failed':>10s}"

            print(f"{family:10s} {n_arms:5d} {exact_time:10.6f} {plain_time:13.4f} {plain_time / exact_time:7.0f} "
                  f"{oracle_time:10.4f} {oracle_time / exact_time:7.0f} {gap(exact)} {gap(plain)} {gap(oracle)}",
                  flush=True)


def large() -> None:
    print("\nexact solver on large linspace instances")
    print(f"{'family':10s} {'K':>7s} {'k':>6s} {'time [s]':>9s} {'rel. gap':>9s} {'status':>8s}  message")
    for family in ("gaussian", "bernoulli"):
        for n_arms, k in ((10_000, 5_000), (100_000, 10)):
            problem = instance(family, n_arms, k)
            started = time.perf_counter()
            result = solve_topk(problem, method="exact")
            elapsed = time.perf_counter() - started
            print(f"{family:10s} {n_arms:7d} {k:6d} {elapsed:9.2f} {result.relative_gap:9.1e} {result.status:>8s}  "
                  f"{result.message}", flush=True)


def warm_sequence(n_instances: int) -> None:
    print(f"\ncold / warm over {n_instances} perturbed instances solved in sequence (a random walk of the means, "
          "as along a Track-and-Stop run; warm = warm_start=<previous result>)")
    print(f"{'instance family':34s} {'K':>4s} {'k':>3s} {'cold [s]':>9s} {'warm [s]':>9s} {'ratio':>6s} "
          f"{'max rel. gap':>13s} {'max |psi diff|':>15s}")
    rng = np.random.default_rng(12)
    families = (
        ("gaussian N(0,1) (double stars)", "gaussian", rng.normal(0.0, 1.0, 30), 10),
        ("bernoulli U(0.2,0.8) (double stars)", "bernoulli", rng.uniform(0.2, 0.8, 30), 10),
        ("gaussian two tight clusters (staircases)", "gaussian",
         np.concatenate([1 + 0.02 * rng.normal(size=15), 0.02 * rng.normal(size=15)]), 15),
        ("bernoulli two tight clusters (staircases)", "bernoulli",
         np.concatenate([0.6 + 0.01 * rng.normal(size=15), 0.4 + 0.01 * rng.normal(size=15)]), 15),
    )
    for label, family, base, k in families:
        thetas = [base]
        for _ in range(n_instances - 1):
            step = rng.normal(0.0, 1e-4 if "clusters" in label else 2e-3, base.size)
            candidate = np.clip(thetas[-1] + step, 0.01, 0.99) if family == "bernoulli" else thetas[-1] + step
            thetas.append(candidate)
        problems = [TopKProblem(theta, k, family=family) for theta in thetas]
        started = time.perf_counter()
        cold = [solve_topk(problem, method="exact") for problem in problems]
        cold_time = time.perf_counter() - started
        started = time.perf_counter()
        warm, previous = [], None
        for problem in problems:
            previous = solve_topk(problem, method="exact", warm_start=previous)
            warm.append(previous)
        warm_time = time.perf_counter() - started
        worst_gap = max(result.relative_gap for result in warm + cold)
        difference = max(np.abs(a.psi - b.psi).max() for a, b in zip(cold, warm))
        print(f"{label:34s} {problems[0].n_arms:4d} {k:3d} {cold_time:9.3f} {warm_time:9.3f} "
              f"{cold_time / warm_time:6.1f} {worst_gap:13.1e} {difference:15.1e}", flush=True)


def same_time(sizes) -> None:
    print("\nfwga and kkt-tracking given the exact solver's wall time: iterations that fit in it (per-iteration "
          "cost measured between 200 and 2000 iterations, without the one-off final certification), and the "
          "relative gap of the iterate reached (true: against the exact Gamma*; certified: the method's own bound)")
    print(f"{'family':10s} {'K':>5s} {'exact [s]':>10s} {'method':>13s} {'s/iteration':>12s} {'iterations':>10s} "
          f"{'true gap':>9s} {'certified':>10s}")
    for family in ("gaussian", "bernoulli"):
        for n_arms in sizes:
            problem = instance(family, n_arms, n_arms // 2)
            exact_time, exact = best_time(lambda: solve_topk(problem, method="exact"), 5)
            for method in ("fwga", "kkt-tracking"):
                short = solve_topk(problem, method=method, iterations=200)
                long = solve_topk(problem, method=method, iterations=2000)
                per_iteration = max((long.time - short.time) / 1800, 1e-9)
                iterations = max(1, int(exact_time / per_iteration))
                history = solve_topk(problem, method=method, iterations=iterations).history
                true_gap = (exact.value - history.value[-1]) / exact.value
                print(f"{family:10s} {n_arms:5d} {exact_time:10.5f} {method:>13s} {per_iteration:12.2e} "
                      f"{iterations:10d} {true_gap:9.1e} {history.relative_gap[-1]:10.1e}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, smaller batch")
    parser.add_argument("--scale", type=int, nargs="*", default=[1000], help="K values of the scale table")
    parser.add_argument("--limit", type=float, default=120.0, help="time limit per scale row [s]")
    parser.add_argument("--write-docs", action="store_true", help="write docs/topk_benchmark.md")
    parser.add_argument("--all", action="store_true",
                        help="also the earlier comparisons: cvxpy ratios up to K = 200, large linspace instances, "
                             "warm-start sequences, iterative methods given the exact solver's time")
    parser.add_argument("--latency-only", action="store_true", help="only the latency rows (section 1)")
    parser.add_argument("--batch-only", action="store_true", help="only the batch rows (section 3)")
    parser.add_argument("--no-scale", action="store_true", help="sections 1-3 without the scale table")
    parser.add_argument("--families", nargs="*", default=["gaussian", "bernoulli"],
                        choices=["gaussian", "bernoulli", "poisson", "exponential"],
                        help="families of the scale table")
    parser.add_argument("--kinds", nargs="*", default=["confidence", "budget"], choices=["confidence", "budget"],
                        help="kinds of cost of the scale table")
    parser.add_argument("--scale-row", nargs=4, metavar=("CLASS", "FAMILY", "K", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scale_row:
        name, family, n_arms, kind = args.scale_row
        print(json.dumps(scale_row(name, family, int(n_arms), kind)))
        return
    header = machine()
    print(header, flush=True)
    lines: list[str] = []
    if args.batch_only:
        batch(lines, 2000 if args.quick else 10_000)
        return
    latency(lines, 100 if args.quick else 500)
    if args.latency_only:
        return
    iterations(lines)
    batch(lines, 2000 if args.quick else 10_000)
    if args.scale and not args.no_scale:
        scale(lines, args.scale, args.limit, tuple(args.families), tuple(args.kinds))
    if args.all:
        ratios((20, 50, 100, 200), 2)
        large()
        warm_sequence(1000)
        same_time((20, 200))
    if args.write_docs:
        path = Path(__file__).resolve().parent.parent / "docs" / "topk_benchmark.md"
        command = "python benchmarks/topk_solvers.py " + " ".join(sys.argv[1:])
        if (not args.scale or args.no_scale) and path.exists():
            lines.extend(kept_scale_section(path.read_text()))
        path.write_text(f"<!-- written by benchmarks/topk_solvers.py; do not edit by hand -->\n"
                        "# Exact top-k solver: measured latency, batches and scale\n\n"
                        f"Measured by `{command}` on {header}. Wall-clock times; the load average says how busy "
                        "the machine was.\n\n" + "\n".join(lines) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
