r"""Per-arm statistics of a sequential run: counts, sums, means, posterior samples and the empirical top-k.

Every function works on one run (arrays of shape ``(K,)``) and on a batch of runs (shape ``(R, K)``) with the
same code: the arm axis is the last one.

Posteriors (Wang, Yang, You 2022, Algorithm 2; independent conjugate priors, one per arm)
    ==============  ===============================  =====================================================
    family          prior                            posterior of the mean after :math:`N_a` pulls, sum S_a
    ==============  ===============================  =====================================================
    gaussian        flat (improper) on the mean      :math:`\mathcal N(S_a/N_a,\ \sigma_a^2/N_a)`
    bernoulli       Beta(1, 1) (uniform)             :math:`\mathrm{Beta}(1 + S_a,\ 1 + N_a - S_a)`
    poisson         Gamma(1, 0) on the mean (flat)   :math:`\mathrm{Gamma}(\text{shape } 1 + S_a,\ \text{rate } N_a)`
    exponential     Gamma(1, 0) on the rate (flat)   rate :math:`\lambda_a \sim \mathrm{Gamma}(1 + N_a,\ S_a)`,
                                                     mean :math:`1/\lambda_a`
    gamma           Gamma(1, 0) on the rate (flat)   rate :math:`\beta_a \sim \mathrm{Gamma}(1 + \alpha N_a,\ S_a)`,
                                                     mean :math:`\alpha/\beta_a` (known shape :math:`\alpha`; the
                                                     exponential row at :math:`\alpha = 1`)
    ==============  ===============================  =====================================================

    The flat priors are proper after one pull of every arm, which the engine makes before any sampling rule
    runs.

Sampling by inversion
    A posterior sample is the posterior quantile function at a uniform :math:`u \in (0, 1)`:
    ``mean + sqrt(sigma^2/N) * ndtri(u)``, ``betaincinv(a, b, u)``, ``gammaincinv(a, u)/rate`` (scipy.special).
    This is exact in distribution, uses exactly one uniform per arm and per step whatever the counts, and is
    elementwise, so a batch of runs and a single run consume their random streams identically and produce
    bit-identical samples. Measured on one core: ``ndtri`` 13 ns per arm, ``betaincinv`` 640 ns,
    ``gammaincinv`` 770 ns (numpy's own beta and gamma generators take 36 and 62 ns but consume a variable
    number of random numbers, which would break the scalar-versus-batched equality).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..._numba import kernel
from ...families import ExponentialFamily
from ..._numba import compiled_enabled

__all__ = ["empirical_means", "top_k_order", "top_k_order_numpy", "posterior_sample", "posterior_parameters",
           "domain_clip"]

_TINY = np.finfo(float).tiny
COMPILED_TOP_K_LIMIT = 64
"""The largest k whose batched top-k runs the compiled insertion top-k (O(K k); numpy's argsort above)."""


def empirical_means(counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """``sums / counts`` (every count is at least one once the engine has initialised a run)."""
    return sums / counts


def top_k_order(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the ``k`` largest entries along the last axis and of the others, each in increasing arm order.

    A batch of rows (shape (R, K), float64) with ``k <= COMPILED_TOP_K_LIMIT`` goes through the compiled loop's
    insertion top-k (:func:`allocopt.algorithms.engine.loop.split_rows`) when the compiled kernels are enabled;
    everything else through :func:`top_k_order_numpy`, its specification (the two agree exactly: only
    comparisons).

    Examples
    --------
    >>> top, bottom = top_k_order(np.array([[0.1, 0.9, 0.5, 0.7], [0.5, 0.5, 0.5, 0.2]]), 2)
    >>> top.tolist(), bottom.tolist()
    ([[1, 3], [0, 1]], [[0, 2], [2, 3]])
    """
    if (values.ndim == 2 and values.dtype == np.float64 and 0 < k <= COMPILED_TOP_K_LIMIT
            and 0 < k < values.shape[1] and values.shape[0] > 0 and compiled_enabled()):
        from .loop import prepare_kernels, split_rows

        prepare_kernels()
        top = np.empty((values.shape[0], k), dtype=np.int64)
        bottom = np.empty((values.shape[0], values.shape[1] - k), dtype=np.int64)
        split_rows(np.ascontiguousarray(values), k, top, bottom)
        return top, bottom
    return top_k_order_numpy(values, k)


def top_k_order_numpy(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top_k_order` in numpy (the twin of the compiled kernel): the ``k`` largest entries along the last
    axis and the others, each in increasing arm order.

    The *set* of the k largest entries is unique unless entries tie across the top-k boundary; then the
    arms with the smaller indices go to the top (the order of a stable sort). A tie across the boundary makes
    the Chernoff statistic zero (the tied pair has cost zero), so no run stops while it lasts.

    The threshold is found with ``numpy.sort`` (vectorised; about ten times faster than ``argsort`` on rows
    of 20 arms) and the sets by comparison; rows with a boundary tie take the stable ``argsort``.

    Examples
    --------
    >>> top, bottom = top_k_order_numpy(np.array([0.1, 0.9, 0.5, 0.7]), 2)
    >>> top.tolist(), bottom.tolist()
    ([1, 3], [0, 2])
    >>> [part.tolist() for part in top_k_order_numpy(np.array([0.5, 0.9, 0.5]), 2)]
    [[0, 1], [2]]
    """
    n_arms = values.shape[-1]
    threshold = np.sort(values, axis=-1)[..., n_arms - k]
    in_top = values >= threshold[..., None]
    arms = np.broadcast_to(np.arange(n_arms), values.shape)
    tied = in_top.sum(axis=-1) != k
    if not np.any(tied):
        return (arms[in_top].reshape(values.shape[:-1] + (k,)),
                arms[~in_top].reshape(values.shape[:-1] + (n_arms - k,)))
    order = np.argsort(-values, axis=-1, kind="stable")
    if values.ndim == 1:
        return np.sort(order[:k]), np.sort(order[k:])
    in_top = in_top.copy()
    rows = np.flatnonzero(tied)
    in_top[rows] = False
    in_top[rows[:, None], order[rows, :k]] = True
    return (arms[in_top].reshape(values.shape[:-1] + (k,)),
            arms[~in_top].reshape(values.shape[:-1] + (n_arms - k,)))


def domain_clip(family: ExponentialFamily, values: np.ndarray) -> np.ndarray:
    """Move values onto the open mean domain of ``family`` (posterior quantiles can round to its ends)."""
    low, high = family.lower, family.upper
    if np.isfinite(low) or np.isfinite(high):
        low_value = np.nextafter(low, np.inf) if np.isfinite(low) else -np.inf
        high_value = np.nextafter(high, -np.inf) if np.isfinite(high) else np.inf
        return np.clip(values, max(low_value, _TINY) if low == 0 else low_value, high_value)
    return values


def posterior_parameters(family: ExponentialFamily, dispersion: np.ndarray, counts: np.ndarray,
                         sums: np.ndarray) -> dict[str, np.ndarray]:
    """The posterior's parameters (see the module table): ``loc``/``scale`` (gaussian), ``a``/``b``
    (bernoulli), ``shape``/``rate`` (poisson: of the mean; exponential and gamma: of the rate)."""
    name = family.name
    if name == "gaussian":
        return {"loc": sums / counts, "scale": np.sqrt(dispersion / counts)}
    if name == "bernoulli":
        return {"a": 1.0 + sums, "b": 1.0 + counts - sums}
    if name == "poisson":
        return {"shape": 1.0 + sums, "rate": counts.astype(float)}
    if name in ("exponential", "gamma"):
        # rewards Gamma(alpha, rate beta) with alpha = 1/dispersion (1 for exponential arms): the likelihood of
        # the rate is beta^(alpha N) exp(-beta S)
        return {"shape": 1.0 + counts / dispersion, "rate": sums}
    raise NotImplementedError(f"no posterior sampler for the {name} family")


def posterior_sample(family: ExponentialFamily, dispersion: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                     uniforms: np.ndarray) -> np.ndarray:
    r"""One posterior sample of every arm's mean, by inversion at ``uniforms`` (same shape as ``counts``).

    Parameters
    ----------
    family : ExponentialFamily
    dispersion : ndarray, shape (K,)
        Per-arm dispersion (the Gaussian variance; 1 for the other families).
    counts, sums : ndarray, shape (K,) or (R, K)
        Pulls and reward sums (every count >= 1).
    uniforms : ndarray, same shape
        Uniforms in the open interval (0, 1).

    Returns
    -------
    ndarray
        :math:`\tilde\theta`, inside the family's open mean domain.

    Examples
    --------
    >>> from allocopt.families import Gaussian
    >>> posterior_sample(Gaussian(0.25), np.full(2, 0.25), np.array([4, 1]), np.array([2.0, 0.0]),
    ...                  np.array([0.5, 0.8413447460685429])).round(6)
    array([0.5, 0.5])
    """
    parameters = posterior_parameters(family, dispersion, counts, sums)
    name = family.name
    if name == "gaussian":
        return parameters["loc"] + parameters["scale"] * special.ndtri(uniforms)
    if name == "bernoulli":
        sample = special.betaincinv(parameters["a"], parameters["b"], uniforms)
    elif name == "poisson":
        sample = special.gammaincinv(parameters["shape"], uniforms) / parameters["rate"]
    else:
        rate = special.gammaincinv(parameters["shape"], uniforms)
        with np.errstate(divide="ignore"):
            sample = parameters["rate"] / (dispersion * rate)  # alpha / beta with beta = rate / S
    return domain_clip(family, sample)


POSTERIOR_GAUSSIAN, POSTERIOR_BETA, POSTERIOR_POISSON, POSTERIOR_RATE = range(4)
_POSTERIOR_OF = {"gaussian": POSTERIOR_GAUSSIAN, "bernoulli": POSTERIOR_BETA, "poisson": POSTERIOR_POISSON,
                 "exponential": POSTERIOR_RATE, "gamma": POSTERIOR_RATE}


def posterior_kind(family: ExponentialFamily) -> tuple[int, float, float] | None:
    """The posterior's number for :func:`posterior_quantile` (by the family's name, as :func:`posterior_parameters`
    chooses) and the clip bounds of :func:`domain_clip`, or None for a family without a posterior sampler."""
    code = _POSTERIOR_OF.get(family.name)
    if code is None:
        return None
    low, high = family.lower, family.upper
    low_value = float(np.nextafter(low, np.inf)) if np.isfinite(low) else -np.inf
    high_value = float(np.nextafter(high, -np.inf)) if np.isfinite(high) else np.inf
    return code, (max(low_value, _TINY) if low == 0 else low_value), high_value


@kernel
def posterior_quantile(code, count, total, dispersion, uniform, special, low, high):
    """One posterior sample of an arm by inversion at ``uniform``: :func:`posterior_sample` for one arm (the same
    operations and scipy.special's functions), clipped to ``[low, high]`` as :func:`domain_clip` does."""
    if code == POSTERIOR_GAUSSIAN:
        return total / count + np.sqrt(dispersion / count) * special.ndtri(uniform, 0)
    if code == POSTERIOR_BETA:
        sample = special.betaincinv(1.0 + total, 1.0 + count - total, uniform, 0)
    elif code == POSTERIOR_POISSON:
        sample = special.gammaincinv(1.0 + total, uniform, 0) / count
    else:
        sample = total / (dispersion * special.gammaincinv(1.0 + count / dispersion, uniform, 0))
    if sample < low:
        return low
    if sample > high:
        return high
    return sample


def sequential_sum(values: np.ndarray) -> np.ndarray:
    """Sums along the last axis, left to right (``numpy.cumsum(...)[..., -1]``; 0 for no term): the order a compiled
    kernel adds in, so that a specification and its kernel round alike (numpy's ``sum`` adds pairwise).

    Examples
    --------
    >>> sequential_sum(np.array([[1.0, 2.0, 3.0], [0.1, 0.2, 0.3]])).tolist()
    [6.0, 0.6000000000000001]
    """
    values = np.asarray(values, dtype=float)
    if values.shape[-1] == 0:
        return np.zeros(values.shape[:-1])
    return np.cumsum(values, axis=-1)[..., -1]
