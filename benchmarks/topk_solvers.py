"""Top-k solvers measured side by side in one run (issue 3).

1. Time ratio cvxpy / exact for K in {20, 50, 100, 200}, k = K/2, on gaussian theta = linspace(1, 0, K) with
   variance 1/4 and bernoulli theta = linspace(0.9, 0.1, K) (goal: >= 100x at K = 20, >= 1000x at K = 200).
2. Time and certified gap of the exact solver at K = 10^4, k = 5000 and K = 10^5, k = 10, both families
   (goal: <= 10 s each on a 2-core machine).
3. Cold / warm time ratio over 1000 perturbed instances solved in sequence (goal: >= 3x).
4. Relative gap of fwga and kkt-tracking after the same wall time as the exact solver.

Times are the minimum over repetitions (the exact solver) or over `--cvxpy-repeats` runs (cvxpy), measured in
this process one after the other. Run: python benchmarks/topk_solvers.py [--quick]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from allocopt import TopKProblem, solve_topk

warnings.simplefilter("ignore")


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


def ratios(sizes, cvxpy_repeats: int) -> None:
    print("1. cvxpy / exact, k = K/2")
    print(f"{'family':10s} {'K':>5s} {'cvxpy [s]':>10s} {'exact [s]':>10s} {'ratio':>8s} {'cvxpy rel. gap':>15s} "
          f"{'exact rel. gap':>15s} {'|value diff|/value':>19s}")
    for family in ("gaussian", "bernoulli"):
        for n_arms in sizes:
            problem = instance(family, n_arms, n_arms // 2)
            solve_topk(problem, method="exact")  # warm caches and imports
            exact_time, exact = best_time(lambda: solve_topk(problem, method="exact"), 20)
            cvxpy_time, oracle = best_time(lambda: solve_topk(problem, method="cvxpy"), cvxpy_repeats)
            print(f"{family:10s} {n_arms:5d} {cvxpy_time:10.4f} {exact_time:10.6f} {cvxpy_time / exact_time:8.0f} "
                  f"{oracle.relative_gap:15.1e} {exact.relative_gap:15.1e} "
                  f"{abs(oracle.value - exact.value) / exact.value:19.1e}", flush=True)


def large() -> None:
    print("\n2. exact solver on large instances")
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
    print(f"\n3. cold / warm over {n_instances} perturbed instances (a random walk of the means, as along a "
          "Track-and-Stop run)")
    print(f"{'family':10s} {'K':>4s} {'k':>3s} {'cold [s]':>9s} {'warm [s]':>9s} {'ratio':>6s} {'max rel. gap':>13s} "
          f"{'max |psi diff|':>15s}")
    rng = np.random.default_rng(12)
    for family, base in (("gaussian", rng.normal(0.0, 1.0, 30)), ("bernoulli", rng.uniform(0.2, 0.8, 30))):
        k = 10
        thetas = [base]
        for _ in range(n_instances - 1):
            step = rng.normal(0.0, 2e-3, base.size)
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
        print(f"{family:10s} {problems[0].n_arms:4d} {k:3d} {cold_time:9.3f} {warm_time:9.3f} "
              f"{cold_time / warm_time:6.1f} {worst_gap:13.1e} {difference:15.1e}", flush=True)


def same_time(sizes) -> None:
    print("\n4. fwga and kkt-tracking after the exact solver's wall time (true relative gap, certified relative gap)")
    print(f"{'family':10s} {'K':>5s} {'exact [s]':>10s} {'method':>13s} {'iterations':>10s} {'time [s]':>9s} "
          f"{'true gap':>9s} {'certified':>10s}")
    for family in ("gaussian", "bernoulli"):
        for n_arms in sizes:
            problem = instance(family, n_arms, n_arms // 2)
            exact_time, exact = best_time(lambda: solve_topk(problem, method="exact"), 5)
            for method in ("fwga", "kkt-tracking"):
                probe = solve_topk(problem, method=method, iterations=20)
                per_iteration = probe.time / 20
                iterations = max(1, int(exact_time / per_iteration))
                result = solve_topk(problem, method=method, iterations=iterations)
                print(f"{family:10s} {n_arms:5d} {exact_time:10.5f} {method:>13s} {iterations:10d} {result.time:9.5f} "
                      f"{(exact.value - result.value) / exact.value:9.1e} {result.relative_gap:10.1e}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer instances")
    parser.add_argument("--cvxpy-repeats", type=int, default=2)
    args = parser.parse_args()
    sizes = (20, 50) if args.quick else (20, 50, 100, 200)
    ratios(sizes, args.cvxpy_repeats)
    if not args.quick:
        large()
    warm_sequence(100 if args.quick else 1000)
    same_time((20, 200) if not args.quick else (20,))


if __name__ == "__main__":
    main()
