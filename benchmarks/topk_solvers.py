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


def _timed_cvxpy(problem, repeats, **options):
    try:
        return best_time(lambda: solve_topk(problem, method="cvxpy", **options), repeats)
    except Exception as error:  # the plain model can fail outright on large instances
        return np.nan, error


def ratios(sizes, cvxpy_repeats: int) -> None:
    print("1. cvxpy / exact, k = K/2. 'plain (17)': problem (17) in CVXPY + Clarabel at its defaults (the generic "
          "conic solve of the issue); 'oracle': allocopt's scaled CVXPY model (method='cvxpy' defaults)")
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
    print(f"\n3. cold / warm over {n_instances} perturbed instances solved in sequence (a random walk of the means, "
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
    print("\n4. fwga and kkt-tracking given the exact solver's wall time: iterations that fit in it (per-iteration "
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
