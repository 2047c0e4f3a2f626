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


def test_random_candidate_is_uniform_over_the_tied_entries():
    # Each of the c candidates of a row is the floor(u c)-th for u in [j/c, (j+1)/c): with u on a fine grid
    # every candidate gets the same share, and non-candidates never appear.
    from allocopt._rng import random_candidate

    candidates = np.array([True, False, True, True, False, True])
    uniforms = (np.arange(4000) + 0.5) / 4000
    picks = random_candidate(np.broadcast_to(candidates, (4000, 6)), uniforms)
    counts = np.bincount(picks, minlength=6)
    assert counts.tolist() == [1000, 0, 1000, 1000, 0, 1000]
    # one candidate: always it; none: index 0; several leading axes broadcast
    assert random_candidate(np.array([[False, True, False]]), np.array([0.999])).tolist() == [1]
    assert random_candidate(np.zeros((2, 3), dtype=bool), np.array([0.3, 0.7])).tolist() == [0, 0]
    assert random_candidate(np.ones((2, 2, 3), dtype=bool), np.full((2, 2), 0.5)).shape == (2, 2)
