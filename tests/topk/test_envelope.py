"""The envelope check of the exact solver (allocopt.topk._exact.checks) and the compiled forest sweeps
(allocopt.topk._exact.forest).

Reference for the envelope: the smallest cost over *every* (top, bottom) pair, each evaluated by the family's
pair kernel (tested against 60-digit mpmath in test_topk_precision.py); the envelope must find a pair of that
same cost, bit for bit, since it evaluates its pairs by the same kernel. Reference for the sweeps: the numpy
level sweeps of allocopt.topk._exact.forest, bit for bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import allocopt.topk._exact.answer as answer_module
import allocopt.topk._exact.checks as checks
from allocopt import Bernoulli, TopKProblem, solve_topk
from allocopt.testing.topk_classes import TOPK_INSTANCE_CLASSES, topk_instance_class
from allocopt.topk._exact import forest as _forest
from allocopt.topk._exact.checks import envelope_code, envelope_pairs
from allocopt.topk._exact.forest import layout_forest
from allocopt.topk._exact.forest import DEEP_FOREST, affine_propagation, null_vector, peel
from allocopt.topk._exact.groups import reduce_problem

FAMILIES = ("gaussian", "bernoulli", "poisson", "exponential")


def _every_pair_minimum(reduced, psi):
    rows, cols = np.divmod(np.arange(reduced.n_top * reduced.n_bottom), reduced.n_bottom)
    return float(reduced.terms(psi, rows, cols).cost.min())


def _envelope_minimum(reduced, psi):
    rows, cols = envelope_pairs(reduced, psi)
    return float(reduced.terms(psi, rows, cols).cost.min()), rows.size


def _group_allocation(reduced, psi_arms):
    return np.bincount(reduced.arm_group, weights=psi_arms, minlength=reduced.n_groups) / reduced.multiplicity


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_envelope_minimum_is_the_minimum_over_every_pair(family, kind):
    rng = np.random.default_rng(2 * FAMILIES.index(family) + (kind == "budget"))
    classes = [name for name in TOPK_INSTANCE_CLASSES if name != "heteroscedastic" or family == "gaussian"]
    for trial in range(24):
        name = classes[trial % len(classes)]
        n_arms = int(rng.integers(2, 60))
        problem = topk_instance_class(name, n_arms, family=family, seed=trial)
        reduced = reduce_problem(problem, kind)
        assert envelope_code(reduced) is not None
        # allocations: smooth, spread over many decades, and the optimum (where nearly every pair binds)
        if trial % 3 == 0:
            psi = rng.uniform(0.1, 2.0, reduced.n_groups)
        elif trial % 3 == 1:
            psi = np.exp(rng.normal(0.0, 4.0, reduced.n_groups))
        else:
            psi = _group_allocation(reduced, solve_topk(problem, kind=kind).psi)
        found, n_pairs = _envelope_minimum(reduced, psi)
        assert found == _every_pair_minimum(reduced, psi), (name, n_arms, trial)
        # at most 5 listed pairs per elementary interval, at most 4K intervals (module docstring)
        assert n_pairs <= 20 * reduced.n_groups


@pytest.mark.parametrize("n_arms,k", [(2, 1), (7, 1), (7, 6), (40, 1), (40, 39)])
def test_envelope_k_one_and_k_all_but_one(n_arms, k):
    rng = np.random.default_rng(n_arms + k)
    for family in FAMILIES:
        theta = np.sort(rng.uniform(0.05, 0.95, n_arms))[::-1]
        problem = TopKProblem(theta, k, family=family) if family != "gaussian" else TopKProblem(theta, k)
        for kind in ("confidence", "budget"):
            reduced = reduce_problem(problem, kind)
            psi = rng.uniform(0.2, 3.0, reduced.n_groups)
            assert _envelope_minimum(reduced, psi)[0] == _every_pair_minimum(reduced, psi)


def test_envelope_ties_near_ties_and_means_near_the_ends():
    cases = [
        # ties across the boundary and within each side (merged into groups)
        ([0.7, 0.7, 0.6, 0.6, 0.6, 0.4, 0.4, 0.3], 5, "bernoulli"),
        # means 1e-9 apart
        ([0.5 + 2e-9, 0.5 + 1e-9, 0.5, 0.5 - 1e-9, 0.5 - 2e-9, 0.4], 2, "bernoulli"),
        # Bernoulli means within 1e-12 of 0 and 1
        ([1 - 1e-12, 1 - 2e-12, 0.5, 2e-12, 1e-12], 2, "bernoulli"),
        # Poisson and exponential means over many orders of magnitude
        ([1e6, 3e3, 1.0, 1e-3, 1e-8], 2, "poisson"),
        ([1e6, 3e3, 1.0, 1e-3, 1e-8], 3, "exponential"),
    ]
    rng = np.random.default_rng(5)
    for theta, k, family in cases:
        problem = TopKProblem(theta, k, family=family)
        for kind in ("confidence", "budget"):
            reduced = reduce_problem(problem, kind)
            for psi in (rng.uniform(0.5, 2.0, reduced.n_groups), np.exp(rng.normal(0, 6, reduced.n_groups))):
                assert _envelope_minimum(reduced, psi)[0] == _every_pair_minimum(reduced, psi), (theta, kind)


def test_envelope_does_not_apply_to_a_family_without_a_compiled_kernel():
    class Custom(Bernoulli):  # overriding the numpy pair kernel removes the compiled twin
        def unit_confidence_pair(self, theta_top, theta_bottom, share_top, share_bottom):
            return super().unit_confidence_pair(theta_top, theta_bottom, share_top, share_bottom)

    problem = TopKProblem([0.8, 0.6, 0.4, 0.2], 2, family=Custom())
    reduced = reduce_problem(problem, "confidence")
    assert envelope_code(reduced) is None
    with pytest.raises(ValueError, match="do not apply"):
        envelope_pairs(reduced, np.ones(4))


def test_the_exact_solver_checks_large_instances_on_the_envelopes(monkeypatch):
    # premise: above ENVELOPE_PAIRS group pairs the pivots' checks are the envelope scan, which is counted here
    calls = []
    original = checks.Checker._envelope_scan

    def counted(self, psi, threshold, limit):
        calls.append(psi.shape[0])
        return original(self, psi, threshold, limit)

    monkeypatch.setattr(checks.Checker, "_envelope_scan", counted)
    problem = topk_instance_class("two clusters", 400, family="bernoulli")
    assert (problem.k * (400 - problem.k)) > checks.ENVELOPE_PAIRS
    with_envelopes = solve_topk(problem)
    assert calls
    # the same problem with the all-pairs scans: the same optimum, each answer certified independently
    monkeypatch.setattr(checks, "ENVELOPE_PAIRS", 10**12)
    calls.clear()
    with_scans = solve_topk(problem)
    assert not calls
    assert with_envelopes.status == with_scans.status == "optimal"
    assert with_envelopes.value == pytest.approx(with_scans.value, rel=2e-9)


def test_a_pair_the_envelopes_miss_is_found_by_the_confirming_scan(monkeypatch):
    # means a few ulps apart are where the envelopes' crossings cannot be resolved; simulate a miss everywhere:
    # the envelopes never list the cheapest pair, and the solver must still return the certified optimum,
    # because every answer is confirmed by the scan over every pair
    problem = topk_instance_class("two clusters", 400, family="bernoulli")
    reference = solve_topk(problem)
    original = checks.envelope_pairs
    removed = []

    def missing_the_cheapest(reduced, psi, code=None):
        rows, cols = original(reduced, psi, code)
        every = reduced.terms(psi, *np.divmod(np.arange(reduced.n_top * reduced.n_bottom), reduced.n_bottom)).cost
        cheapest = every.min()
        keep = reduced.terms(psi, rows, cols).cost > cheapest
        removed.append(int(np.count_nonzero(~keep)))
        return rows[keep], cols[keep]

    monkeypatch.setattr(checks, "envelope_pairs", missing_the_cheapest)
    answer = solve_topk(problem)
    assert sum(removed) > 0  # premise: the simulated misses happened
    assert answer.status == reference.status == "optimal"
    assert answer.value == pytest.approx(reference.value, rel=2e-9)


@pytest.mark.parametrize("confirm_pairs", [checks.CONFIRM_PAIRS, 1000])
def test_no_certificate_rests_on_a_checks_minimum(confirm_pairs, monkeypatch):
    # an allocation that is not optimal (the Gaussian surrogate's forest solution of two Bernoulli clusters,
    # perturbed; premise: some pair is violated), reported with a check that saw no violated pair, as envelopes that missed them
    # would: the value certified must be Gamma(psi) over every pair, not the check's minimum; with the confirming
    # scans (confirm_pairs above the problem's pairs) and without them (below: the value is then the envelope
    # minimum at the answer, computed afresh, less its rounding allowance)
    import time

    from allocopt.topk._scan import PairScan
    from allocopt.topk._exact.starts import surrogate_forest

    monkeypatch.setattr(checks, "CONFIRM_PAIRS", confirm_pairs)
    problem = topk_instance_class("two clusters", 400, family="bernoulli")
    reduced = reduce_problem(problem, "confidence")
    located = surrogate_forest(reduced)
    solution = _forest.solve_forest(reduced, located.layout, located.psi)
    # moved off the forest's equations: some pairs fall below 1
    solution = dataclasses.replace(solution, psi=solution.psi * np.random.default_rng(3).uniform(0.9, 1.1,
                                                                                                 reduced.n_groups))
    every = reduced.terms(solution.psi, *np.divmod(np.arange(reduced.n_top * reduced.n_bottom), reduced.n_bottom))
    assert every.cost.min() < 1.0 - 1e-6  # premise: violated pairs
    blind = PairScan(1.0, 0, 0, np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0), every_pair=False)
    scans = []
    every_pair_scan = TopKProblem.minimum_cost
    with monkeypatch.context() as patch:
        patch.setattr(TopKProblem, "minimum_cost", lambda *args, **kwargs: scans.append(1) or every_pair_scan(*args, **kwargs))
        answer = answer_module.forest_result(problem, reduced, "confidence", located.layout, solution, 1e-9, time.perf_counter(),
                               0, "test", blind)
    # the certificate scans every pair exactly when the problem has at most CONFIRM_PAIRS pairs
    assert bool(scans) == (reduced.n_top * reduced.n_bottom <= confirm_pairs)
    gamma = problem.minimum_cost(answer.psi, "confidence")[0]
    assert answer.value == pytest.approx(gamma, rel=1e-11)
    assert answer.value <= gamma  # a lower bound: never above Gamma(psi)
    assert answer.status != "optimal"


def test_above_confirm_pairs_the_envelope_minimum_certifies(monkeypatch):
    # above CONFIRM_PAIRS group pairs (lowered here to 1000) no scan over every pair runs, and the answer is
    # still certified optimal at the optimum the confirmed path finds (each path certified independently)
    problem = topk_instance_class("two clusters", 400, family="bernoulli")
    reference = solve_topk(problem)
    confirming = []
    original = checks.Checker.scan

    def spied(self, psi, every_pair=False):
        if every_pair:
            confirming.append(psi.shape[0])
        return original(self, psi, every_pair)

    monkeypatch.setattr(checks.Checker, "scan", spied)
    monkeypatch.setattr(checks, "CONFIRM_PAIRS", 1000)
    answer = solve_topk(problem)
    assert not confirming
    assert answer.status == reference.status == "optimal"
    assert answer.value == pytest.approx(reference.value, rel=2e-9)
    # the value certified is a lower bound on Gamma of the answer, over every pair (evaluated here one by one)
    assert answer.value <= problem.minimum_cost(answer.psi, "confidence")[0] / answer.psi.sum()


def test_means_ulps_apart_at_the_envelopes_scale():
    # 400 Bernoulli arms on consecutive floats around 1/2 (costs about 1e-30): certified, and the same optimum
    # with the envelopes as with the all-pairs scans
    theta = 0.5 + np.arange(200, -200, -1) * 2.0**-53
    problem = TopKProblem(theta, 200, family="bernoulli")
    answer = solve_topk(problem)
    assert answer.status == "optimal"
    import allocopt.topk._exact.checks as module

    saved = module.ENVELOPE_PAIRS
    try:
        module.ENVELOPE_PAIRS = 10**12
        plain = solve_topk(problem)
    finally:
        module.ENVELOPE_PAIRS = saved
    assert plain.status == "optimal"
    assert answer.value == pytest.approx(plain.value, rel=2e-9)


# ----------------------------------------------------------------------------------------- forest sweeps
def _random_deep_forest(rng, n_top, n_bottom):
    """A problem and a layout of a forest of depth > DEEP_FOREST: a long zigzag path plus random leaves."""
    theta = np.concatenate([np.sort(rng.uniform(0.55, 0.9, n_top))[::-1], np.sort(rng.uniform(0.1, 0.45, n_bottom))[::-1]])
    reduced = reduce_problem(TopKProblem(theta, n_top, family="bernoulli"), "confidence")
    length = min(n_top, n_bottom)
    rows = [0]
    cols = [0]
    for step in range(1, length):  # the staircase path (0,0), (1,0), (1,1), (2,1), ...
        rows += [step, step]
        cols += [step - 1, step]
    for row in range(length, n_top):  # remaining groups hang off random partners
        rows.append(row)
        cols.append(int(rng.integers(length)))
    for col in range(length, n_bottom):
        rows.append(int(rng.integers(length)))
        cols.append(col)
    layout = layout_forest(reduced, np.array(rows), np.array(cols))
    assert layout is not None and len(layout.levels) > DEEP_FOREST
    return reduced, layout


@pytest.mark.parametrize("n_top,n_bottom", [(30, 30), (45, 31), (31, 52)])
def test_compiled_sweeps_are_the_numpy_sweeps_bit_for_bit(n_top, n_bottom, monkeypatch):
    rng = np.random.default_rng(n_top * 100 + n_bottom)
    reduced, layout = _random_deep_forest(rng, n_top, n_bottom)
    n_groups, n_edges = reduced.n_groups, layout.rows.shape[0]
    a, b = rng.uniform(0.1, 3.0, n_edges), rng.uniform(0.1, 3.0, n_edges)
    demand = rng.uniform(0.5, 2.0, n_groups)
    parent_side = _forest._parent_side_coefficients(layout, a, b, n_groups)
    compiled_affine = affine_propagation(layout, a, b, n_groups)
    compiled_peel = peel(layout, parent_side, compiled_affine[2], demand, n_groups)
    compiled_null = null_vector(layout, compiled_affine[2], parent_side, n_groups)
    # the numpy level sweeps: the same functions with the depth threshold out of reach
    monkeypatch.setattr(_forest, "DEEP_FOREST", 10**9)
    numpy_affine = _forest._affine_propagation(layout, a, b, n_groups)
    numpy_peel = _forest._peel(layout, parent_side, numpy_affine.own, demand, n_groups)
    numpy_null = _forest.tree_null_vector(layout, numpy_affine.own, parent_side, n_groups)
    for compiled, numpy_value in zip(compiled_affine, numpy_affine):
        assert np.array_equal(compiled, numpy_value)
    assert np.array_equal(compiled_peel[0], numpy_peel.multiplier)
    roots = layout.roots
    assert np.array_equal(demand[roots] - compiled_peel[1][roots], numpy_peel.root_residual)
    assert np.array_equal(compiled_null, numpy_null)


def test_forest_solve_on_a_deep_forest_is_the_same_either_way(monkeypatch):
    # the optimal binding forest of two tight Bernoulli clusters: one tree, a path-like staircase of 67 levels
    problem = topk_instance_class("two clusters", 100, family="bernoulli")
    forest = solve_topk(problem).forest
    assert len(forest.layout.levels) > DEEP_FOREST
    reduced = reduce_problem(problem, "confidence")
    start = forest.psi * np.random.default_rng(11).uniform(0.8, 1.25, reduced.n_groups)
    compiled = _forest.solve_forest(reduced, forest.layout, start)
    monkeypatch.setattr(_forest, "DEEP_FOREST", 10**9)
    plain = _forest.solve_forest(reduced, forest.layout, start)
    assert compiled.converged and compiled.passes > 1
    for field in dataclasses.fields(plain):
        assert np.array_equal(getattr(compiled, field.name), getattr(plain, field.name)), field.name


@pytest.mark.parametrize("seed", range(4))
def test_tree_levels_are_the_depths_walked_up_one_parent_at_a_time(seed):
    # reference: each node's depth counted by walking its parent chain to the root (plain Python), then the nodes
    # stably sorted by depth and split by depth; forests mixing long paths (depth in the thousands, as the binding
    # paths of two tight clusters) and bushy trees
    from allocopt.topk._exact.forest import tree_levels

    rng = np.random.default_rng(seed)
    n_nodes = 3000
    order = rng.permutation(n_nodes)
    parent = np.full(n_nodes, -1)
    for position in range(3, n_nodes):  # the first three nodes of the order are roots
        earlier = position - 1 if rng.random() < 0.999 else int(rng.integers(position))
        parent[order[position]] = order[earlier]
    depth = np.zeros(n_nodes, dtype=int)
    for node in range(n_nodes):
        walker = node
        while parent[walker] >= 0:
            walker = parent[walker]
            depth[node] += 1
    assert depth.max() > 1000  # premise: deep trees
    expected = np.argsort(depth, kind="stable")
    found_order, levels = tree_levels(parent)
    assert np.array_equal(found_order, expected)
    assert [level.tolist() for level in levels] == [expected[depth[expected] == d].tolist()
                                                    for d in range(depth.max() + 1)]


def test_above_confirm_pairs_a_barrier_answer_is_valued_by_the_envelope(monkeypatch):
    # the fallback that returns a barrier point certifies it as a forest answer is certified: above CONFIRM_PAIRS
    # (lowered here to 500, and ENVELOPE_PAIRS to 100, so that the envelopes serve 900 group pairs) its Gamma is the
    # envelope minimum less ENVELOPE_ROUNDING, with no scan over every pair
    from allocopt.topk._exact.barrier import barrier_path

    monkeypatch.setattr(checks, "ENVELOPE_PAIRS", 100)
    problem = topk_instance_class("two clusters", 60, family="bernoulli")
    reduced = reduce_problem(problem, "confidence")
    rows, cols = (grid.ravel() for grid in np.meshgrid(np.arange(reduced.n_top), np.arange(reduced.n_bottom),
                                                       indexing="ij"))
    point = barrier_path(reduced, rows, cols, np.ones(reduced.n_groups), target_gap=1e-6)
    # Gamma of the answer pair by pair, on the caller's problem (the reference, computed before the spy)
    psi = reduced.expand_allocation(point.psi)
    gamma = min(float(problem.pair_terms(psi, i, j).cost) for i in range(problem.k) for j in range(problem.k))
    scanned = []
    original = TopKProblem.minimum_cost

    def spied(self, *arguments, **options):
        scanned.append(True)
        return original(self, *arguments, **options)

    monkeypatch.setattr(TopKProblem, "minimum_cost", spied)
    monkeypatch.setattr(checks, "CONFIRM_PAIRS", 500)
    answer = answer_module.barrier_result(problem, reduced, "confidence", rows, cols, point, 1e-9, 0.0, 0)
    assert not scanned
    assert gamma * (1 - 1e-11) <= answer.value <= gamma
    monkeypatch.setattr(checks, "CONFIRM_PAIRS", 10**12)  # the confirmed path: every pair scanned
    confirmed = answer_module.barrier_result(problem, reduced, "confidence", rows, cols, point, 1e-9, 0.0, 0)
    assert scanned and confirmed.value == pytest.approx(gamma, rel=1e-14)
