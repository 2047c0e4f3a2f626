"""The seed experiments' specs load, and their instances are those of the papers' setups, computed here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from allocopt.experiments import load_spec

SPECS = Path(__file__).resolve().parents[2] / "examples" / "experiments"


@pytest.mark.parametrize("name", sorted(path.name for path in SPECS.glob("*.toml")))
def test_every_seed_spec_loads(name):
    spec = load_spec(SPECS / name)
    assert spec.instances and spec.rules and spec.hash


def test_the_wang_yang_you_instances():
    # Section 5: theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4, k = 5 (as 1 - i/20 in double precision)
    for figure in (1, 2):
        instance = load_spec(SPECS / f"wang_yang_you_figure_{figure}.toml").instances[0]
        np.testing.assert_array_equal(instance.theta, 1.0 - np.arange(20) / 20.0)
        assert (instance.k, instance.variance) == (5, 0.25)
    # Example 1: (0.51, 0.5, 0, -0.01, -0.092), variance 1/4, k = 2
    example = load_spec(SPECS / "wang_yang_you_figure_5.toml").instances[0]
    assert example.theta == (0.51, 0.5, 0.0, -0.01, -0.092) and example.k == 2
    # Figure 2's budgets: numpy.geomspace(200, 30000, 10) rounded; UGapE(b) gets each instance's H1 (Appendix C.3)
    figure_2 = load_spec(SPECS / "wang_yang_you_figure_2.toml")
    expected = np.unique(np.round(np.geomspace(200, 30000, 10)).astype(int))
    assert figure_2.instances[0].checkpoints == tuple(expected.tolist())
    from allocopt.complexity import h1

    ugape = figure_2.rules[1].rule(figure_2.instances[0])
    assert ugape.complexity == float(h1(1.0 - np.arange(20) / 20.0, 5)) and ugape.a == 5.0


def _exact_h1_ceiling(theta, m):
    """ceil(sum_i Delta_i^-2) in exact rational arithmetic, Delta_i = theta_i - theta_(m+1) for the top m arms and
    theta_(m) - theta_i for the others (Shahrampour and Tarokh 2017, eq. (4))."""
    import math
    from fractions import Fraction

    values = sorted((Fraction(str(round(float(value), 12))) for value in theta), reverse=True)
    gaps = [value - values[m] for value in values[:m]] + [values[m - 1] - value for value in values[m:]]
    return math.ceil(sum(1 / gap**2 for gap in gaps))


def test_the_nsar_setups_and_budgets():
    from allocopt.complexity import h1
    from allocopt.testing.bandit_instances import nsar_setup

    spec = load_spec(SPECS / "nsar.toml")
    assert len(spec.instances) == 12 and [rule.label for rule in spec.rules][:2] == ["NSAR p=0.7", "NSAR p=0.85"]
    order = np.random.default_rng(0).permutation(50)
    for instance in spec.instances:
        setup = int(instance.name.split()[1])
        theta = nsar_setup(setup, instance.k, 50, rng=5)[order]
        np.testing.assert_array_equal(instance.theta, theta)
        # the budget of Section IV.A: T = ceil(H1^(M)) of the paper's decimal means, computed exactly (Fractions of
        # the means rounded to 12 decimals: setup 1's 0.39999999999999997 is the paper's 0.4, and its H1 is 1250,
        # which floating point sums to 1250.0000000000005)
        assert instance.checkpoints == (_exact_h1_ceiling(theta, instance.k),)
        assert abs(_exact_h1_ceiling(theta, instance.k) - float(h1(theta, instance.k))) < 1


def test_the_adaptive_topk_instances():
    from allocopt.testing.bandit_instances import synthetic_p, two_group, uniform

    spec = load_spec(SPECS / "adaptive_topk.toml")
    order = np.random.default_rng(0).permutation(1000)
    raw = {"TWOGROUP": two_group, "SYNTHETIC-0.5": lambda n, k: synthetic_p(n, k, 0.5),
           "UNIFORM": lambda n, k: uniform(n), "SYNTHETIC-6": lambda n, k: synthetic_p(n, k, 6.0)}
    for instance in spec.instances:
        name = instance.name.split(",")[0]
        theta = np.clip(raw[name](1000, instance.k), 1e-6, 1 - 1e-6)
        theta[instance.k:] -= 1e-9
        np.testing.assert_array_equal(instance.theta, theta[order])
        assert instance.checkpoints == (5000, 10000, 20000, 50000, 100000, 200000)
    assert spec.epsilon == 0.01
