"""Randomness conventions (allocopt._rng)."""

import numpy as np
import pytest

from allocopt import InvalidArgumentError
from allocopt._rng import root_entropy


def test_root_entropy_of_a_seed_sequence_with_sequence_entropy_reproduces_its_state():
    # SeedSequence reads an integer entropy as little-endian 32-bit words, so the combined integer must give
    # the same state as the word list itself
    words = [1, 2, 3]
    entropy = root_entropy(np.random.SeedSequence(words))
    assert entropy == 1 + (2 << 32) + (3 << 64)
    assert np.array_equal(np.random.SeedSequence(entropy).generate_state(8),
                          np.random.SeedSequence(words).generate_state(8))


def test_root_entropy_of_integers_and_generators():
    assert root_entropy(7) == 7 and root_entropy(np.random.SeedSequence(11)) == 11
    first, second = root_entropy(np.random.default_rng(0)), root_entropy(np.random.default_rng(0))
    assert first == second  # a Generator contributes one draw: same generator state, same entropy


@pytest.mark.parametrize("bad", [-1, 1.5, "seed", True])
def test_root_entropy_refuses_other_values(bad):
    with pytest.raises(InvalidArgumentError, match="'rng' parameter"):
        root_entropy(bad)
