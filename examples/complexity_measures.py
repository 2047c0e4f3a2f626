"""Print the complexity measures of the papers' standard instances side by side.

Run with ``python examples/complexity_measures.py`` (or ``make examples``). One table per paper:

* Shahrampour and Tarokh (2017), NSAR: setups 1-6 with K = 50 Bernoulli arms and M in {2, 4};
* Chen, Chen, Zhang, Zhou (2017), AdaptiveTopK: TWOGROUP, UNIFORM, SYNTHETIC-0.5 and SYNTHETIC-6 with n = 1000,
  eps = delta = 0.01;
* Jiang, Li, Qiao (2017), lil'RandLUCB: 1-sparse, 0.3-Exponential and the Best-1 instances, Gaussian with
  variance 1/4.

Each table ends with the allocation-based measures of the top-k layer (Wang, Yang, You 2022; docs/topk.md): the
fixed-budget exponent Gamma_B* for Shahrampour and Tarokh's instances, the characteristic time T* = 1/Gamma* for
the other two and, for Jiang, Li, Qiao's, the lower bound T* kl(delta, 1-delta) of Lemma 2.1 of Wang, Yang, You
(2022) on the expected number of samples of any delta-correct algorithm.
A dash marks a measure that does not apply (SYNTHETIC-6 ties the top-K set at float64 resolution).
"""

from __future__ import annotations

import math

from allocopt import complexity
from allocopt._scripts import progress_iter
from allocopt.testing.bandit_instances import standard_instances


def formatted(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.4g}" if math.isfinite(value) else str(value)


def print_table(title: str, columns: list[tuple[str, str]],
                rows: list[tuple[str, complexity.ComplexityReport]]) -> None:
    header = ["instance"] + [label for label, _ in columns]
    body = [[name] + [formatted(result[key] if key in result else None) for _, key in columns] for name, result in rows]
    widths = [max(len(row[column]) for row in [header] + body) for column in range(len(header))]
    print(title)
    for row in [header] + body:
        print("  " + row[0].ljust(widths[0]) + "  " + "  ".join(text.rjust(w) for text, w in zip(row[1:], widths[1:])))
    print()


def main() -> None:
    reports: dict[str, list[tuple[str, complexity.ComplexityReport]]] = {
        "shahrampour2017": [], "chen2017": [], "jiang2017": []}
    for instance in progress_iter(standard_instances(), desc="instances"):
        parameters = dict(instance.parameters)
        theta, k, family = parameters.pop("theta"), parameters.pop("k"), parameters.pop("family")
        result = complexity.report(theta, k, family, p=(0.7, 1.3), **parameters)
        paper, _, name = instance.name.partition("-")
        reports[paper].append((name, result))

    print_table("Shahrampour and Tarokh (2017), top-M fixed budget (K = 50 Bernoulli arms; budget of the "
                "experiments: ceil(H1))", [
        ("H1^(M)", "h1"), ("H2^(M)", "h2"), ("H(0.7)", "h_p[p=0.7]"), ("H(1.3)", "h_p[p=1.3]"),
        ("SAR", "sar_sample_complexity"), ("NSAR 0.7", "nsar_sample_complexity[p=0.7]"),
        ("NSAR 1.3", "nsar_sample_complexity[p=1.3]"), ("AT-LUCB", "at_lucb_sample_complexity"),
        ("SAR budget", "sar_budget"), ("Gamma_B*", "gamma_b_star"),
    ], reports["shahrampour2017"])
    print_table("Chen, Chen, Zhang, Zhou (2017), epsilon-top-K with aggregate regret (n = 1000, eps = delta = 0.01)", [
        ("t", "t_eps"), ("Psi_t^eps", "psi_t_eps"), ("H(t,eps)", "h_t_eps"), ("H(0,eps)", "h_0_eps"),
        ("n/eps^2", "n_over_eps_squared"), ("Thm 2", "improved_topk_sample_complexity"),
        ("CLUCB-PAC", "clucb_pac_sample_complexity"), ("OptMAI", "zhou_sample_complexity"), ("H1^(K)", "h1"),
        ("T*", "t_star"),
    ], reports["chen2017"])
    print_table("Jiang, Li, Qiao (2017), Best-K fixed confidence (Gaussian, variance 1/4, delta = 0.01)", [
        ("H", "h1"), ("H2", "h2"), ("min gap", "boundary_gap"), ("AT-LUCB", "at_lucb_sample_complexity"),
        ("SAR", "sar_sample_complexity"), ("c-spread", "spread_constant"), ("T*", "t_star"),
        ("T* kl", "sample_complexity_lower_bound"),
    ], reports["jiang2017"])


if __name__ == "__main__":
    main()
