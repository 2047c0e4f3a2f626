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

A block pull ("arm ``a``, ``c`` times") adds the *sequential* sum of its ``c`` rewards, taken left to right in
the order drawn (``numpy.cumsum(block)[-1]``): the value depends only on the stream, the position and ``c``,
whichever way it is computed. Blocks that fit in the buffered rewards are summed for many replications at once
(one ``cumsum`` over a zero-padded matrix, exact because adding zeros after the last reward changes nothing);
longer blocks draw their rewards, and the next buffer, in one call of the arm's generator.

A batch of R replications and K arms needs R K generators. Building each through ``SeedSequence`` costs about
30 microseconds, most of it in the seed sequence's hashing, which dominated the experiments with thousands of
replications of 50-1000 arms. :func:`stream_seed_states` computes the same seed words (numpy's SeedSequence
algorithm: the entropy pool hashed and mixed, then ``generate_state(4, uint64)``, the four words PCG64 is seeded
with) for every (replication, arm) at once with vectorised 32-bit arithmetic; each generator is then a PCG64
seeded with its precomputed words (about 5 microseconds). A test compares the words with ``SeedSequence`` on
many entropies, replications and arms, and the generators' draws with :func:`reward_generator`'s.
"""

from __future__ import annotations

import numpy as np

from ..._rng import RandomLike, root_entropy
from ..._validation import fail
from ...families import ExponentialFamily

__all__ = ["RewardStreams", "PolicyStreams", "draw_rewards", "stream_seed_states", "stream_entropy", "REWARD_BLOCK",
           "BUFFER_VALUES", "UNIFORM_BLOCK"]

REWARD_BLOCK = 256
"""Rewards drawn per refill of an arm's buffer (at most; see :data:`BUFFER_VALUES`)."""

BUFFER_VALUES = 2**23
"""Cap on the buffered rewards of one batch (rows x arms x block, 64 MiB): many arms or rows get shorter
buffers (never below 8 rewards), which changes speed, never values."""

UNIFORM_BLOCK = 256
"""Steps of policy uniforms drawn per refill."""

_HALF_ULP = 2.0 ** -54  # random() returns multiples of 2**-53 in [0, 1); adding half a step lands in (0, 1)


def stream_entropy(rng: RandomLike) -> int:
    """The ``entropy`` of the streams of the experiment that a runner (:func:`~allocopt.algorithms.identify`,
    :func:`~allocopt.algorithms.identify_fixed_budget`, ...) runs with ``rng=``: :class:`RewardStreams` and
    :class:`PolicyStreams` built from it read the rewards and policy uniforms of that experiment's replications.

    A nonnegative integer is its own entropy and a SeedSequence gives its entropy (both reproducible); a Generator
    contributes one draw (two calls give two experiments); None draws fresh entropy from the operating system.

    Examples
    --------
    >>> stream_entropy(7), stream_entropy(np.random.SeedSequence(7))
    (7, 7)
    >>> uniforms = PolicyStreams(stream_entropy(7), [0, 1], per_step=3).next(np.arange(2))  # replications 0, 1
    >>> uniforms.shape, bool(((0 < uniforms) & (uniforms < 1)).all())
    ((2, 3), True)
    """
    return root_entropy(rng, "stream_entropy")


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


_MASK32 = 0xFFFFFFFF
# the constants of numpy's SeedSequence (O'Neill's seed_seq hash, numpy/random/bit_generator.pyx)
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R, _XSHIFT = 0xCA01F9DD, 0x4973F715, np.uint32(16)
_POOL_SIZE = 4


def _uint32_words(value: int) -> list[int]:
    """A non-negative integer as 32-bit words, least significant first (at least one word), as SeedSequence
    reads an integer entropy or spawn-key entry."""
    words = [value & _MASK32]
    value >>= 32
    while value:
        words.append(value & _MASK32)
        value >>= 32
    return words


def stream_seed_states(entropy: int, replications, n_arms: int) -> np.ndarray:
    r"""The words ``SeedSequence(entropy, spawn_key=(i, 0, a)).generate_state(4, numpy.uint64)`` for every
    replication ``i`` of ``replications`` and arm ``a < n_arms``, computed together: shape (R, K, 4), uint64.

    The seed sequence's algorithm, vectorised over the streams: the assembled entropy (the words of ``entropy``
    padded to the pool size, then the spawn key ``i, 0, a``, one word each) is hashed into a pool of four 32-bit
    words and mixed, and the pool is hashed into eight 32-bit output words read as four little-endian uint64.
    All arithmetic is on uint32 arrays, wrapping modulo :math:`2^{32}` as the reference does. Replication
    indices must be below :math:`2^{32}` (one word each).

    Examples
    --------
    >>> words = stream_seed_states(2017, [0, 5], 3)
    >>> reference = np.random.SeedSequence(2017, spawn_key=(5, 0, 2)).generate_state(4, np.uint64)
    >>> words.shape, bool(np.array_equal(words[1, 2], reference))
    ((2, 3, 4), True)
    """
    replications = np.asarray(replications, dtype=np.int64).reshape(-1)
    if replications.size and (replications.min() < 0 or replications.max() > _MASK32):
        fail("stream_seed_states", "replications", "indices in 0..2**32 - 1 (one 32-bit word each)", replications)
    n_rows = replications.shape[0]
    run = _uint32_words(int(entropy))
    run += [0] * max(0, _POOL_SIZE - len(run))
    shape = (n_rows, int(n_arms))
    assembled = [np.full(shape, word, dtype=np.uint32) for word in run]
    assembled.append(np.broadcast_to(replications.astype(np.uint32)[:, None], shape))
    assembled.append(np.zeros(shape, dtype=np.uint32))
    assembled.append(np.broadcast_to(np.arange(n_arms, dtype=np.uint32)[None, :], shape))
    hash_const = _INIT_A

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal hash_const
        value = value ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_A) & _MASK32
        value = value * np.uint32(hash_const)
        return value ^ (value >> _XSHIFT)

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        result = np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y
        return result ^ (result >> _XSHIFT)

    pool = [hashmix(assembled[index]) for index in range(_POOL_SIZE)]
    for source in range(_POOL_SIZE):
        for target in range(_POOL_SIZE):
            if source != target:
                pool[target] = mix(pool[target], hashmix(pool[source]))
    for source in range(_POOL_SIZE, len(assembled)):
        for target in range(_POOL_SIZE):
            pool[target] = mix(pool[target], hashmix(assembled[source]))
    out = np.empty(shape + (8,), dtype=np.uint32)
    hash_const = _INIT_B
    for index in range(8):
        value = pool[index % _POOL_SIZE] ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_B) & _MASK32
        value = value * np.uint32(hash_const)
        out[..., index] = value ^ (value >> _XSHIFT)
    return out.view("<u8")


class _PresetSeed(np.random.bit_generator.ISeedSequence):
    """A seed sequence whose state words are already computed (by :func:`stream_seed_states`)."""

    __slots__ = ("words",)

    def __init__(self, words: np.ndarray):
        self.words = words

    def generate_state(self, n_words, dtype=np.uint32):  # PCG64 asks for 4 uint64 words
        if n_words != 4 or np.dtype(dtype) != np.uint64:
            raise ValueError("_PresetSeed holds the 4 uint64 words of a PCG64 seed")
        return self.words


def stream_generators(entropy: int, replications, n_arms: int) -> list[list[np.random.Generator]]:
    """The reward generators of ``replications`` x ``n_arms`` (each equal to :func:`reward_generator`'s)."""
    replications = np.asarray(replications, dtype=np.int64).reshape(-1)
    if replications.size and (replications.min() < 0 or replications.max() > _MASK32):
        return [[reward_generator(entropy, index, arm) for arm in range(n_arms)] for index in replications]
    words = stream_seed_states(entropy, replications, n_arms)
    # numpy seeds a bit generator from any ISeedSequence (its stubs name only SeedSequence)
    return [[np.random.Generator(np.random.PCG64(_PresetSeed(words[row, arm])))  # type: ignore[arg-type]
             for arm in range(n_arms)] for row in range(replications.shape[0])]


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
        self.block = min(int(block), max(8, BUFFER_VALUES // max(1, n_rows * n_arms)))
        self.generators = stream_generators(self.entropy, self.replications, n_arms)
        self.buffer = np.empty((n_rows, n_arms, self.block))
        self.position = np.full((n_rows, n_arms), self.block, dtype=np.int64)

    def _refill(self, row: int, arm: int) -> None:
        self.buffer[row, arm] = draw_rewards(self.family, self.theta[arm], self.dispersion[arm], self.block,
                                             self.generators[row][arm])
        self.position[row, arm] = 0

    def next(self, rows: np.ndarray, arms: np.ndarray) -> np.ndarray:
        """The next reward of arm ``arms[r]`` in row ``rows[r]`` ((row, arm) pairs distinct), advancing its stream."""
        # flat indices into the C-ordered (R, K) positions and (R, K, block) buffer: one-dimensional takes are
        # several times cheaper than numpy's multi-array fancy indexing
        stream = rows * self.position.shape[1] + arms
        positions = self.position.reshape(-1)
        position = positions.take(stream)
        exhausted = np.flatnonzero(position >= self.block)
        for index in exhausted:
            self._refill(int(rows[index]), int(arms[index]))
        if exhausted.size:
            position = positions.take(stream)
        rewards = self.buffer.reshape(-1).take(stream * self.block + position)
        positions.put(stream, position + 1)
        return rewards

    def next_sums(self, rows: np.ndarray, arm: int, counts: np.ndarray) -> np.ndarray:
        """The sum of the next ``counts[r]`` rewards of ``arm`` in row ``rows[r]`` (rows distinct, counts >= 1).

        The sum is sequential, left to right in the order drawn (``numpy.cumsum(block)[-1]``; a single reward is
        returned as drawn), so the value depends only on the row's stream, its position and the count. Blocks
        up to the buffer's length are summed together (a row whose buffer runs short first moves its unread
        rewards to the front and draws the rest behind them); each longer block costs one generator call.
        """
        rows = np.asarray(rows, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        out = np.empty(rows.shape[0])
        position = self.position[rows, arm]
        fits = counts <= self.block - position
        short = np.flatnonzero(~fits & (counts <= self.block))
        for index in short:  # move the unread rewards to the front and draw the rest of the buffer behind them
            self._top_up(int(rows[index]), arm)
        if short.size:
            position = self.position[rows, arm]
            fits = counts <= self.block - position
        if fits.any():
            local = np.flatnonzero(fits)
            fit_rows, fit_counts, start = rows[local], counts[local], position[local]
            offsets = np.arange(int(fit_counts.max()))
            inside = offsets[None, :] < fit_counts[:, None]
            index = np.minimum(start[:, None] + offsets[None, :], self.block - 1)
            values = np.where(inside, self.buffer[fit_rows[:, None], arm, index], 0.0)
            out[local] = np.cumsum(values, axis=1)[np.arange(local.size), fit_counts - 1]
            self.position[fit_rows, arm] = start + fit_counts
        for index in np.flatnonzero(~fits):
            out[index] = np.cumsum(self.next_block(int(rows[index]), arm, int(counts[index])))[-1]
        return out

    def _top_up(self, row: int, arm: int) -> None:
        start = int(self.position[row, arm])
        unread = self.block - start
        self.buffer[row, arm, :unread] = self.buffer[row, arm, start:].copy()
        self.buffer[row, arm, unread:] = draw_rewards(self.family, self.theta[arm], self.dispersion[arm],
                                                      self.block - unread, self.generators[row][arm])
        self.position[row, arm] = 0

    def next_block(self, row: int, arm: int, count: int) -> np.ndarray:
        """The next ``count`` rewards of one arm of one row, in order (one generator call when the buffer runs
        short: the missing rewards and the next buffer are drawn together)."""
        start = int(self.position[row, arm])
        available = self.block - start
        if count <= available:
            self.position[row, arm] = start + count
            return self.buffer[row, arm, start:start + count].copy()
        missing = count - available
        fresh = draw_rewards(self.family, self.theta[arm], self.dispersion[arm], missing + self.block,
                             self.generators[row][arm])
        out = np.concatenate([self.buffer[row, arm, start:], fresh[:missing]])
        self.buffer[row, arm] = fresh[missing:]
        self.position[row, arm] = 0
        return out


class PolicyStreams:
    """Block-buffered policy uniforms of a batch of replications; every active row consumes ``per_step``
    uniforms per step, so all rows share one step offset.

    The buffer holds ``block`` steps, step-major (shape (block, R, per_step)), so that one step of the active
    rows is read from one contiguous slab. A refill draws ``block * per_step`` uniforms from the generator of
    every row asked for, in order: the numbers a row reads do not depend on the block size. Rows that are not
    asked for at a refill have finished (the engine's set of active rows only shrinks) and are not refilled.
    """

    def __init__(self, entropy: int, replications, per_step: int, block: int = UNIFORM_BLOCK):
        self.replications = np.asarray(replications, dtype=np.int64)
        self.per_step = int(per_step)
        self.block = int(block)
        self.generators = [policy_generator(entropy, index) for index in self.replications]
        self.buffer = np.empty((self.block, self.replications.shape[0], self.per_step))
        self.step = self.block

    def next(self, rows: np.ndarray) -> np.ndarray:
        """Uniforms in (0, 1) for one step of ``rows``: shape (len(rows), per_step)."""
        if self.per_step == 0:
            return np.empty((rows.shape[0], 0))
        if self.step >= self.block:
            for row in rows.tolist():
                self.buffer[:, row, :] = (self.generators[row].random(self.block * self.per_step)
                                          + _HALF_ULP).reshape(self.block, self.per_step)
            self.step = 0
        out = self.buffer[self.step, rows]
        self.step += 1
        return out
