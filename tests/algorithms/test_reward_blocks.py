"""Block sums of the reward streams: the sequential sum of the stream's next rewards, whatever the buffer size
or the grouping of rows. Expected values come from the streams' definition (``SeedSequence(entropy,
spawn_key=(i, 0, a))``, one standard draw at a time) and ``math``-free left-to-right addition in the test."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt.algorithms.engine.rewards import (REWARD_BLOCK, RewardStreams, reward_generator, stream_entropy,
                                       stream_generators, stream_seed_states)
from allocopt.exceptions import AllocoptError
from allocopt.families import get_family


def _stream(entropy, replication, arm, count, mean, variance):
    generator = reward_generator(entropy, replication, arm)
    return np.array([mean + np.sqrt(variance) * generator.standard_normal() for _ in range(count)])


def _left_to_right(values):
    total = 0.0
    for value in values:
        total = total + value
    return total


@pytest.mark.parametrize("block", [3, 8, 128, 1000])
def test_block_sums_are_sequential_sums_of_each_rows_own_stream(block):
    family = get_family("gaussian", variance=0.5)
    theta, variance = np.array([0.3, -1.2]), np.array([0.5, 0.5])
    replications = [4, 9, 2]
    streams = RewardStreams(family, theta, variance, 17, replications, block=block)
    requests = [np.array([1, 1, 1]), np.array([5, 1, 40]), np.array([7, 300, 2]), np.array([1, 2, 3])]
    consumed = np.zeros((3, 2), dtype=np.int64)
    for counts in requests:
        for arm in (0, 1):
            sums = streams.next_sums(np.arange(3), arm, counts)
            for row, replication in enumerate(replications):
                start, count = consumed[row, arm], counts[row]
                rewards = _stream(17, replication, arm, start + count, theta[arm], variance[arm])[start:]
                assert sums[row] == _left_to_right(rewards)  # bit-identical, not approximately equal
            consumed[:, arm] += counts


def test_a_subset_of_rows_reads_only_its_own_streams():
    family = get_family("bernoulli")
    theta = np.array([0.4, 0.6, 0.5])
    together = RewardStreams(family, theta, np.ones(3), 5, [0, 1, 2, 3])
    alone = RewardStreams(family, theta, np.ones(3), 5, [2])
    first = together.next_sums(np.array([0, 2, 3]), 1, np.array([3, 50, 200]))
    second = together.next_sums(np.array([2]), 1, np.array([9]))
    assert first[1] == alone.next_sums(np.array([0]), 1, np.array([50]))[0]
    assert second[0] == alone.next_sums(np.array([0]), 1, np.array([9]))[0]


def test_many_arms_get_shorter_buffers_and_the_same_values():
    family = get_family("gaussian", variance=1.0)
    theta = np.linspace(0.0, 1.0, 300)
    wide = RewardStreams(family, theta, np.ones(300), 3, range(200))
    narrow = RewardStreams(family, theta, np.ones(300), 3, [150], block=128)
    assert wide.block < REWARD_BLOCK
    counts = np.full(200, 37)
    assert wide.next_sums(np.arange(200), 299, counts)[150] == narrow.next_sums(np.array([0]), 299,
                                                                                np.array([37]))[0]


@pytest.mark.parametrize("entropy", [0, 5, 2017, 2**63 - 25, 2**127 + 3, 2**200 + 11])
def test_stream_seed_states_are_the_seed_sequences_words(entropy):
    # the reference is numpy's own SeedSequence, one stream at a time
    replications = [0, 1, 7, 4000, 123456, 2**32 - 1]
    words = stream_seed_states(entropy, replications, 6)
    for row, replication in enumerate(replications):
        for arm in range(6):
            reference = np.random.SeedSequence(entropy, spawn_key=(replication, 0, arm)).generate_state(4, np.uint64)
            assert np.array_equal(words[row, arm], reference)


def test_stream_generators_draw_what_reward_generator_draws():
    generators = stream_generators(2017, [3, 0, 2**32 + 1], 4)  # the last index takes the one-by-one path
    for row, replication in enumerate([3, 0, 2**32 + 1]):
        for arm in range(4):
            expected = reward_generator(2017, replication, arm)
            assert np.array_equal(generators[row][arm].random(300), expected.random(300))
            assert np.array_equal(generators[row][arm].standard_normal(300), expected.standard_normal(300))


def test_stream_seed_states_refuse_indices_beyond_one_word():
    with pytest.raises(AllocoptError, match="'replications' parameter of stream_seed_states"):
        stream_seed_states(1, [2**32], 2)


def test_stream_entropy_follows_the_runners_rule_and_names_a_bad_seed():
    # a nonnegative integer is its own entropy and a SeedSequence gives its entropy, as the runners read rng=
    # (the experiment of examples/adaptive_topk_experiment.py reads the engine's streams through it: a test compares
    # those records with the engine's, tests/algorithms/test_divide_budget_shared.py)
    assert stream_entropy(7) == 7
    assert stream_entropy(np.random.SeedSequence(2**40 + 3)) == 2**40 + 3
    first, second = np.random.default_rng(5), np.random.default_rng(5)
    assert stream_entropy(first) == int(second.integers(0, 2**63 - 1))  # a Generator contributes one draw
    with pytest.raises(AllocoptError, match="'rng' parameter of stream_entropy"):
        stream_entropy(-1)
