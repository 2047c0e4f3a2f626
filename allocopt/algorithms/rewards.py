r"""Common random numbers: one reward stream per (replication, arm) and one policy stream per replication.

* Replication ``i`` reads the rewards of arm ``a`` from ``SeedSequence(entropy, spawn_key=(i, 0, a))``: the
  n-th pull of arm ``a`` in replication ``i`` returns the same reward under every sampling rule, batching,
  chunking and joblib backend, so comparisons between rules are paired.
* Its policy randomness (posterior samples, coins, tie-breaks) comes from ``SeedSequence(entropy,
  spawn_key=(i, 1))`` as uniforms in (0, 1); each step of a rule consumes a fixed number of them.

Rewards are drawn in blocks. Numpy's generators produce the same sequence whether the draws are made one at
a time or in blocks of any size (each draw consumes the bit generator sequentially), so the block size changes
speed, never values. Rewards are built from standard draws: gaussian ``theta + sigma * standard_normal``,
bernoulli ``random < theta``, poisson ``poisson(theta)``, exponential ``theta * standard_exponential``, gamma
of shape alpha ``(theta / alpha) * standard_gamma(alpha)``.
"""

from __future__ import annotations

import numpy as np

from ..families import ExponentialFamily

__all__ = ["RewardStreams", "PolicyStreams", "draw_rewards", "REWARD_BLOCK", "UNIFORM_BLOCK"]

REWARD_BLOCK = 128
"""Rewards drawn per refill of an arm's buffer."""

UNIFORM_BLOCK = 256
"""Steps of policy uniforms drawn per refill."""

_HALF_ULP = 2.0 ** -54  # random() returns multiples of 2**-53 in [0, 1); adding half a step lands in (0, 1)


def draw_rewards(family: ExponentialFamily, mean: float, dispersion: float, size: int,
                 generator: np.random.Generator) -> np.ndarray:
    """``size`` rewards of one arm from its generator (the standard draw of each family, see the module)."""
    name = family.name
    if name == "gaussian":
        return mean + np.sqrt(dispersion) * generator.standard_normal(size)
    if name == "bernoulli":
        return (generator.random(size) < mean).astype(float)
    if name == "poisson":
        return generator.poisson(mean, size).astype(float)
    if name == "exponential":
        return mean * generator.standard_exponential(size)
    if name == "gamma":  # shape alpha = 1/dispersion, scale mean/alpha
        return (mean * dispersion) * generator.standard_gamma(1.0 / dispersion, size)
    raise NotImplementedError(f"no reward sampler for the {name} family")


def reward_generator(entropy: int, replication: int, arm: int) -> np.random.Generator:
    """The reward stream of ``arm`` in ``replication``: ``SeedSequence(entropy, spawn_key=(replication, 0, arm))``."""
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(replication), 0, int(arm))))


def policy_generator(entropy: int, replication: int) -> np.random.Generator:
    """The policy stream of ``replication``: ``SeedSequence(entropy, spawn_key=(replication, 1))``."""
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(replication), 1)))


class RewardStreams:
    """Block-buffered rewards of a batch of replications.

    Parameters
    ----------
    family : ExponentialFamily
    theta, dispersion : ndarray, shape (K,)
        True means and per-arm dispersion.
    entropy : int
    replications : array_like of int, shape (R,)
        Global replication indices; row ``r`` of every call refers to ``replications[r]``.
    block : int
        Rewards per refill.
    """

    def __init__(self, family: ExponentialFamily, theta: np.ndarray, dispersion: np.ndarray, entropy: int,
                 replications, block: int = REWARD_BLOCK):
        self.family = family
        self.theta = np.asarray(theta, dtype=float)
        self.dispersion = np.asarray(dispersion, dtype=float)
        self.entropy = int(entropy)
        self.replications = np.asarray(replications, dtype=np.int64)
        n_rows, n_arms = self.replications.shape[0], self.theta.shape[0]
        self.block = int(block)
        self.generators = [[reward_generator(self.entropy, index, arm) for arm in range(n_arms)]
                           for index in self.replications]
        self.buffer = np.empty((n_rows, n_arms, self.block))
        self.position = np.full((n_rows, n_arms), self.block, dtype=np.int64)

    def _refill(self, row: int, arm: int) -> None:
        self.buffer[row, arm] = draw_rewards(self.family, self.theta[arm], self.dispersion[arm], self.block,
                                             self.generators[row][arm])
        self.position[row, arm] = 0

    def next(self, rows: np.ndarray, arms: np.ndarray) -> np.ndarray:
        """The next reward of arm ``arms[r]`` in row ``rows[r]`` (rows distinct), advancing its stream."""
        position = self.position[rows, arms]
        exhausted = np.flatnonzero(position >= self.block)
        for index in exhausted:
            self._refill(int(rows[index]), int(arms[index]))
        if exhausted.size:
            position = self.position[rows, arms]
        rewards = self.buffer[rows, arms, position]
        self.position[rows, arms] = position + 1
        return rewards

    def next_sums(self, rows: np.ndarray, arm: int, counts: np.ndarray) -> np.ndarray:
        """The sum of the next ``counts[r]`` rewards of ``arm`` in row ``rows[r]`` (rows distinct, counts >= 1).

        A single reward is returned as drawn; a block of several is summed with ``numpy.sum`` over the block
        in the order drawn, so the value depends only on the row's stream and the count.
        """
        rows = np.asarray(rows, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        out = np.empty(rows.shape[0])
        single = counts == 1
        if single.any():
            out[single] = self.next(rows[single], np.full(int(single.sum()), arm))
        for index in np.flatnonzero(~single):
            out[index] = self.next_block(int(rows[index]), arm, int(counts[index])).sum()
        return out

    def next_block(self, row: int, arm: int, count: int) -> np.ndarray:
        """The next ``count`` rewards of one arm of one row, in order."""
        out = np.empty(count)
        filled = 0
        while filled < count:
            if self.position[row, arm] >= self.block:
                self._refill(row, arm)
            start = self.position[row, arm]
            take = min(count - filled, self.block - start)
            out[filled:filled + take] = self.buffer[row, arm, start:start + take]
            self.position[row, arm] = start + take
            filled += take
        return out


class PolicyStreams:
    """Block-buffered policy uniforms of a batch of replications; every active row consumes ``per_step``
    uniforms per step, so all rows share one column offset."""

    def __init__(self, entropy: int, replications, per_step: int, block: int = UNIFORM_BLOCK):
        self.replications = np.asarray(replications, dtype=np.int64)
        self.per_step = int(per_step)
        self.width = max(1, self.per_step) * int(block)
        self.generators = [policy_generator(entropy, index) for index in self.replications]
        self.buffer = np.empty((self.replications.shape[0], self.width))
        self.offset = self.width

    def next(self, rows: np.ndarray) -> np.ndarray:
        """Uniforms in (0, 1) for one step of ``rows``: shape (len(rows), per_step)."""
        if self.per_step == 0:
            return np.empty((rows.shape[0], 0))
        if self.offset + self.per_step > self.width:
            # every row still active has consumed the same number of uniforms: refill the remainder in order
            keep = self.width - self.offset
            tail = self.buffer[:, self.offset:].copy()
            for row, generator in enumerate(self.generators):
                self.buffer[row, :keep] = tail[row]
                self.buffer[row, keep:] = generator.random(self.width - keep) + _HALF_ULP
            self.offset = 0
        out = self.buffer[rows, self.offset:self.offset + self.per_step]
        self.offset += self.per_step
        return out
