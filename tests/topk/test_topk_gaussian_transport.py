"""The transport route of the exact solver for Gaussian arms (allocopt.topk._exact.starts).

Reference values: scipy's linear-programming solver for the transport problems (an independent solver of
the same linear programs), a brute-force evaluation of every pair for the potentials' feasibility, Wang,
Yang, You (2022), Example 1 (allocation to four decimals, Gamma* ~ 0.0568, two binding components), the
exact solver's general path (double star, pivots, barrier) with the transport route switched off, and the
shared certificate.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from allocopt import TopKProblem, solve_topk
from allocopt.testing.topk_classes import TOPK_INSTANCE_CLASSES, topk_instance_class
from allocopt.topk._exact import checks, search
from allocopt.topk._exact.starts import transport_forest, transport_kernels
from allocopt.topk._exact.groups import reduce_problem

PURE = transport_kernels(compiled=False)


def random_staircase(rng, p, q):
    """A random monotone path from (0, 0) to (p - 1, q - 1): p - 1 down moves among p + q - 2."""
    down = np.zeros(p + q - 2, dtype=bool)
    down[rng.choice(p + q - 2, size=p - 1, replace=False)] = True
    return down


def sorted_means(rng, p, q):
    return np.sort(0.5 + rng.uniform(0.0, 0.5, p)), np.sort(0.5 - rng.uniform(0.0, 0.5, q))


@pytest.mark.parametrize("seed", range(5))
def test_staircase_potentials_bind_on_the_staircase_and_are_feasible_everywhere(seed):
    # the Monge property of d_ij = (theta_i - theta_j)^2 / 2: the potentials of ANY staircase are feasible
    rng = np.random.default_rng(seed)
    p, q = rng.integers(1, 12, size=2) + 1
    theta_top, theta_bottom = sorted_means(rng, p, q)
    down = random_staircase(rng, p, q)
    a, b = PURE["potentials"](theta_top, theta_bottom, down)
    rows, cols, _ = PURE["masses"](np.ones(p), np.ones(q), down)
    distance = 0.5 * (theta_top[:, None] - theta_bottom[None, :]) ** 2  # every pair, by brute force
    np.testing.assert_allclose(a[rows] + b[cols], distance[rows, cols], rtol=1e-14)
    assert np.all(a[:, None] + b[None, :] <= distance * (1 + 1e-14))


def test_staircase_potentials_keep_the_relative_precision_of_tiny_boundary_distances():
    # means 1e-9 from the boundary 0.5 beside arms at distance about 1 (the power-law gaps class at scale): a walk
    # that sums the potentials from the staircase's first cell (distance about 0.5) leaves the boundary cells'
    # sums, about 2e-18, as the difference of numbers near 0.5, i.e. no correct digit. Each cell's a_i + b_j is
    # compared with its distance in exact rational arithmetic (the floating-point means taken as exact).
    from fractions import Fraction

    theta_top = np.array([0.5 + 1e-9, 0.5 + 3e-9, 0.9, 1.4])
    theta_bottom = np.array([-0.5, 0.1, 0.5 - 4e-9, 0.5 - 1e-9])
    rng = np.random.default_rng(7)
    staircases = [np.arange(6) >= 3, np.arange(6) < 3] + [random_staircase(rng, 4, 4) for _ in range(8)]
    for down in staircases:
        for kernels in (PURE, transport_kernels()):
            a, b = kernels["potentials"](theta_top, theta_bottom, down)
            rows, cols, _ = PURE["masses"](np.ones(4), np.ones(4), down)
            for i, j in zip(rows, cols):
                exact = (Fraction(theta_top[i]) - Fraction(theta_bottom[j])) ** 2 / 2
                error = abs(Fraction(a[i]) + Fraction(b[j]) - exact)
                assert error <= Fraction(1, 10 ** 12) * exact, (down, i, j, float(error / exact))


@pytest.mark.parametrize("seed", range(5))
def test_north_west_coupling_is_an_optimal_transport(seed):
    rng = np.random.default_rng(seed)
    p, q = rng.integers(1, 9, size=2) + 1
    theta_top, theta_bottom = sorted_means(rng, p, q)
    mass_top, mass_bottom = rng.uniform(0.1, 1.0, p), rng.uniform(0.1, 1.0, q)
    mass_top /= mass_top.sum()
    mass_bottom /= mass_bottom.sum()
    down = PURE["moves"](mass_top, mass_bottom)
    rows, cols, mass = PURE["masses"](mass_top, mass_bottom, down)
    assert rows.shape[0] == p + q - 1 and np.all(mass >= -1e-15)
    np.testing.assert_allclose(np.bincount(rows, weights=mass, minlength=p), mass_top, atol=1e-15)
    np.testing.assert_allclose(np.bincount(cols, weights=mass, minlength=q), mass_bottom, atol=1e-15)
    distance = 0.5 * (theta_top[:, None] - theta_bottom[None, :]) ** 2
    # the transport linear program solved independently (HiGHS)
    equality = np.vstack([np.kron(np.eye(p), np.ones(q)), np.kron(np.ones(p), np.eye(q))])
    program = linprog(distance.ravel(), A_eq=equality, b_eq=np.concatenate([mass_top, mass_bottom]),
                      bounds=(0, None), method="highs")
    assert program.status == 0
    assert float(mass @ distance[rows, cols]) == pytest.approx(program.fun, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_compiled_walks_equal_their_pure_twins_bit_for_bit(seed):
    compiled = transport_kernels()
    rng = np.random.default_rng(seed)
    p, q = int(rng.integers(1, 300)) + 1, int(rng.integers(1, 300)) + 1
    theta_top, theta_bottom = sorted_means(rng, p, q)
    mass_top, mass_bottom = rng.uniform(0.0, 1.0, p) ** 3, rng.uniform(0.0, 1.0, q) ** 3
    mass_bottom *= mass_top.sum() / mass_bottom.sum()
    down = random_staircase(rng, p, q)
    for name, arguments in (("potentials", (theta_top, theta_bottom, down)), ("moves", (mass_top, mass_bottom)),
                            ("masses", (mass_top, mass_bottom, down))):
        expected, got = PURE[name](*arguments), compiled[name](*arguments)
        expected, got = (expected, got) if isinstance(expected, tuple) else ((expected,), (got,))
        for pure_output, compiled_output in zip(expected, got):
            assert np.array_equal(pure_output, compiled_output), name


def test_example_1_of_the_paper():
    # Wang, Yang, You (2022), Example 1: psi* ~ (0.2185, 0.2371, 0.2185, 0.2026, 0.1232), Gamma* ~ 0.0568,
    # binding components {1, 3} and {2, 4, 5} (arms numbered from 1): the forest has one cut corner
    problem = TopKProblem(np.array([0.51, 0.5, 0.0, -0.01, -0.092]), 2, variance=0.25)
    reduced = reduce_problem(problem, "confidence")
    located = transport_forest(reduced, None)
    assert located is not None and located.converged
    psi = reduced.expand_allocation(located.psi)
    np.testing.assert_allclose(psi, [0.2185, 0.2371, 0.2185, 0.2026, 0.1232], atol=5e-5)
    assert 1.0 / located.value == pytest.approx(0.0568, abs=5e-5)
    arm_of_group = np.argsort(reduced.arm_group)  # distinct means: one arm per group
    pairs = {(int(arm_of_group[reduced.top_groups[r]]), int(arm_of_group[reduced.bottom_groups[c]]))
             for r, c in zip(located.rows, located.cols)}
    assert pairs == {(0, 2), (1, 3), (1, 4)}


def general_path(monkeypatch, problem, kind):
    """The exact solver with the transport route switched off (its double star, pivots and barrier)."""
    with monkeypatch.context() as patch:
        patch.setattr(search, "transport_forest", lambda *arguments, **options: None)
        return solve_topk(problem, kind=kind)


GAUSSIAN = TOPK_INSTANCE_CLASSES


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("n_arms", [8, 21, 100])
@pytest.mark.parametrize("name", GAUSSIAN)
def test_every_gaussian_class_against_the_general_path(monkeypatch, name, n_arms, kind):
    for seed in range(3):
        problem = topk_instance_class(name, n_arms, seed=seed)
        reference = general_path(monkeypatch, problem, kind)
        reduced = reduce_problem(problem, kind)
        located = transport_forest(reduced, None)
        assert located is not None and located.converged
        # the located allocation's value 1/T agrees with the general path's certified optimum
        assert 1.0 / located.value == pytest.approx(reference.value, rel=1e-12)
        result = solve_topk(problem, kind=kind)
        assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message
        assert result.value == pytest.approx(reference.value, rel=1e-12)
        np.testing.assert_allclose(result.psi, reference.psi, rtol=1e-9, atol=1e-15)


def test_the_transport_route_answers_where_the_double_star_is_not_optimal():
    problem = topk_instance_class("staircase", 300, seed=2)
    result = solve_topk(problem)
    assert result.status == "optimal" and result.message.startswith("exact: transport, 0 pivot(s)"), result.message


@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_ties_and_near_ties(monkeypatch, kind):
    rng = np.random.default_rng(7)
    instances = [
        # equal means with different variances on each side (separate groups with equal means)
        TopKProblem(np.array([0.8, 0.7, 0.7, 0.7, 0.3, 0.3, 0.2, 0.1]), 4,
                    variance=np.array([0.2, 0.5, 0.1, 0.5, 0.3, 0.9, 0.2, 0.4])),
        # means tied to within 1e-12 and exactly, next to a spread bottom
        TopKProblem(np.concatenate([0.51 + 1e-12 * np.arange(6), np.repeat(0.5 - 0.1 * rng.uniform(size=3), 2)]),
                    6, variance=0.25),
        # a near-tie at the boundary
        TopKProblem(np.concatenate([0.5 + 1e-9 + 0.01 * rng.uniform(size=10), 0.5 - 0.01 * rng.uniform(size=12)]),
                    10, variance=rng.uniform(0.1, 1.0, 22)),
    ]
    for problem in instances:
        reference = general_path(monkeypatch, problem, kind)
        result = solve_topk(problem, kind=kind)
        assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message
        assert result.value == pytest.approx(reference.value, rel=1e-12)
        # tied arms of equal variance get equal allocations
        key = np.stack([problem.theta, problem.dispersion], axis=1)
        for row in np.unique(key, axis=0):
            members = np.all(key == row, axis=1)
            assert np.ptp(result.psi[members]) <= 1e-15 * result.psi[members].max()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("name", GAUSSIAN)
def test_every_gaussian_class_is_certified_at_ten_thousand_arms(name, kind):
    problem = topk_instance_class(name, 10_000)
    result = solve_topk(problem, kind=kind)
    assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message


@pytest.mark.slow
def test_power_law_gaps_at_thirty_thousand_arms_are_located_by_the_route():
    # boundary distances near 1e-13 beside distances near 0.3: the route's forest is the certified one, with no
    # pivot (before the potentials were walked outward from the boundary, the forest located here was wrong
    # and the general path took more than five minutes)
    result = solve_topk(topk_instance_class("power-law gaps", 30_000))
    assert result.status == "optimal" and result.gap <= 1e-9 * result.value, result.message
    assert "transport, 0 pivot(s)" in result.message


@pytest.mark.parametrize("seed", range(6))
def test_staircase_tree_is_the_forest_of_the_cells_kept(seed):
    rng = np.random.default_rng(seed)
    p, q = int(rng.integers(2, 40)), int(rng.integers(2, 40))
    down = random_staircase(rng, p, q)
    corner = np.zeros(p + q - 1, dtype=bool)
    corner[1:-1] = down[:-1] != down[1:]
    cut = corner & (rng.uniform(size=p + q - 1) < 0.3)
    compiled = transport_kernels()
    parent, parent_cell, depth, block = PURE["tree"](down, cut)
    for pure_output, compiled_output in zip((parent, parent_cell, depth, block), compiled["tree"](down, cut)):
        assert np.array_equal(pure_output, compiled_output)
    rows, cols, _ = PURE["masses"](np.ones(p), np.ones(q), down)
    # every non-root's parent edge is a kept cell joining it to its parent, one level up, in the same tree
    child = np.flatnonzero(parent >= 0)
    cells = parent_cell[child]
    assert not cut[cells].any() and np.unique(cells).shape[0] == cells.shape[0] == int(np.count_nonzero(~cut))
    ends = {(int(rows[c]), int(p + cols[c])) for c in cells}
    assert ends == {(min(v, int(parent[v])), max(v, int(parent[v]))) for v in child}
    assert np.all(depth[child] == depth[parent[child]] + 1) and np.all(depth[parent < 0] == 0)
    assert np.all(block[child] == block[parent[child]])
    # one root per tree, and the trees are the runs of cells between cuts (the components of an independent
    # union-find over the kept cells)
    assert np.array_equal(np.sort(block[parent < 0]), np.arange(int(cut.sum()) + 1))
    label = np.arange(p + q)

    def find(v):
        while label[v] != v:
            v = label[v]
        return v

    for c in np.flatnonzero(~cut):
        label[find(int(rows[c]))] = find(int(p + cols[c]))
    roots = np.array([find(v) for v in range(p + q)])
    assert np.array_equal(roots[:, None] == roots[None, :], block[:, None] == block[None, :])


@pytest.mark.parametrize("threshold", [None, 1.0, 1.05])
@pytest.mark.parametrize("name", ["staircase", "two clusters", "heteroscedastic", "massive ties"])
def test_compiled_scan_equals_the_numpy_scan(name, threshold):
    # the exact solver's checker with the compiled kernel against scan_pairs on the family's own costs,
    # at an allocation near the optimum (many pairs near binding) and at the heuristic one
    from allocopt.topk._scan import scan_pairs

    problem = topk_instance_class(name, 301, seed=3)
    reduced = reduce_problem(problem, "confidence")
    located = transport_forest(reduced)
    heuristic = np.bincount(reduced.arm_group, weights=problem.heuristic_allocation(),
                            minlength=reduced.n_groups) / reduced.multiplicity
    checker = checks.Checker(reduced)
    for psi in (located.psi, heuristic / heuristic.min() * located.psi.min()):
        weights = psi / reduced.dispersion
        expected = scan_pairs(lambda rows, cols: reduced.terms(psi, rows, cols).cost, reduced.family,
                              checker.theta_top, checker.theta_bottom, weights[reduced.top_groups],
                              weights[reduced.bottom_groups], threshold, limit=10**6)
        for compiled in (True, False):
            kernel = checks._SCAN()["scan"] if compiled else checks.harmonic_scan
            top, bottom = reduced.top_groups, reduced.bottom_groups
            best, row, col, count, rows, cols, costs = kernel(
                checker.theta_top, checker.theta_bottom, psi[top] * (1.0 / reduced.dispersion[top]),
                psi[bottom] * (1.0 / reduced.dispersion[bottom]), -np.inf if threshold is None else threshold,
                10**6)
            assert best == expected.minimum and (row, col) == (expected.argmin_row, expected.argmin_col)
            listed = sorted(zip(rows[:count].tolist(), cols[:count].tolist(), costs[:count].tolist()))
            assert listed == sorted(zip(expected.rows.tolist(), expected.cols.tolist(), expected.costs.tolist()))


def test_a_scale_out_of_floating_point_range_leaves_the_route_quietly():
    # Example 1 of Wang, Yang, You (2022) with means x 1e-100 and variance x 1e-200: the masses c_a (psi_a /
    # sigma_a^2)^2 of the start are about 1e400 and overflow, so the route steps aside (None) without a warning;
    # the exact solver's general path solves the instance (tests/topk/test_topk_scaling.py)
    import warnings

    theta = np.array([0.51, 0.5, 0.0, -0.01, -0.092]) * 1e-100
    reduced = reduce_problem(TopKProblem(theta, 2, variance=0.25e-200), "confidence")
    start = np.full(reduced.n_groups, 1.0 / reduced.n_groups)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert transport_forest(reduced, start) is None
