"""CBMAIProblem: the standard form (3) and input validation."""

from __future__ import annotations

import numpy as np
import pytest

import allocopt
from allocopt.cbmai.problem import as_arm_subset


def test_standard_form_matches_equation_3():
    # (3): A = [[c, I_L], [1_K^T, 0_L^T]], b = (cbar, 1), mu = (r, 0_L); built here entry by entry.
    rewards, costs, bounds = [0.3, 0.7, 0.1], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [0.5, 0.25]
    matrix, rhs, objective = allocopt.CBMAIProblem(rewards, costs, bounds).standard_form()
    expected = np.array([[1.0, 2.0, 3.0, 1.0, 0.0],
                         [4.0, 5.0, 6.0, 0.0, 1.0],
                         [1.0, 1.0, 1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(matrix, expected)
    np.testing.assert_array_equal(rhs, [0.5, 0.25, 1.0])
    np.testing.assert_array_equal(objective, [0.3, 0.7, 0.1, 0.0, 0.0])


def test_problem_is_immutable_and_copies_input():
    costs = np.array([[1.0, 2.0]])
    problem = allocopt.CBMAIProblem([1.0, 2.0], costs, [1.5])
    costs[0, 0] = 99.0
    assert problem.costs[0, 0] == 1.0
    with pytest.raises(ValueError):
        problem.rewards[0] = 5.0
    with pytest.raises(AttributeError):
        problem.n_unknown = 1


def test_sizes_labels_and_known_arms():
    problem = allocopt.CBMAIProblem([1.0, 2.0, 3.0], [[1.0, 2.0, 3.0]], [2.0], n_unknown=2)
    assert (problem.n_arms, problem.n_costs, problem.n_columns, problem.n_unknown) == (3, 1, 4, 2)
    assert problem.known_arms.tolist() == [2]
    assert [problem.arm_label(j) for j in range(4)] == ["arm 0", "arm 1", "arm 2", "slack 0"]


@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        (dict(rewards=[1.0, 2.0], costs=[[1.0, 2.0, 3.0]], bounds=[1.0]), ["'costs'", "shape (any, 2)"]),
        (dict(rewards=[1.0, 2.0], costs=[1.0, 2.0], bounds=[1.0]), ["'costs'", "two-dimensional"]),
        (dict(rewards=[1.0, 2.0], costs=[[1.0, 2.0]], bounds=[1.0, 2.0]), ["'bounds'", "length 1"]),
        (dict(rewards=[[1.0, 2.0]], costs=[[1.0, 2.0]], bounds=[1.0]), ["'rewards'", "one-dimensional"]),
        (dict(rewards=[1.0, np.nan], costs=[[1.0, 2.0]], bounds=[1.0]), ["'rewards'", "not finite", "[1]"]),
        (dict(rewards=[1.0, 2.0], costs=[[1.0, np.inf]], bounds=[1.0]), ["'costs'", "not finite"]),
        (dict(rewards=[1.0, 2.0], costs=[[1.0, 2.0]], bounds=[-np.inf]), ["'bounds'", "not finite"]),
        (dict(rewards=[1.0, 2.0], costs=[[1.0, 2.0]], bounds=[1.0], n_unknown=0), ["'n_unknown'", "1..2", "0"]),
        (dict(rewards=[1.0, 2.0], costs=[[1.0, 2.0]], bounds=[1.0], n_unknown=3), ["'n_unknown'", "1..2", "3"]),
        (dict(rewards=[1.0, 2.0], costs=[[1.0, 2.0]], bounds=[1.0], n_unknown=1.5), ["'n_unknown'"]),
        (dict(rewards=[], costs=[[]], bounds=[1.0]), ["'rewards'"]),
        (dict(rewards=["a", "b"], costs=[[1.0, 2.0]], bounds=[1.0]), ["'rewards'"]),
        # booleans are not rewards, costs or bounds (numpy would read True as 1.0)
        (dict(rewards=[True, False], costs=[[1.0, 0.2]], bounds=[1.0]), ["'rewards'", "not booleans",
                                                                         "[True, False]"]),
        (dict(rewards=np.array([True, False]), costs=[[1.0, 0.2]], bounds=[1.0]), ["'rewards'", "not booleans"]),
        (dict(rewards=[1.0, 0.5], costs=[[True, False]], bounds=[1.0]), ["'costs'", "not booleans"]),
        (dict(rewards=[1.0, 0.5], costs=[[1.0, 0.2]], bounds=[True]), ["'bounds'", "not booleans"]),
        (dict(rewards=np.array([True, 0.5], dtype=object), costs=[[1.0, 0.2]], bounds=[1.0]),
         ["'rewards'", "not booleans"]),
    ],
)
def test_bad_input_is_reported_with_function_argument_requirement_and_value(kwargs, fragments):
    with pytest.raises(allocopt.InvalidArgumentError) as error:
        allocopt.CBMAIProblem(**kwargs)
    message = str(error.value)
    assert "of CBMAIProblem must be" in message and "Got" in message
    for fragment in fragments:
        assert fragment in message


def test_arm_subsets_are_validated():
    problem = allocopt.CBMAIProblem([1.0, 2.0], [[1.0, 2.0]], [1.0])
    assert as_arm_subset([2, 0], problem, "f").tolist() == [0, 2]
    for bad in ([3], [0, 0], [-1], [0.5], "01", [[0, 1]], [True, False], [], ()):
        with pytest.raises(allocopt.InvalidArgumentError, match="'arms' parameter of f must be"):
            as_arm_subset(bad, problem, "f")
    with pytest.raises(allocopt.InvalidArgumentError) as error:
        as_arm_subset([], problem, "f")
    assert "must be None or a nonempty collection of distinct column indices in 0..2" in str(error.value)
    assert str(error.value).endswith("Got [] instead.")
    assert as_arm_subset((), problem, "f", "target", allow_empty=True).tolist() == []  # cbmai_error_rate's target


def test_from_reference_builds_table_1_grid():
    # Appendix C: arm 4 * row + column has costs (c1[row], c2[column]); D2P row 2, column 2 is 0.80.
    problem = allocopt.CBMAIProblem.from_reference("cbmai-d2p")
    assert (problem.n_arms, problem.n_costs) == (24, 2)
    assert problem.costs[:, 10].tolist() == [0.8, 1.1]
    assert problem.rewards[10] == 0.80
    np.testing.assert_array_equal(problem.bounds, [1.0, 1.0])
