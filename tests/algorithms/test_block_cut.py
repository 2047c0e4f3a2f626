"""The engine's cut of a step's blocks at a budget or a sample cap (``cut_blocks``): in arm order, or lowest count
first (water-filling). The expected cuts are computed in the tests by pulling one arm at a time, the definition of
each order, never from the engine."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt.algorithms.engine.run import cut_blocks


def one_pull_at_a_time(each: np.ndarray, counts: np.ndarray, remaining: int, how: str) -> np.ndarray:
    """The pulls of one run, made one by one: the next arm is the first arm with pulls left (arm order) or the arm
    of smallest count with pulls left, the smaller index on a tie (water-filling)."""
    left, current = each.astype(int).tolist(), counts.astype(int).tolist()
    made = [0] * len(left)
    for _ in range(remaining):
        waiting = [arm for arm in range(len(left)) if left[arm] > 0]
        if not waiting:
            break
        arm = waiting[0] if how == "arm-order" else min(waiting, key=lambda a: (current[a], a))
        left[arm] -= 1
        current[arm] += 1
        made[arm] += 1
    return np.array(made)


@pytest.mark.parametrize("how", ["arm-order", "water-fill"])
def test_the_cut_is_the_order_of_single_pulls(how):
    generator = np.random.default_rng(20170)
    for _ in range(40):
        n_runs, n_arms = int(generator.integers(1, 6)), int(generator.integers(1, 9))
        each = generator.integers(0, 7, size=(n_runs, n_arms))
        each[:, 0] += 1  # at least one pull asked per run
        counts = generator.integers(0, 6, size=(n_runs, n_arms))
        remaining = np.array([int(generator.integers(1, row.sum() + 3)) for row in each])
        expected = np.array([one_pull_at_a_time(each[row], counts[row], int(remaining[row]), how)
                             for row in range(n_runs)])
        assert np.array_equal(cut_blocks(each, counts, remaining, how), expected)


def test_water_filling_a_level_round_leaves_counts_one_apart():
    # eight arms at count 3 asking 10 pulls each; 29 pulls are 3 full passes (24) and 5 more, to arms 0-4
    each, counts = np.full((1, 8), 10), np.full((1, 8), 3)
    cut = cut_blocks(each, counts, np.array([29]), "water-fill")
    assert cut.tolist() == [[4, 4, 4, 4, 4, 3, 3, 3]]
    # the same pulls in arm order: arm 0's ten, arm 1's ten, then nine of arm 2's
    assert cut_blocks(each, counts, np.array([29]), "arm-order").tolist() == [[10, 10, 9, 0, 0, 0, 0, 0]]


def test_a_cut_then_the_rest_is_the_uncut_order():
    # cutting at 7 pulls and asking for the rest gives, at 12 pulls, the counts of one cut at 12
    each, counts = np.array([[5, 2, 6, 4]]), np.array([[2, 4, 2, 3]])
    first = cut_blocks(each, counts, np.array([7]), "water-fill")
    second = cut_blocks(each - first, counts + first, np.array([5]), "water-fill")
    assert np.array_equal(first + second, cut_blocks(each, counts, np.array([12]), "water-fill"))
    # by hand: arms 0 and 2 (count 2) go to 3 (2 pulls); arms 0, 2 and 3 (count 3) go to 4 (3 pulls); all four
    # are at 4 and the last 2 pulls go to arms 0 and 1 (index order): [3, 1, 2, 1]
    assert first.tolist() == [[3, 1, 2, 1]]


def test_blocks_that_fit_are_not_cut():
    each, counts = np.array([[3, 0, 2], [1, 1, 1]]), np.array([[1, 1, 1], [5, 1, 9]])
    for how in ("arm-order", "water-fill"):
        assert np.array_equal(cut_blocks(each, counts, np.array([5, 10]), how), each)
