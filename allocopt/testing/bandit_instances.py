r"""The standard bandit instances of the papers' experiments, as generators of mean vectors.

Each generator cites the paper and section its instance comes from and returns the means as a float array ranked
from best to worst (rank 1 first), except where the source draws them at random. :func:`standard_instances`
returns the configurations the experiments actually use, as :class:`~allocopt.testing.ReferenceInstance`
objects.

Sources: Shahrampour and Tarokh (2017), *Nonlinear Sequential Accepts and Rejects for Identification of Top Arms
in Stochastic Bandits* (NSAR), Section IV.A; Chen, Chen, Zhang, Zhou (2017), *Adaptive Multiple-Arm
Identification*, Section 3; Jiang, Li, Qiao (2017), *Practical Algorithms for Best-K Identification in Multi-Armed
Bandits*, Section 5.
"""

from __future__ import annotations

import numpy as np

from .._rng import RandomLike, as_generator
from .._validation import as_int, as_positive_float
from .instances import ReferenceInstance

__all__ = [
    "nsar_setup",
    "NSAR_SETUPS",
    "one_sparse",
    "alpha_exponential",
    "lil_exponential",
    "two_group",
    "uniform",
    "synthetic_p",
    "standard_instances",
]

#: Names of the six setups of Shahrampour and Tarokh (2017), Section IV.A.
NSAR_SETUPS = {
    1: "one group of suboptimal arms",
    2: "two groups of suboptimal arms",
    3: "three groups of suboptimal arms",
    4: "arithmetic progression",
    5: "Beta(5, 5)",
    6: "one real competitive arm",
}


def _arms_and_top(n_arms: int, k: int, func: str) -> tuple[int, int]:
    """``n_arms >= 2`` and ``k`` in ``1..n_arms - 1``, validated in the name of ``func``."""
    n_arms = as_int(n_arms, func, "n_arms", low=2)
    return n_arms, as_int(k, func, "k", low=1, high=n_arms - 1)


def _groups(sizes_and_means: list[tuple[int, float]]) -> np.ndarray:
    return np.concatenate([np.full(size, mean, dtype=float) for size, mean in sizes_and_means])


def nsar_setup(setup: int, m: int, n_arms: int = 50, *, rng: RandomLike = None, top_mean: float = 0.7) -> np.ndarray:
    r"""Setup ``setup`` (1..6) of NSAR's experiments (Shahrampour and Tarokh 2017, Section IV.A; Bernoulli, K = 50).

    With :math:`M` = ``m`` and ``x:y`` the arms :math:`x..y`:

    1. :math:`\mu_{1:M} = 0.7`, :math:`\mu_{M+1:K} = 0.5`;
    2. :math:`\mu_{1:M} = 0.7`, :math:`\mu_{M+1:2M} = 0.66`, :math:`\mu_{2M+1:K} = 0.5`;
    3. as 2 with :math:`\mu_{2M+1:3M} = 0.62` and :math:`\mu_{3M+1:K} = 0.5`;
    4. arithmetic progression :math:`\Delta_i = \mu_1 - \mu_i = 0.6(i-1)/(K-1)`; the paper gives the gaps only,
       allocopt takes :math:`\mu_1` = ``top_mean`` (0.7, the top mean of the other setups; every gap-based measure
       is independent of this choice);
    5. :math:`K` means drawn from Beta(5, 5) with ``rng`` (unsorted);
    6. :math:`\mu_{1:M} = 0.7`, :math:`\mu_{M+1} = 0.68`, :math:`\mu_{M+2:K} = 0.5`.

    The experiments take :math:`M \in \{2, 4\}` and the budget :math:`T = \lceil H_1^{(M)} \rceil`.

    Examples
    --------
    >>> nsar_setup(6, 2, 6)
    array([0.7 , 0.7 , 0.68, 0.5 , 0.5 , 0.5 ])
    """
    func = "nsar_setup"
    setup = as_int(setup, func, "setup", low=1, high=6)
    n_arms = as_int(n_arms, func, "n_arms", low=2)
    high = {2: n_arms // 2, 3: n_arms // 3}.get(setup, n_arms - 1)  # setups 2 and 3 need groups of m arms
    m = as_int(m, func, "m", low=1, high=high,
               requirement=f"an integer in 1..{high} (setup {setup} with K = {n_arms} arms)")
    if setup == 1:
        return _groups([(m, 0.7), (n_arms - m, 0.5)])
    if setup == 2:
        return _groups([(m, 0.7), (m, 0.66), (n_arms - 2 * m, 0.5)])
    if setup == 3:
        return _groups([(m, 0.7), (m, 0.66), (m, 0.62), (n_arms - 3 * m, 0.5)])
    if setup == 4:
        top_mean = as_positive_float(top_mean, func, "top_mean")
        return top_mean - 0.6 * np.arange(n_arms, dtype=float) / (n_arms - 1)
    if setup == 5:
        return as_generator(rng, func).beta(5.0, 5.0, size=n_arms)
    return _groups([(m, 0.7), (1, 0.68), (n_arms - m - 1, 0.5)])


def one_sparse(n_arms: int, k: int) -> np.ndarray:
    r"""The "1-sparse" instance (Jiang, Li, Qiao 2017, Section 5): :math:`\mu_{[1..K]} = 1/2`, the other arms 0.

    Used with :math:`K \in \{2, N/2\}` (Best-:math:`K`, Section 5.1) and :math:`K = 1` (Best-1, Section 5.2);
    Gaussian rewards of variance 1/4.

    Examples
    --------
    >>> one_sparse(4, 1)
    array([0.5, 0. , 0. , 0. ])
    """
    n_arms, k = _arms_and_top(n_arms, k, "one_sparse")
    return _groups([(k, 0.5), (n_arms - k, 0.0)])


def _power_profile(n_arms: int, k: int, exponent: float) -> np.ndarray:
    r"""Means :math:`1 - K/n + (K/n)((K-i)/K)^a` for :math:`i \le K`, :math:`(1 - K/n)(1 - ((i-K)/(n-K))^a)` after.
    """
    ranks = np.arange(1, n_arms + 1, dtype=float)
    boundary = (n_arms - k) / n_arms
    top = boundary + (k / n_arms) * (np.clip(k - ranks, 0.0, None) / k) ** exponent
    bottom = boundary - boundary * (np.clip(ranks - k, 0.0, None) / (n_arms - k)) ** exponent
    return np.where(ranks <= k, top, bottom)


def alpha_exponential(n_arms: int, k: int, alpha: float = 0.3) -> np.ndarray:
    r"""The ":math:`\alpha`-Exponential" instance of Jiang, Li, Qiao (2017), Section 5.1.

    .. math::

        \mu_{[i]} = \frac{N-K}{N} + \frac{K}{N}\Big(\frac{K-i}{K}\Big)^\alpha \ (i \le K), \qquad
        \mu_{[i]} = \frac{N-K}{N} - \frac{N-K}{N}\Big(\frac{i-K}{N-K}\Big)^\alpha \ (i > K),

    with :math:`\alpha = 0.3` and :math:`K \in \{2, N/2\}` in the paper (Gaussian rewards, variance 1/4).

    Examples
    --------
    >>> alpha_exponential(4, 2, 1.0)  # alpha = 1 spaces the means by 1/N
    array([0.75, 0.5 , 0.25, 0.  ])
    """
    n_arms, k = _arms_and_top(n_arms, k, "alpha_exponential")
    alpha = as_positive_float(alpha, "alpha_exponential", "alpha")
    return _power_profile(n_arms, k, alpha)


def lil_exponential(n_arms: int, alpha: float) -> np.ndarray:
    r"""The "lil-Exponential" Best-1 instance (Jiang, Li, Qiao 2017, Section 5.2; after Jamieson et al. 2014).

    :math:`\mu_{[1]} = 1` and :math:`\mu_{[i]} = 1 - ((i-1)/N)^\alpha` for :math:`i > 1`, with
    :math:`\alpha \in \{0.3, 0.6\}` in the paper.

    Examples
    --------
    >>> lil_exponential(4, 1.0)
    array([1.  , 0.75, 0.5 , 0.25])
    """
    n_arms = as_int(n_arms, "lil_exponential", "n_arms", low=2)
    alpha = as_positive_float(alpha, "lil_exponential", "alpha")
    return 1.0 - (np.arange(n_arms, dtype=float) / n_arms) ** alpha


def two_group(n_arms: int, k: int) -> np.ndarray:
    """TWOGROUP of Chen, Chen, Zhang, Zhou (2017), Section 3: the top ``k`` arms have mean 0.7, the others 0.3.

    Examples
    --------
    >>> two_group(4, 1)
    array([0.7, 0.3, 0.3, 0.3])
    """
    n_arms, k = _arms_and_top(n_arms, k, "two_group")
    return _groups([(k, 0.7), (n_arms - k, 0.3)])


def uniform(n_arms: int) -> np.ndarray:
    r"""UNIFORM (Chen, Chen, Zhang, Zhou 2017, Section 3): :math:`\theta_i = 1 - i/n`, :math:`1 \le i \le n` (1-spread).

    Examples
    --------
    >>> uniform(4)
    array([0.75, 0.5 , 0.25, 0.  ])
    """
    n_arms = as_int(n_arms, "uniform", "n_arms", low=2)
    return 1.0 - np.arange(1, n_arms + 1, dtype=float) / n_arms


def synthetic_p(n_arms: int, k: int, p: float) -> np.ndarray:
    r"""SYNTHETIC-p of Chen, Chen, Zhang, Zhou (2017), Section 3.

    .. math::

        \theta_i = \Big(1 - \frac Kn\Big) + \frac Kn\Big(\frac{K-i}{K}\Big)^p \ (i \le K), \qquad
        \theta_i = \Big(1 - \frac Kn\Big) - \Big(1 - \frac Kn\Big)\Big(\frac{i-K}{n-K}\Big)^p \ (i > K).

    The plain-text copy of the paper allocopt worked from lost the formula; it keeps "(1 - K/n ..." for both cases
    and states the properties this form has: SYNTHETIC-1 is UNIFORM (:func:`uniform`), :math:`p > 1` moves the arms
    toward the boundary :math:`1 - K/n` and :math:`p < 1` away from it, and the means span [0, 1]. It is the form of the
    :math:`\alpha`-Exponential instance of Jiang, Li, Qiao (2017) (:func:`alpha_exponential`). The experiments use
    :math:`p \in \{0.5, 1, 6\}`, :math:`n = 1000`, :math:`K \in \{100, 250, 500\}`, :math:`\epsilon = \delta = 0.01`.

    Examples
    --------
    >>> synthetic_p(4, 2, 1.0)
    array([0.75, 0.5 , 0.25, 0.  ])
    """
    n_arms, k = _arms_and_top(n_arms, k, "synthetic_p")
    p = as_positive_float(p, "synthetic_p", "p")
    return _power_profile(n_arms, k, p)


SHAHRAMPOUR_2017 = "Shahrampour and Tarokh (2017), Section IV.A"
CHEN_2017 = "Chen, Chen, Zhang, Zhou (2017), Section 3"
JIANG_2017 = "Jiang, Li, Qiao (2017), Section 5"

#: Numbers of arms allocopt uses for the instances of Jiang, Li, Qiao (2017), whose figures vary N without listing
#: the values.
BEST_K_ARM_COUNTS = (10, 100, 1000)


def _instance(name: str, source: str, theta: np.ndarray, k: int, family: str, **settings: float) -> ReferenceInstance:
    parameters = {"theta": tuple(float(value) for value in theta), "k": k, "family": family}
    parameters.update(settings)
    return ReferenceInstance(name=name, source=source, parameters=parameters)


def standard_instances(*, rng: RandomLike = 0) -> tuple[ReferenceInstance, ...]:
    """The instances of the papers' experiments, with their settings, as reference instances.

    * Shahrampour and Tarokh (2017): setups 1-6 with :math:`K = 50` Bernoulli arms and :math:`M \\in \\{2, 4\\}`
      (setup 5 drawn with ``rng``; the default ``rng=0`` makes it reproducible);
    * Chen, Chen, Zhang, Zhou (2017): TWOGROUP, UNIFORM, SYNTHETIC-0.5 and SYNTHETIC-6 with :math:`n = 1000`,
      :math:`K \\in \\{100, 250, 500\\}`, ``eps = delta = 0.01``. The paper only says rewards lie in [0, 1];
      UNIFORM has a mean 0, which Bernoulli arms exclude, so these carry a Gaussian family of variance 1/4 (the
      sub-Gaussian variance proxy of rewards in [0, 1]);
    * Jiang, Li, Qiao (2017): 1-sparse and 0.3-Exponential with :math:`K \\in \\{2, N/2\\}`, and the Best-1
      instances (1-sparse, lil-Exponential with :math:`\\alpha \\in \\{0.3, 0.6\\}`), Gaussian with variance 1/4,
      ``delta = 0.01``, for :data:`BEST_K_ARM_COUNTS` arms.
    """
    generator = as_generator(rng, "standard_instances")
    items = []
    for m in (2, 4):
        for setup in range(1, 7):
            theta = nsar_setup(setup, m, rng=generator)
            items.append(_instance(f"shahrampour2017-setup{setup}-M{m}", f"{SHAHRAMPOUR_2017}, setup {setup} "
                                   f"({NSAR_SETUPS[setup]}), K = 50, M = {m}", theta, m, "bernoulli"))
    profiles = [("twogroup", "TWOGROUP", lambda n, k: two_group(n, k)),
                ("uniform", "UNIFORM", lambda n, k: uniform(n)),
                ("synthetic-0.5", "SYNTHETIC-0.5", lambda n, k: synthetic_p(n, k, 0.5)),
                ("synthetic-6", "SYNTHETIC-6", lambda n, k: synthetic_p(n, k, 6.0))]
    for label, title, make in profiles:
        for k in (100, 250, 500):
            items.append(_instance(f"chen2017-{label}-K{k}", f"{CHEN_2017}, {title}, n = 1000, K = {k}",
                                   make(1000, k), k, "gaussian", variance=0.25, eps=0.01, delta=0.01))
    for n_arms in BEST_K_ARM_COUNTS:
        for k in (2, n_arms // 2):
            items.append(_instance(f"jiang2017-1-sparse-K{k}-N{n_arms}", f"{JIANG_2017}.1, 1-sparse, K = {k}",
                                   one_sparse(n_arms, k), k, "gaussian", variance=0.25, delta=0.01))
            items.append(_instance(f"jiang2017-0.3-exponential-K{k}-N{n_arms}",
                                   f"{JIANG_2017}.1, 0.3-Exponential, K = {k}", alpha_exponential(n_arms, k, 0.3), k,
                                   "gaussian", variance=0.25, delta=0.01))
        items.append(_instance(f"jiang2017-1-sparse-K1-N{n_arms}", f"{JIANG_2017}.2, 1-sparse (Best-1)",
                               one_sparse(n_arms, 1), 1, "gaussian", variance=0.25, delta=0.01))
        for alpha in (0.3, 0.6):
            items.append(_instance(f"jiang2017-lil-exponential-{alpha}-N{n_arms}",
                                   f"{JIANG_2017}.2, lil-Exponential alpha = {alpha} (Best-1)",
                                   lil_exponential(n_arms, alpha), 1, "gaussian", variance=0.25, delta=0.01))
    return tuple(items)
