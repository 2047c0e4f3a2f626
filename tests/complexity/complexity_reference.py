"""Naive reference implementations used by the complexity tests.

They follow the papers' case-by-case definitions with Python sorting and loops, independently of the vectorised
code under test.
"""

from __future__ import annotations


def naive_gaps(means: list[float], m: int) -> list[float]:
    """Shahrampour and Tarokh (2017), eq. (4), by cases: mu_i - mu_[M+1] for the top M arms, else mu_[M] - mu_i."""
    order = sorted(range(len(means)), key=lambda arm: -means[arm])
    top = set(order[:m])
    upper, lower = means[order[m - 1]], means[order[m]]
    return [means[arm] - lower if arm in top else upper - means[arm] for arm in range(len(means))]


def naive_h(means: list[float], m: int, p: float) -> float:
    """max_{i=2..K} i^p / Delta_(i)^2 with the gaps sorted increasingly (Shahrampour and Tarokh 2017, eq. (4))."""
    ordered = sorted(naive_gaps(means, m))
    return max((i + 1) ** p / ordered[i] ** 2 for i in range(1, len(ordered)))


def naive_h_t_eps(means: list[float], k: int, eps: float) -> tuple[float, int, float]:
    """Chen, Chen, Zhang, Zhou (2017), eq. (3)-(6) by loops: (H(t, eps), t, Psi_t^eps), t in 0..min(K-1, n-K-1)."""
    ranked = sorted(means, reverse=True)
    n = len(ranked)

    def rank_gap(rank: int) -> float:  # 1-based rank
        return ranked[rank - 1] - ranked[k] if rank <= k else ranked[k - 1] - ranked[rank - 1]

    t = 0
    for candidate in range(0, min(k - 1, n - k - 1) + 1):
        if rank_gap(k - candidate) * candidate <= k * eps and rank_gap(k + candidate + 1) * candidate <= k * eps:
            t = candidate
    psi_eps = max(eps, min(rank_gap(k - t), rank_gap(k + t + 1)))
    # min(Delta^-2, Psi^-2) taken by comparing the gaps (Delta^-2 overflows for gaps below about 1e-154)
    value = sum(psi_eps**-2 if rank_gap(r) < psi_eps else rank_gap(r) ** -2 for r in range(1, n + 1))
    return value, t, psi_eps
