"""The experiment spec: the issue's example accepted as written; every bad spec refused up front with its key path,
what was expected and what was found; nothing written."""

from __future__ import annotations

import copy
import sys

import numpy as np
import pytest
from experiment_helpers import ISSUE_SPEC, TINY, tiny

from allocopt.cli import main
from allocopt.exceptions import MissingDependencyError
from allocopt.experiments import SpecError, load_spec
from allocopt.experiments.spec import canonical_hash


def test_the_issue_example_is_accepted_as_written(tmp_path):
    path = tmp_path / "example.toml"
    path.write_text(ISSUE_SPEC)
    spec = load_spec(path)
    assert (spec.name, spec.seed, spec.n_runs, spec.chunk_size, spec.max_samples) == (
        "example", 20261128, 3000, 100, 200000)
    assert spec.setting == "confidence" and spec.threshold == "heuristic"
    assert [instance.name for instance in spec.instances] == ["gauss6", "bern5"]
    assert spec.instances[0].theta == (1.0, 0.9, 0.8, 0.5, 0.4, 0.3) and spec.instances[0].variance == 0.25
    assert spec.instances[1].family == "bernoulli" and spec.instances[1].variance is None
    assert [rule.label for rule in spec.rules] == ["kkt-ts", "uniform"]
    assert all(instance.checkpoints == (0.1, 0.01) for instance in spec.instances)
    assert len(spec.chunks(0)) == 30 and spec.chunks(0)[-1] == (2900, 3000)
    assert spec.text == ISSUE_SPEC and spec.source == str(path)


def test_a_dict_and_its_toml_have_one_hash(tmp_path):
    path = tmp_path / "example.toml"
    path.write_text(ISSUE_SPEC)
    from_file = load_spec(path)
    import tomllib

    from_dict = load_spec(tomllib.loads(ISSUE_SPEC))
    assert from_dict.hash == from_file.hash and len(from_file.hash) == 64
    # the canonical form reads back to the same spec, and its hash is that of the canonical JSON
    assert type(from_file).from_canonical(from_file.canonical()).hash == from_file.hash
    assert canonical_hash(from_file.canonical()) == from_file.hash
    # the replication counts are not part of the identity (a store may grow), everything else is
    more = load_spec({**tomllib.loads(ISSUE_SPEC), "n_runs": 4000})
    assert more.identity == from_file.identity and more.hash != from_file.hash
    other_seed = load_spec({**tomllib.loads(ISSUE_SPEC), "seed": 1})
    assert other_seed.identity != from_file.identity


def mutate(path: list, value) -> dict:
    """TINY with the value at ``path`` (keys and indices) replaced (``...`` deletes the key)."""
    spec = copy.deepcopy(TINY)
    target = spec
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return spec


BAD_SPECS = [
    # (what is changed, the key path in the message, a fragment of what was expected)
    (["seed"], ..., "seed", "a non-negative integer"),
    (["seed"], -1, "seed", "a non-negative integer"),
    (["n_runs"], 0, "n_runs", "an integer >= 1"),
    (["n_runs"], 2.5, "n_runs", "an integer >= 1"),
    (["chunk_size"], True, "chunk_size", "an integer >= 1"),
    (["color"], "red", "color", "one of the keys"),
    (["instances"], [], "instances", "a non-empty array"),
    (["instances", 1, "theta"], "abc", "instances[1].theta", "a list of at least 2 numbers"),
    (["instances", 1, "theta"], [0.7, "0.5", 0.4, 0.2], "instances[1].theta[1]", "numbers (the arm means)"),
    (["instances", 1, "theta"], [0.7, 0.5, 1.5, 0.2], "instances[1].theta", "for the bernoulli family"),
    (["instances", 0, "theta"], [1.0, 0.5, 0.5, 0.0], "instances[0].theta", "unique top-2 set"),
    (["instances", 0, "k"], 4, "instances[0].k", "1..K-1"),
    (["instances", 0, "family"], "cauchy", "instances[0].family", "one of the families"),
    (["instances", 1, "variance"], 0.25, "instances[1].variance", "no variance"),
    (["instances", 0, "variance"], -1.0, "instances[0].variance", "a positive number"),
    (["instances", 1, "name"], "gauss4", "instances[1].name", "a name no other instance has"),
    (["instances", 0, "colour"], 1, "instances[0].colour", "one of the keys"),
    (["instances", 0, "theta"], {"generator": "zipf", "n_arms": 5}, "instances[0].theta.generator",
     "one of the generators"),
    (["instances", 0, "theta"], {"generator": "two-group"}, "instances[0].theta.n_arms", "a parameter of the generator"),
    (["rules", 1, "name"], "no-such-rule", "rules[1].name", "a registered rule name"),
    (["rules", 0, "options"], {"kinds": "budget"}, "rules[0].options.kinds", "one of the options of kkt-ts: kind"),
    (["rules", 0, "options"], {"kind": "sideways"}, "rules[0].options.kind", "'confidence'"),
    (["rules", 1, "label"], "kkt-ts", "rules[1].label", "a label no other rule has"),
    (["rules", 1, "n_runs"], 0, "rules[1].n_runs", "an integer >= 1"),
    (["fixed_confidence", "delta"], [0.1, 1.5], "fixed_confidence.delta[1]", "in the open interval (0, 1)"),
    (["fixed_confidence", "delta"], [0.1, 0.1], "fixed_confidence.delta", "distinct"),
    (["fixed_confidence", "threshold"], "lenient", "fixed_confidence.threshold", "'heuristic'"),
    (["fixed_confidence"], ..., "fixed_confidence | fixed_budget | pac", "exactly one setting table"),
    (["max_samples"], 3, "max_samples", ">= 4"),
    (["report"], {"reference": "ttts"}, "report.reference", "the label of a rule"),
]


@pytest.mark.parametrize(("path", "value", "key", "expected"), BAD_SPECS,
                         ids=[f"{case[2]}-{index}" for index, case in enumerate(BAD_SPECS)])
def test_a_bad_spec_names_its_key_path(path, value, key, expected):
    with pytest.raises(SpecError) as caught:
        load_spec(mutate(path, value))
    error = caught.value
    assert error.path == key, str(error)
    assert expected in error.expected, str(error)
    assert str(error).startswith(f"{key}: expected ") and ", found " in str(error)


def test_the_cells_checks_are_key_paths_too():
    # SAR's first round needs a budget of K + 1 = 5 (its own check, run before anything)
    spec = tiny(fixed_confidence=..., rules=[{"name": "sar"}])
    del spec["fixed_confidence"]
    spec.pop("max_samples")
    spec["fixed_budget"] = {"budgets": [4, 40]}
    with pytest.raises(SpecError) as caught:
        load_spec(spec)
    assert caught.value.path == "fixed_budget.budgets" and "rules[0] = 'sar' on instances[0]" in caught.value.expected
    # a best-arm rule on a top-2 instance: the rule is refused, naming the cell
    with pytest.raises(SpecError) as caught:
        load_spec(tiny(rules=[{"name": "ttts"}]))
    assert caught.value.path == "rules[0]" and "k = 2" in caught.value.expected
    # a rule without its own stopping rule in the PAC setting
    pac = tiny(rules=[{"name": "kkt-ts"}])
    del pac["fixed_confidence"]
    pac["pac"] = {"epsilon": 0.1, "delta": 0.05}
    with pytest.raises(SpecError) as caught:
        load_spec(pac)
    assert caught.value.path == "rules[0]" and "stopping = 'rule'" in caught.value.expected
    # max_samples has no meaning with a fixed budget
    budget = tiny(fixed_budget={"budgets": [40]})
    del budget["fixed_confidence"]
    with pytest.raises(SpecError, match="max_samples: expected no max_samples with"):
        load_spec(budget)


def test_two_setting_tables_are_refused():
    with pytest.raises(SpecError, match="found the tables fixed_confidence, fixed_budget"):
        load_spec(tiny(fixed_budget={"budgets": [40]}))


def test_generators_measures_and_budget_grids(tmp_path):
    from allocopt.complexity import h1
    from allocopt.testing.bandit_instances import nsar_setup

    spec = load_spec({
        "name": "grid", "seed": 1, "n_runs": 10,
        "instances": [{"name": "setup 5", "k": 2, "family": "bernoulli",
                       "theta": {"generator": "nsar-setup", "setup": 5, "n_arms": 12, "seed": 5,
                                 "permutation_seed": 0}}],
        "rules": [{"name": "ugape", "label": "ugape (b)",
                   "options": {"mode": "budget", "a": 5.0, "complexity": {"measure": "h1"}}}],
        "fixed_budget": {"budgets": {"multiple_of": "h1", "values": [0.5, 1.0]}}})
    # computed here: setup 5 (Beta(5, 5) means drawn with seed 5), listed in the order of permutation seed 0
    theta = nsar_setup(5, 2, 12, rng=5)[np.random.default_rng(0).permutation(12)]
    np.testing.assert_array_equal(spec.instances[0].theta, theta)
    hardness = float(h1(theta, 2))
    assert spec.instances[0].checkpoints == tuple(sorted({int(np.ceil(0.5 * hardness)), int(np.ceil(hardness))}))
    assert spec.rules[0].rule(spec.instances[0]).complexity == hardness


def test_a_toml_syntax_error_and_a_missing_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("name = 'x'\nseed = [1,\n")
    with pytest.raises(SpecError, match=r"broken.toml: \(the file\): expected valid TOML, found a syntax error"):
        load_spec(path)
    with pytest.raises(Exception, match="must be a readable TOML file"):
        load_spec(tmp_path / "missing.toml")


def test_the_command_line_exits_2_with_the_key_path_and_writes_nothing(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text(ISSUE_SPEC.replace("theta = [0.7, 0.6, 0.5, 0.4, 0.3]", 'theta = [0.7, 0.6, "x", 0.4, 0.3]'))
    store = tmp_path / "store"
    status = main(["experiment", "run", str(path), "--store", str(store)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "instances[1].theta[2]: expected numbers (the arm means), found 'x' (text)" in err
    assert not store.exists()


def test_before_python_3_11_the_reader_is_tomli(monkeypatch):
    from allocopt.experiments import _deps

    monkeypatch.setattr(sys, "version_info", (3, 10, 0))
    monkeypatch.setitem(sys.modules, "tomli", None)
    with pytest.raises(MissingDependencyError, match=r'reading a TOML spec needs tomli.*pip install "allocopt\[experiments\]"'):
        _deps.toml_reader()


def test_a_budget_grid_of_h1_is_the_ceiling_of_the_exact_measure():
    # H1 of theta = (0.7, 0.5), k = 1: both gaps are 0.7 - 0.5 = 1/5 in exact arithmetic, so H1 = 2 * 25 = 50;
    # in floating point 1/(0.7 - 0.5)^2 = 25.000000000000007 and a plain ceiling of the sum gives 51
    from fractions import Fraction

    gap = Fraction("0.7") - Fraction("0.5")
    exact = 2 / gap**2
    assert exact == 50 and 2 / (0.7 - 0.5) ** 2 > 50
    spec = tiny(instances=[{"name": "two", "theta": [0.7, 0.5], "k": 1, "family": "bernoulli"}],
                fixed_budget={"budgets": {"multiple_of": "h1", "values": [1.0, 1.5]}})
    spec.pop("fixed_confidence", None)
    spec.pop("max_samples", None)
    assert load_spec(spec).instances[0].checkpoints == (50, 75)


def test_budget_ceiling_rounds_only_within_its_tolerance():
    from allocopt.experiments.spec import budget_ceiling

    assert budget_ceiling(1250.0000000000005) == 1250  # H1 of gaps 0.1 and 0.2 summed in floating point
    assert budget_ceiling(1249.9999999999995) == 1250
    assert budget_ceiling(1250.0001) == 1251  # a real excess of 1e-4 pulls, far above 1e-9 relative
    assert budget_ceiling(0.5) == 1
