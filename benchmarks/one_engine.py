"""The one engine's figures, measured side by side in one run (issue "One engine").

1. **Per rule, per replication-step**: every registered rule on its instance (below), CPU seconds per replication-
   step in a fresh process after a warm-up, for this checkout and, with ``--baseline DIR``, for the ``allocopt``
   package of another source tree (e.g. ``git archive COMMIT allocopt | tar -x -C DIR``); the configurations take
   turns (``--repeats`` rounds, A B A B) and the table gives medians and the ratio this / baseline.
2. **KKT-TS against its floor**: KKT-TS on Figure 1's instance of Wang, Yang, You (2022) (gaussian, theta_i =
   1 - (i-1)/20, K = 20, k = 5, variance 1/4) per replication-step, as a multiple of a floor loop compiled here: one
   reward per step, an O(K) insertion top-k, the k(K-k) Chernoff minimum with one division per pair and the
   thresholds, nothing else (goal: at most 4x). And TTTS on Bernoulli arms (K = 20, k = 1, theta_i = 0.9 - 0.04 (i-1))
   against KKT-TS on Figure 1's Gaussian arms, per replication-step (goal: at most 3x): the goal was set for the
   TTTS of its time, which took T3C's challenger after 8 re-samples (``TTTS(max_resamples=8)``, "ttts-capped");
   Russo's TTTS ("ttts") re-samples until the arg max changes, about 460 times per challenger step on Figure 1's
   instance, so its cost is also given per posterior sample drawn.
3. **Top-k solver**: the single solve of a Bernoulli instance with tied means against the same instance without
   ties (K = 20; goal: at most 3x), and the CPU seconds of a first Bernoulli ``solve_topk`` and a first
   Track-and-Stop run in a fresh process with an empty numba cache (goal: at most 5 s for the solve).

Measure on an idle machine, with no OMP/OPENBLAS thread variables set.

Usage: ``python benchmarks/one_engine.py [--runs 64] [--repeats 3] [--rules kkt-ts,uniform] [--baseline DIR]
[--skip-rules] [--write-docs]``; ``--write-docs`` writes what it prints, with the date, the machine and the load,
to docs/engine_benchmark.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RULE_CHILD = r"""
import hashlib, json, sys, time, resource
import numpy as np
from allocopt import TopKProblem
from allocopt.algorithms import identify, identify_fixed_budget, pac_identify
from allocopt.exceptions import AllocoptError
rule, runs = sys.argv[1], int(sys.argv[2])
figure1 = TopKProblem(1.0 - np.arange(20) / 20.0, 5, variance=0.25)
bernoulli = TopKProblem(0.9 - 0.04 * np.arange(20), 1, family="bernoulli")
problem = bernoulli if rule.endswith("@bernoulli") else figure1
name = rule.split("@")[0]
if name == "ttts-capped":  # the TTTS of the issue's writing: at most 8 re-samples, then T3C's challenger
    from allocopt.algorithms import TTTS
    name = TTTS(max_resamples=8)
if name in ("ttts", "t3c", "ttei") and problem is figure1:
    problem = TopKProblem(1.0 - np.arange(20) / 20.0, 1, variance=0.25)
def run(n):
    for attempt in (lambda: identify(problem, name, delta=(0.1, 0.01), n_runs=n, rng=0, n_jobs=1, chunk_size=n,
                                     max_samples=10**6),
                    lambda: identify_fixed_budget(problem, name, (2000, 20000), n_runs=n, rng=0, n_jobs=1,
                                                  chunk_size=n),
                    lambda: pac_identify(problem, name, epsilon=0.05, delta=0.1, n_runs=n, rng=0, n_jobs=1,
                                         chunk_size=n)):
        try:
            return attempt()
        except AllocoptError as error:
            if not any(word in str(error) for word in ("'policy'", "'epsilon'", "'budget'")):
                raise
    raise SystemExit("no runner for " + rule)
run(2)  # warm-up: imports and the compiled kernels' load from numba's cache (or their compilation)
start = time.process_time()
result = run(runs)
cpu = time.process_time() - start
steps = int(result.replication_steps)
arrays = [np.asarray(getattr(result, field)) for field in ("stopping_times", "recommendations", "pulls", "samples")
          if hasattr(result, field)]
digest = hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)).hexdigest()
diagnostics = getattr(result, "diagnostics", None) or {}
resamples = float(np.sum(diagnostics["resamples"])) if "resamples" in diagnostics else 0.0
print(json.dumps({"cpu": cpu, "steps": steps, "digest": digest, "resamples": resamples}))
"""

FLOOR_CHILD = r"""
import json, time
import numpy as np
import numba

@numba.njit(cache=False)
def floor(rewards, thresholds, k, steps):
    n_arms = rewards.shape[0]
    counts, sums, means = np.ones(n_arms, dtype=np.int64), rewards[:, 0].copy(), np.empty(n_arms)
    inverse = np.empty(n_arms)
    best_values, best_arms = np.empty(k), np.empty(k, dtype=np.int64)
    member = np.empty(n_arms, dtype=np.bool_)
    stops = 0
    for step in range(steps):
        arm = step % n_arms  # one reward per step
        sums[arm] += rewards[arm, (counts[arm] + 1) % rewards.shape[1]]
        counts[arm] += 1
        for a in range(n_arms):
            means[a] = sums[a] / counts[a]
            inverse[a] = 0.25 / counts[a]
        size = 0  # an O(K) insertion top-k
        for a in range(n_arms):
            value = means[a]
            if size == k:
                if not value > best_values[k - 1]:
                    continue
                position = k - 1
            else:
                position = size
                size += 1
            while position > 0 and best_values[position - 1] < value:
                best_values[position] = best_values[position - 1]
                best_arms[position] = best_arms[position - 1]
                position -= 1
            best_values[position] = value
            best_arms[position] = a
        member[:] = False
        for position in range(k):
            member[best_arms[position]] = True
        smallest = np.inf  # the k(K-k) minimum, one division per pair
        for i in range(n_arms):
            if member[i]:
                for j in range(n_arms):
                    if not member[j]:
                        gap = means[i] - means[j]
                        cost = 0.5 * gap * gap / (inverse[i] + inverse[j])
                        if cost < smallest:
                            smallest = cost
        t = step + n_arms
        for check in range(thresholds.shape[1]):  # the thresholds
            stops += smallest > thresholds[t % thresholds.shape[0], check]
    return stops

rng = np.random.default_rng(0)
rewards = (1.0 - np.arange(20) / 20.0)[:, None] + 0.5 * rng.standard_normal((20, 4096))
thresholds = np.log((np.log(np.arange(1, 1 << 16)) + 1.0)[:, None] / np.array([[0.1, 0.01]]))
floor(rewards, thresholds, 5, 1000)
steps = 2_000_000
start = time.process_time()
floor(rewards, thresholds, 5, steps)
print(json.dumps({"cpu": time.process_time() - start, "steps": steps}))
"""

SOLVE_CHILD = r"""
import json, sys, time
import numpy as np
from allocopt import TopKProblem, solve_topk
theta = 0.8 - 0.03 * np.arange(20)
tied = theta.copy()
tied[[2, 3, 4]] = tied[2]  # three tied means in the top set
tied[[12, 13]] = tied[12]  # two in the bottom set
problems = {"untied": TopKProblem(theta, 5, family="bernoulli"), "tied": TopKProblem(tied, 5, family="bernoulli")}
for problem in problems.values():
    solve_topk(problem)
out = {}
for name, problem in problems.items():
    best = np.inf
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(200):
            solve_topk(problem)
        best = min(best, (time.perf_counter() - start) / 200)
    out[name] = best
print(json.dumps(out))
"""

FIRST_USE_CHILD = r"""
import json, resource, sys
import numpy as np
what = sys.argv[1]
from allocopt import TopKProblem, solve_topk
if what == "solve":
    solve_topk(TopKProblem([0.8, 0.6, 0.55, 0.3, 0.2], 2, family="bernoulli"))
else:
    from allocopt.algorithms import identify
    identify(TopKProblem([1.0, 0.8, 0.5, 0.2], 2, variance=0.25), "track-and-stop", delta=0.1, n_runs=2, rng=0,
             n_jobs=1)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime}))
"""

DEFAULT_RULES = ("uniform", "kkt-ts", "kkt-ts@bernoulli", "bts", "dt-ts", "track-and-stop", "track-and-stop@bernoulli",
                 "ocba-balanced", "t3c", "ttts", "ttts@bernoulli", "ttei", "lucb", "kl-lucb@bernoulli", "lil-lucb",
                 "lil-rand-lucb", "lil-clucb", "ugape", "kl-elimination", "at-lucb", "sar", "sequential-halving",
                 "optmai", "adaptive-topk-budget", "clucb-pac-budget", "adaptive-topk", "clucb-pac")


def _child(source: Path, script: str, *arguments: str, environment: dict | None = None) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_NUM_THREADS")}
    env["PYTHONPATH"] = str(source)
    env.update(environment or {})
    completed = subprocess.run([sys.executable, "-c", script, *arguments], capture_output=True, text=True, env=env,
                               cwd=source)
    if completed.returncode != 0:
        raise SystemExit(f"child failed ({source}, {arguments}):\n{completed.stderr[-2000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


RESAMPLES: dict[str, float] = {}
"""Re-samples per replication-step of the rules that re-sample (TTTS), measured by :func:`rule_table`."""


def rule_table(rules, runs: int, repeats: int, baseline: Path | None) -> dict[str, float]:
    """Per rule: ns per replication-step here (and in the baseline), interleaved; returns this checkout's."""
    sources = {"this": ROOT} | ({"baseline": baseline} if baseline else {})
    print(f"\n1. Cost per replication-step, {runs} replications, median of {repeats} rounds (ns)")
    print(f"{'rule':24s} {'this':>10s}" + (f" {'baseline':>10s} {'ratio':>7s}" if baseline else "") + "  outcomes")
    here = {}
    for rule in rules:
        samples: dict[str, list[float]] = {name: [] for name in sources}
        digests: dict[str, str] = {}
        for _ in range(repeats):
            for name, source in sources.items():
                result = _child(source, RULE_CHILD, rule, str(runs))
                samples[name].append(1e9 * result["cpu"] / max(result["steps"], 1))
                digests[name] = result["digest"]
                if name == "this":
                    RESAMPLES[rule] = result.get("resamples", 0.0) / max(result["steps"], 1)
        this = statistics.median(samples["this"])
        here[rule] = this
        line = f"{rule:24s} {this:10.0f}"
        if baseline:
            other = statistics.median(samples["baseline"])
            same = "same" if digests["this"] == digests["baseline"] else "differ"
            line += f" {other:10.0f} {this / other:7.2f}  {same}"
        print(line, flush=True)
    return here


def main() -> None:
    from allocopt._scripts import MeasuredRun, tee_stdout, write_docs_section

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rules", default=",".join(DEFAULT_RULES))
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--skip-rules", action="store_true", help="only sections 2 and 3")
    parser.add_argument("--write-docs", action="store_true", help=f"write what it prints to {DOCS.name}")
    args = parser.parse_args()
    run = MeasuredRun.start()
    with tee_stdout() as printed:
        measure(args)
    if args.write_docs:
        if not DOCS.exists():
            DOCS.write_text("# The one engine's figures\n\nWritten by `python benchmarks/one_engine.py --write-docs`: "
                            "per-step costs, the floor, the top-k solver's tie ratio and first use (the goals are "
                            "those of the issue \"One engine\").\n", encoding="utf-8")
        write_docs_section(DOCS, "one-engine", run, ["```text", *printed.getvalue().strip("\n").splitlines(), "```"])


DOCS = ROOT / "docs" / "engine_benchmark.md"


def measure(args) -> None:
    """Sections 1-3 of the module docstring, printed."""
    rules = [rule for rule in args.rules.split(",") if rule]
    needed = {"kkt-ts", "ttts@bernoulli", "ttts-capped@bernoulli"}
    here = {} if args.skip_rules else rule_table(rules, args.runs, args.repeats, args.baseline)
    missing = needed - set(here)
    if missing:
        here |= rule_table(sorted(missing), args.runs, args.repeats, None)
    floors = [_child(ROOT, FLOOR_CHILD) for _ in range(args.repeats)]
    floor = statistics.median(1e9 * result["cpu"] / result["steps"] for result in floors)
    print("\n2. The engine against its floor (ns per replication-step)")
    print(f"   floor loop {floor:.0f}; KKT-TS {here['kkt-ts']:.0f}: {here['kkt-ts'] / floor:.2f}x the floor (goal <= 4)")
    capped, russo = here["ttts-capped@bernoulli"], here["ttts@bernoulli"]
    draws = 1.0 + RESAMPLES.get("ttts@bernoulli", 0.0)  # posterior samples per step: the step's and its re-samples
    print(f"   TTTS capped at 8 re-samples (the TTTS of the goal's writing) on Bernoulli arms {capped:.0f}: "
          f"{capped / here['kkt-ts']:.2f}x KKT-TS on Gaussian arms (goal <= 3)")
    print(f"   Russo's TTTS on Bernoulli arms {russo:.0f} ({draws:.1f} posterior samples per step): "
          f"{russo / here['kkt-ts']:.2f}x KKT-TS per step, {russo / draws / here['kkt-ts']:.2f}x per posterior sample")
    solve = _child(ROOT, SOLVE_CHILD)
    print("\n3. Top-k solver")
    print(f"   Bernoulli K = 20, k = 5: untied {1e6 * solve['untied']:.1f} us, tied {1e6 * solve['tied']:.1f} us per "
          f"solve: ratio {solve['tied'] / solve['untied']:.2f} (goal <= 3)")
    for what in ("solve", "track-and-stop"):
        with tempfile.TemporaryDirectory() as cache:
            first = _child(ROOT, FIRST_USE_CHILD, what, environment={"NUMBA_CACHE_DIR": cache})
        print(f"   first {'Bernoulli solve_topk' if what == 'solve' else 'Track-and-Stop run'} with an empty numba "
              f"cache: {first['cpu']:.1f} s of CPU" + (" (goal <= 5)" if what == "solve" else ""))


if __name__ == "__main__":
    main()
