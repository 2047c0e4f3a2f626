r"""The experiment spec: instances, rules, one setting and the replications, as a TOML file or a Python dict.

An experiment is the product of its instances and its rules in one setting; every (instance, rule) cell runs
``n_runs`` replications with the root entropy ``seed``, in chunks of ``chunk_size`` replications. Replication
``i`` of every rule on an instance reads the same rewards (common random numbers), so rules are compared in pairs.

.. code-block:: toml

    name = "example"
    seed = 20261128
    n_runs = 3000
    chunk_size = 100            # default 100
    max_samples = 200000        # fixed confidence and PAC (default 10**6)

    [[instances]]
    name = "gauss6"
    theta = [1.0, 0.9, 0.8, 0.5, 0.4, 0.3]
    k = 2
    family = "gaussian"         # default; also bernoulli, poisson, exponential, gamma (with shape = ...)
    variance = 0.25             # gaussian only: one number or one per arm

    [[rules]]
    name = "kkt-ts"             # a registered rule (allocopt.algorithms.POLICIES)
    # label = "KKT-TS"          # default: the name; labels are unique
    # options = { kind = "confidence" }   # fields of the rule's configuration
    # n_runs = 1000             # this rule's replications, if not the experiment's

    [fixed_confidence]
    delta = [0.1, 0.01]
    # threshold = "heuristic"   # or "theoretical"

The setting is one table: ``[fixed_confidence]`` (``delta``, ``threshold``), ``[fixed_budget]`` (``budgets``, and
optionally ``epsilon``: a recommendation is then correct when its aggregate regret is at most epsilon, instead of
when it is the exact top-k) or ``[pac]`` (``epsilon``, ``delta``: one number each). Three extensions cover the
seed experiments:

* ``theta`` may be a generator table, ``{ generator = "nsar-setup", setup = 1, n_arms = 50, seed = 5 }``, naming one
  of :data:`GENERATORS` (the instances of :mod:`allocopt.testing.bandit_instances`, with the instance's ``k``) and
  its parameters, then optionally ``clip = [low, high]`` (clip the means), ``lower_rest = e`` (lower every arm
  after the generator's first ``k``, which it ranks best first, by ``e``) and ``permutation_seed = s`` (list the
  arms in the order ``numpy.random.default_rng(s).permutation(K)``), applied in that order;
* ``budgets`` may be a grid relative to each instance, ``{ multiple_of = "h1", values = [1.0] }``: the budgets
  ``ceil(v * m)`` for every ``v`` (:func:`budget_ceiling`: a value within a relative 1e-9 of an integer is that
  integer), with ``m`` one of :data:`MEASURES` (``"n_arms"``: K; ``"h1"``:
  :math:`H_1^{(k)} = \sum_i \Delta_i^{-2}`, :func:`allocopt.complexity.h1`);
* a rule option may be such a measure of each instance, ``options = { complexity = { measure = "h1" } }``.

An instance may also carry ``group`` (text) and ``x`` (a number): the report draws the instances of one group in
one panel against ``x`` (for example the number of arms), instead of one panel per instance. An optional
``[report]`` table sets ``reference`` (the rule, or a list of rules, the paired differences are taken against;
default the first rule), ``x_label``, ``notes`` (text printed in the report), ``measures`` (a list of
:data:`MEASURES` shown for every instance) and ``characteristic_time`` (true: the report computes :math:`T^*` of
every instance, fixed confidence only).

Everything is checked before anything runs or is written: a bad spec raises :class:`SpecError`, whose message
gives the key path (``instances[1].theta``), what was expected and what was found. The checks include every
(instance, rule) cell's own checks (k, family, budgets, the sample cap), through
:func:`allocopt.algorithms.run_chunk` on an empty range.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import describe
from ..exceptions import AllocoptError, InvalidArgumentError

__all__ = ["ExperimentSpec", "InstanceSpec", "RuleSpec", "SpecError", "load_spec", "budget_ceiling", "GENERATORS",
           "MEASURES", "SETTING_TABLES", "SPEC_FORMAT"]

SPEC_FORMAT = 1
SETTING_TABLES = {"fixed_confidence": "confidence", "fixed_budget": "budget", "pac": "pac"}
_TOP_KEYS = ("name", "description", "seed", "n_runs", "chunk_size", "max_samples", "instances", "rules",
             "fixed_confidence", "fixed_budget", "pac", "report")
_INSTANCE_KEYS = ("name", "theta", "k", "family", "variance", "shape", "group", "x")
_RULE_KEYS = ("name", "label", "options", "n_runs")
_REPORT_KEYS = ("reference", "x_label", "notes", "characteristic_time", "measures")
_THRESHOLDS = ("heuristic", "theoretical")
DEFAULT_CHUNK_SIZE = 100


class SpecError(InvalidArgumentError):
    """A spec that cannot be run: ``path`` (the key path, e.g. ``instances[1].theta``), ``expected`` and ``found``."""

    def __init__(self, path: str, expected: str, found: str, source: str | None = None):
        self.path, self.expected, self.found, self.source = path, expected, found, source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{path}: expected {expected}, found {found}")


_MISSING = object()


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "a table"
    return f"a {type(value).__name__}"


def _found(value: Any) -> str:
    if value is _MISSING:
        return "nothing (the key is missing)"
    return f"{describe(value)} ({_kind(value)})"


def _refuse(path: str, expected: str, value: Any) -> SpecError:
    return SpecError(path, expected, _found(value))


_LIBRARY_MESSAGE = re.compile(r"The '(?P<name>[^']+)' parameter of (?P<func>.+?) must (?:be )?(?P<requirement>.*?)\. "
                              r"Got (?P<value>.*) instead(?P<rest>.*?)\.?$", re.DOTALL)


def _translated(error: AllocoptError, paths: Mapping[str, str], default: str, context: str = "") -> SpecError:
    """A library error as a spec error: the parameter it names mapped to a key path (else ``default``)."""
    text = " ".join(str(error).split())
    match = _LIBRARY_MESSAGE.match(text)
    if match is None:
        return SpecError(default, f"a valid setting{context}", f"an error: {text}")
    path = paths.get(match["name"], default)
    found = match["value"] + match["rest"].rstrip(".")
    if path == default:
        found += f" (the {match['name']!r} of {match['func']})"
    return SpecError(path, match["requirement"] + context, found)


# ---------------------------------------------------------------------------------------------- readers


def _table(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _refuse(path, "a table", value)
    for key in value:
        if not isinstance(key, str):
            raise _refuse(path, "a table with text keys", key)
    return dict(value)


def _keys(table: Mapping[str, Any], path: str, allowed: tuple[str, ...]) -> None:
    for key in table:
        if key not in allowed:
            prefix = f"{path}." if path else ""
            raise SpecError(f"{prefix}{key}", "one of the keys " + ", ".join(allowed), f"the unknown key {key!r}")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _text(value: Any, path: str, what: str = "non-empty text") -> str:
    if not isinstance(value, str) or not value.strip():
        raise _refuse(path, what, value)
    return value


def _integer(value: Any, path: str, low: int, what: str | None = None) -> int:
    what = what or f"an integer >= {low}"
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < low:
        raise _refuse(path, what, value)
    return int(value)


def _number(value: Any, path: str, what: str, check: Callable[[float], bool] = math.isfinite) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _refuse(path, what, value)
    number = float(value)
    if not math.isfinite(number) or not check(number):
        raise _refuse(path, what, value)
    return number


def _numbers(value: Any, path: str, what: str, check: Callable[[float], bool] = math.isfinite,
             min_length: int = 1) -> list[float]:
    if not isinstance(value, (list, tuple)) or len(value) < min_length:
        raise _refuse(path, f"a list of at least {min_length} {what}", value)
    return [_number(item, f"{path}[{index}]", what, check) for index, item in enumerate(value)]


def _plain(value: Any) -> Any:
    """TOML or dict values as plain, canonical Python: tuples for lists, dicts with sorted keys, ints and floats."""
    if isinstance(value, Mapping):
        return {str(key): _plain(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return tuple(_plain(item) for item in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    return value


# ---------------------------------------------------------------------------------------------- generators


def _nsar(params: dict[str, Any], k: int) -> np.ndarray:
    from ..testing.bandit_instances import nsar_setup

    return nsar_setup(params["setup"], k, params.get("n_arms", 50), rng=params.get("seed"),
                      top_mean=params.get("top_mean", 0.7))


def _with_k(name: str) -> Callable[[dict[str, Any], int], np.ndarray]:
    def generate(params: dict[str, Any], k: int) -> np.ndarray:
        from ..testing import bandit_instances

        return getattr(bandit_instances, name)(k=k, **params)
    return generate


def _without_k(name: str) -> Callable[[dict[str, Any], int], np.ndarray]:
    def generate(params: dict[str, Any], k: int) -> np.ndarray:
        from ..testing import bandit_instances

        return getattr(bandit_instances, name)(**params)
    return generate


# name -> (function of (parameters, k), {parameter: "int" or "number"}, required parameters)
GENERATORS: dict[str, tuple[Callable[[dict[str, Any], int], np.ndarray], dict[str, str], tuple[str, ...]]] = {
    "nsar-setup": (_nsar, {"setup": "int", "n_arms": "int", "seed": "int", "top_mean": "number"}, ("setup",)),
    "one-sparse": (_with_k("one_sparse"), {"n_arms": "int"}, ("n_arms",)),
    "alpha-exponential": (_with_k("alpha_exponential"), {"n_arms": "int", "alpha": "number"}, ("n_arms",)),
    "lil-exponential": (_without_k("lil_exponential"), {"n_arms": "int", "alpha": "number"}, ("n_arms", "alpha")),
    "two-group": (_with_k("two_group"), {"n_arms": "int"}, ("n_arms",)),
    "uniform": (_without_k("uniform"), {"n_arms": "int"}, ("n_arms",)),
    "synthetic-p": (_with_k("synthetic_p"), {"n_arms": "int", "p": "number"}, ("n_arms", "p")),
}
"""Generators of mean vectors a spec may name (``theta = { generator = NAME, ... }``): the instances of
:mod:`allocopt.testing.bandit_instances` (Shahrampour and Tarokh 2017; Chen, Chen, Zhang, Zhou 2017; Jiang, Li, Qiao
2017), with the instance's ``k`` where the instance depends on it."""

_TRANSFORMS = ("clip", "lower_rest", "permutation_seed")


def _h1(theta: np.ndarray, k: int) -> float:
    from ..complexity import h1

    return float(h1(theta, k))


MEASURES: dict[str, Callable[[np.ndarray, int], float]] = {
    "n_arms": lambda theta, k: float(theta.shape[0]),
    "h1": _h1,
}
"""Measures of an instance a spec may refer to (budget grids, rule options)."""


def _generated_theta(table: dict[str, Any], path: str, k: int) -> np.ndarray:
    name = table.get("generator", _MISSING)
    if not isinstance(name, str) or name not in GENERATORS:
        raise _refuse(_join(path, "generator"), "one of the generators " + ", ".join(GENERATORS), name)
    function, parameters, required = GENERATORS[name]
    _keys(table, path, ("generator", *parameters, *_TRANSFORMS))
    params: dict[str, Any] = {}
    for key, kind in parameters.items():
        if key in table:
            params[key] = (_integer(table[key], _join(path, key), 0, "a non-negative integer") if kind == "int"
                           else _number(table[key], _join(path, key), "a finite number"))
        elif key in required:
            raise _refuse(_join(path, key), f"a parameter of the generator {name!r}", _MISSING)
    try:
        theta = np.array(function(params, k), dtype=float)
    except AllocoptError as error:
        raise _translated(error, {key: _join(path, key) for key in parameters}, path) from None
    if "clip" in table:
        low, high = _numbers(table["clip"], _join(path, "clip"), "numbers", min_length=2)[:2]
        if len(table["clip"]) != 2 or not low < high:
            raise _refuse(_join(path, "clip"), "two numbers [low, high] with low < high", table["clip"])
        theta = np.clip(theta, low, high)
    if "lower_rest" in table:
        theta[k:] -= _number(table["lower_rest"], _join(path, "lower_rest"), "a number >= 0", lambda x: x >= 0)
    if "permutation_seed" in table:
        seed = _integer(table["permutation_seed"], _join(path, "permutation_seed"), 0, "a non-negative integer")
        theta = theta[np.random.default_rng(seed).permutation(theta.size)]
    return theta


# ---------------------------------------------------------------------------------------------- the spec


@dataclass(frozen=True)
class InstanceSpec:
    """One instance of the spec, resolved: the means as numbers and its checkpoints (deltas or budgets).

    Attributes
    ----------
    name : str
    theta : tuple of float
    k : int
    family : str
    variance : float or tuple of float or None
        Gaussian variance (None for the other families).
    shape : float or None
        Gamma shape.
    source : dict or None
        The generator table ``theta`` was made from (None for a list of numbers).
    checkpoints : tuple
        The confidence levels (fixed confidence, PAC: the one delta) or the budgets, in the records' order.
    group : str or None
    x : float or None
    """

    name: str
    theta: tuple[float, ...]
    k: int
    family: str
    variance: float | tuple[float, ...] | None
    shape: float | None
    source: dict[str, Any] | None
    checkpoints: tuple[float, ...] | tuple[int, ...]
    group: str | None = None
    x: float | None = None

    def problem(self) -> Any:
        """The :class:`~allocopt.TopKProblem` of this instance."""
        from ..families import Gamma
        from ..topk import TopKProblem

        family: Any = Gamma(float(self.shape or 0.0)) if self.family == "gamma" else self.family
        variance: Any = 1.0 if self.variance is None else (
            list(self.variance) if isinstance(self.variance, tuple) else self.variance)
        return TopKProblem(list(self.theta), self.k, family=family, variance=variance)

    def measure(self, name: str) -> float:
        """One of :data:`MEASURES` of this instance."""
        return MEASURES[name](np.asarray(self.theta), self.k)


@dataclass(frozen=True)
class RuleSpec:
    """One rule of the spec: its ``label`` (unique), registered ``name``, ``options`` and replications."""

    label: str
    name: str
    options: dict[str, Any]
    n_runs: int

    def rule(self, instance: InstanceSpec) -> Any:
        """The rule object for ``instance`` (options that are measures of the instance resolved)."""
        from ..algorithms import POLICIES

        default = POLICIES[self.name]()
        resolved = {key: (instance.measure(value["measure"]) if _is_measure(value) else value)
                    for key, value in self.options.items()}
        return dataclasses.replace(default, **resolved) if resolved else default


def _is_measure(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"measure"}


@dataclass(frozen=True)
class ExperimentSpec:
    """A validated experiment: build it with :func:`load_spec`.

    Attributes
    ----------
    name, description : str
    seed, n_runs, chunk_size : int
    max_samples : int or None
    setting : {"confidence", "budget", "pac"}
    threshold : str
        Fixed confidence: ``"heuristic"`` or ``"theoretical"``.
    epsilon : float or None
        PAC, and fixed budget when given: the tolerance on the aggregate regret.
    instances : tuple of InstanceSpec
    rules : tuple of RuleSpec
    report : dict
        The ``[report]`` table.
    text : str
        The spec as given (the TOML text, or JSON for a dict).
    source : str or None
        The file it was read from.
    """

    name: str
    description: str
    seed: int
    n_runs: int
    chunk_size: int
    max_samples: int | None
    setting: str
    threshold: str
    epsilon: float | None
    instances: tuple[InstanceSpec, ...]
    rules: tuple[RuleSpec, ...]
    report: dict[str, Any] = field(default_factory=dict)
    text: str = field(default="", compare=False)
    source: str | None = field(default=None, compare=False)

    @property
    def checkpoint_name(self) -> str:
        """The column of the checkpoints in the records: ``"budget"`` or ``"delta"``."""
        return "budget" if self.setting == "budget" else "delta"

    def chunks(self, rule: int) -> list[tuple[int, int]]:
        """The ranges ``(start, stop)`` of rule ``rule``'s replications: multiples of ``chunk_size``."""
        runs = self.rules[rule].n_runs
        return [(start, min(start + self.chunk_size, runs)) for start in range(0, runs, self.chunk_size)]

    def cell_options(self, instance: int) -> dict[str, Any]:
        """The setting's arguments of :func:`allocopt.algorithms.run_chunk` for ``instance``."""
        checkpoints = list(self.instances[instance].checkpoints)
        if self.setting == "confidence":
            return {"setting": "confidence", "delta": checkpoints, "threshold": self.threshold,
                    "max_samples": self.max_samples}
        if self.setting == "budget":
            return {"setting": "budget", "budgets": checkpoints, "epsilon": self.epsilon}
        return {"setting": "pac", "epsilon": self.epsilon, "delta": checkpoints[0], "max_samples": self.max_samples}

    def canonical(self) -> dict[str, Any]:
        """The spec as plain JSON data, resolved (means and checkpoints as numbers): what its hash is of."""
        instances = [{"name": item.name, "theta": list(item.theta), "k": item.k, "family": item.family,
                      "variance": _jsonable(item.variance), "shape": item.shape, "source": _jsonable(item.source),
                      "checkpoints": list(item.checkpoints), "group": item.group, "x": item.x}
                     for item in self.instances]
        rules = [{"label": item.label, "name": item.name, "options": _jsonable(item.options), "n_runs": item.n_runs}
                 for item in self.rules]
        return {"format": SPEC_FORMAT, "name": self.name, "description": self.description, "seed": self.seed,
                "n_runs": self.n_runs, "chunk_size": self.chunk_size, "max_samples": self.max_samples,
                "setting": self.setting, "threshold": self.threshold, "epsilon": self.epsilon,
                "instances": instances, "rules": rules, "report": _jsonable(self.report)}

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical form (JSON with sorted keys; floats written so that they read back exactly)."""
        return canonical_hash(self.canonical())

    @property
    def identity(self) -> str:
        """The hash of what the records depend on, and the name: the canonical form without the replication counts
        and without the presentation (``description``, ``[report]``, the instances' ``group`` and ``x``). Specs
        with one identity describe the same records (a store may grow, and its presentation may change: see
        :func:`allocopt.experiments.run_experiment`)."""
        return canonical_hash(records_part(self.canonical()))

    @classmethod
    def from_canonical(cls, canonical: Mapping[str, Any], *, text: str = "", source: str | None = None
                       ) -> ExperimentSpec:
        """The spec of :meth:`canonical` (as kept in a store)."""
        instances = tuple(InstanceSpec(
            name=item["name"], theta=tuple(item["theta"]), k=item["k"], family=item["family"],
            variance=_plain(item["variance"]), shape=item["shape"], source=item["source"],
            checkpoints=tuple(item["checkpoints"]), group=item["group"], x=item["x"]) for item in canonical["instances"])
        rules = tuple(RuleSpec(label=item["label"], name=item["name"], options=dict(_plain(item["options"])),
                               n_runs=item["n_runs"]) for item in canonical["rules"])
        return cls(name=canonical["name"], description=canonical["description"], seed=canonical["seed"],
                   n_runs=canonical["n_runs"], chunk_size=canonical["chunk_size"],
                   max_samples=canonical["max_samples"], setting=canonical["setting"],
                   threshold=canonical["threshold"], epsilon=canonical["epsilon"], instances=instances, rules=rules,
                   report=dict(canonical["report"]), text=text, source=source)


PRESENTATION = ("description", "report")
INSTANCE_PRESENTATION = ("group", "x")


def records_part(canonical: Mapping[str, Any]) -> dict[str, Any]:
    """The canonical form without the replication counts and the presentation (what :attr:`ExperimentSpec.identity`
    is the hash of)."""
    part = {key: value for key, value in canonical.items() if key not in PRESENTATION}
    part["n_runs"] = None
    part["rules"] = [dict(rule, n_runs=None) for rule in canonical["rules"]]
    part["instances"] = [{key: value for key, value in instance.items() if key not in INSTANCE_PRESENTATION}
                         for instance in canonical["instances"]]
    return part


def canonical_hash(canonical: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of ``canonical`` written as compact JSON with sorted keys."""
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


# ---------------------------------------------------------------------------------------------- parsing


def _instance(raw: Any, index: int) -> tuple[dict[str, Any], InstanceSpec]:
    """The checked fields of ``instances[index]`` (checkpoints still empty)."""
    from ..families import FAMILIES

    path = f"instances[{index}]"
    table = _table(raw, path)
    _keys(table, path, _INSTANCE_KEYS)
    name = _text(table.get("name", _MISSING), _join(path, "name"))
    k = _integer(table.get("k", _MISSING), _join(path, "k"), 1, "an integer >= 1 (the size of the top set)")
    family = table.get("family", "gaussian")
    if not isinstance(family, str) or family not in FAMILIES:
        raise _refuse(_join(path, "family"), "one of the families " + ", ".join(FAMILIES), family)
    variance: Any = None
    if "variance" in table:
        if family != "gaussian":
            raise _refuse(_join(path, "variance"), "no variance: the " + family + " family has its variance fixed "
                          "by its mean (variance is for family = \"gaussian\")", table["variance"])
        value = table["variance"]
        positive = "positive finite numbers"
        variance = (tuple(_numbers(value, _join(path, "variance"), positive, lambda x: x > 0))
                    if isinstance(value, (list, tuple)) else
                    _number(value, _join(path, "variance"), "a positive number or a list of them", lambda x: x > 0))
    shape = None
    if family == "gamma" or "shape" in table:
        if family != "gamma":
            raise _refuse(_join(path, "shape"), "no shape (shape is for family = \"gamma\")", table["shape"])
        shape = _number(table.get("shape", _MISSING), _join(path, "shape"), "the gamma shape, a positive number",
                        lambda x: x > 0)
    theta_value = table.get("theta", _MISSING)
    source = None
    if isinstance(theta_value, Mapping):
        source = dict(_plain(_table(theta_value, _join(path, "theta"))))
        theta = tuple(float(value) for value in _generated_theta(dict(theta_value), _join(path, "theta"), k))
    else:
        theta = tuple(_numbers(theta_value, _join(path, "theta"), "numbers (the arm means)", min_length=2)
                      if isinstance(theta_value, (list, tuple)) else
                      _refuse_theta(theta_value, _join(path, "theta")))
    group = None if "group" not in table else _text(table["group"], _join(path, "group"))
    x = None if "x" not in table else _number(table["x"], _join(path, "x"), "a finite number")
    spec = InstanceSpec(name=name, theta=theta, k=k, family=family, variance=variance, shape=shape, source=source,
                        checkpoints=(), group=group, x=x)
    try:
        problem = spec.problem()
    except AllocoptError as error:
        raise _translated(error, {"theta": _join(path, "theta"), "k": _join(path, "k"),
                                  "variance": _join(path, "variance"), "shape": _join(path, "shape"),
                                  "family": _join(path, "family")}, path) from None
    return {"problem": problem}, spec


def _refuse_theta(value: Any, path: str) -> tuple[float, ...]:
    raise _refuse(path, "a list of at least 2 numbers (the arm means) or a generator table "
                  "{ generator = ..., ... }", value)


def _rule(raw: Any, index: int, n_runs: int) -> RuleSpec:
    from ..algorithms import POLICIES

    path = f"rules[{index}]"
    table = _table(raw, path)
    _keys(table, path, _RULE_KEYS)
    name = table.get("name", _MISSING)
    if not isinstance(name, str) or name not in POLICIES:
        raise _refuse(_join(path, "name"), "a registered rule name (one of " + ", ".join(sorted(POLICIES)) + ")", name)
    label = _text(table.get("label", name), _join(path, "label"))
    options = _table(table.get("options", {}), _join(path, "options"))
    default = POLICIES[name]()
    fields = [item.name for item in dataclasses.fields(default) if item.init] if dataclasses.is_dataclass(default) else []
    for key, value in options.items():
        if key not in fields:
            allowed = ("one of the options of " + name + ": " + ", ".join(fields)) if fields else f"no option ({name} has none)"
            raise SpecError(f"{path}.options.{key}", allowed, f"the unknown option {key!r}")
        if isinstance(value, Mapping) and "measure" in value:
            if not _is_measure(value) or value["measure"] not in MEASURES:
                raise _refuse(f"{path}.options.{key}.measure", "one of the measures " + ", ".join(MEASURES),
                              value.get("measure", _MISSING))
    runs = n_runs if "n_runs" not in table else _integer(table["n_runs"], _join(path, "n_runs"), 1)
    return RuleSpec(label=label, name=name, options=dict(_plain(options)), n_runs=runs)


def _deltas(value: Any, path: str) -> tuple[float, ...]:
    what = "confidence levels in the open interval (0, 1)"
    levels = (_numbers(value, path, what, lambda x: 0 < x < 1) if isinstance(value, (list, tuple))
              else [_number(value, path, f"a list of {what}", lambda x: 0 < x < 1)])
    if len(set(levels)) != len(levels):
        raise _refuse(path, f"distinct {what}", value)
    return tuple(levels)


def budget_ceiling(value: float) -> int:
    r"""The budget ``ceil(value)`` of a measure computed in floating point, where a value within a relative
    ``1e-9`` of an integer is that integer.

    A measure such as :math:`H_1 = \sum_i \Delta_i^{-2}` of decimal means is an integer in exact arithmetic
    (1250 for gaps of 0.1 and 0.2) but a sum of rounded reciprocals in floating point (1250.0000000000005), whose
    plain ceiling is one pull too many.

    Examples
    --------
    >>> budget_ceiling(1250.0000000000005), budget_ceiling(1250.2), budget_ceiling(1249.9999999999998)
    (1250, 1251, 1250)
    """
    nearest = round(value)
    if abs(value - nearest) <= 1e-9 * max(1.0, abs(value)):
        return int(nearest)
    return int(math.ceil(value))


def _budget_grid(value: Any, path: str) -> Callable[[InstanceSpec], tuple[int, ...]]:
    """The budgets of each instance: a list of integers, or a grid ``{multiple_of, values}``."""
    if isinstance(value, Mapping):
        table = _table(value, path)
        _keys(table, path, ("multiple_of", "values"))
        measure = table.get("multiple_of", _MISSING)
        if measure not in MEASURES:
            raise _refuse(_join(path, "multiple_of"), "one of the measures " + ", ".join(MEASURES), measure)
        values = _numbers(table.get("values", _MISSING), _join(path, "values"), "positive numbers", lambda x: x > 0)
        return lambda instance: tuple(sorted({budget_ceiling(v * instance.measure(measure)) for v in values}))
    if not isinstance(value, (list, tuple)) or not value:
        raise _refuse(path, "a list of budgets (integers >= 1) or a grid { multiple_of = ..., values = [...] }",
                      value)
    budgets = [_integer(item, f"{path}[{index}]", 1, "a budget, an integer >= 1") for index, item in enumerate(value)]
    if len(set(budgets)) != len(budgets):
        raise _refuse(path, "distinct budgets", value)
    return lambda instance: tuple(sorted(budgets))


def _setting(document: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    present = [key for key in SETTING_TABLES if key in document]
    if len(present) != 1:
        raise SpecError("fixed_confidence | fixed_budget | pac", "exactly one setting table",
                        "none" if not present else "the tables " + ", ".join(present))
    key = present[0]
    table = _table(document[key], key)
    allowed = {"fixed_confidence": ("delta", "threshold"), "fixed_budget": ("budgets", "epsilon"),
               "pac": ("epsilon", "delta")}[key]
    _keys(table, key, allowed)
    return SETTING_TABLES[key], table, key


def _report(value: Any, labels: list[str], setting: str) -> dict[str, Any]:
    table = _table(value, "report")
    _keys(table, "report", _REPORT_KEYS)
    if "reference" in table:
        references = table["reference"] if isinstance(table["reference"], (list, tuple)) else [table["reference"]]
        for index, reference in enumerate(references):
            if reference not in labels:
                path = "report.reference" + (f"[{index}]" if isinstance(table["reference"], (list, tuple)) else "")
                raise _refuse(path, "the label of a rule (one of " + ", ".join(labels) + ")", reference)
    if "measures" in table:
        measures = table["measures"]
        if not isinstance(measures, (list, tuple)) or any(item not in MEASURES for item in measures):
            raise _refuse("report.measures", "a list of measures of the instances (of " + ", ".join(MEASURES) + ")",
                          measures)
    for key in ("x_label", "notes"):
        if key in table:
            _text(table[key], f"report.{key}", "text")
    if "characteristic_time" in table:
        if not isinstance(table["characteristic_time"], bool):
            raise _refuse("report.characteristic_time", "true or false", table["characteristic_time"])
        if table["characteristic_time"] and setting != "confidence":
            raise _refuse("report.characteristic_time", "false outside the fixed-confidence setting", True)
    return dict(_plain(table))


def _check_cells(spec: ExperimentSpec, problems: list[Any], setting_key: str) -> None:
    """Every (instance, rule) cell through run_chunk on an empty range: the runner's own checks, as key paths."""
    from ..algorithms import run_chunk

    for j, rule_spec in enumerate(spec.rules):
        for i, instance in enumerate(spec.instances):
            context = f" (for rules[{j}] = {rule_spec.label!r} on instances[{i}] = {instance.name!r})"
            paths = {"policy": f"rules[{j}]", "max_samples": "max_samples", "delta": f"{setting_key}.delta",
                     "epsilon": f"{setting_key}.epsilon", "threshold": f"{setting_key}.threshold"}
            if spec.setting == "budget":
                paths.update(budgets=f"{setting_key}.budgets", budget=f"{setting_key}.budgets")
            try:
                rule = rule_spec.rule(instance)
            except AllocoptError as error:
                raise _translated(error, {key: f"rules[{j}].options.{key}" for key in rule_spec.options},
                                  f"rules[{j}].options", context) from None
            except (TypeError, ValueError) as error:
                raise SpecError(f"rules[{j}].options", "options the rule accepts" + context,
                                f"an error: {' '.join(str(error).split())}") from None
            try:
                run_chunk(problems[i], rule, start=0, stop=0, rng=spec.seed, **spec.cell_options(i))
            except AllocoptError as error:
                raise _translated(error, paths, f"rules[{j}]", context) from None


def _build(document: Mapping[str, Any]) -> ExperimentSpec:
    document = _table(document, "(the spec)")
    _keys(document, "", _TOP_KEYS)
    name = _text(document.get("name", _MISSING), "name")
    description = document.get("description", "")
    if not isinstance(description, str):
        raise _refuse("description", "text", description)
    seed = _integer(document.get("seed", _MISSING), "seed", 0, "a non-negative integer (the root entropy)")
    n_runs = _integer(document.get("n_runs", _MISSING), "n_runs", 1)
    chunk_size = _integer(document.get("chunk_size", DEFAULT_CHUNK_SIZE), "chunk_size", 1)
    setting, table, setting_key = _setting(document)
    max_samples = None
    if "max_samples" in document:
        if setting == "budget":
            raise _refuse("max_samples", "no max_samples with [fixed_budget] (the last budget caps every run)",
                          document["max_samples"])
        max_samples = _integer(document["max_samples"], "max_samples", 1)
    raw_instances = document.get("instances", _MISSING)
    if not isinstance(raw_instances, (list, tuple)) or not raw_instances:
        raise _refuse("instances", "a non-empty array of instance tables ([[instances]])", raw_instances)
    checked = [_instance(raw, index) for index, raw in enumerate(raw_instances)]
    names = [spec.name for _, spec in checked]
    for index, name_ in enumerate(names):
        if name_ in names[:index]:
            raise _refuse(f"instances[{index}].name", "a name no other instance has", name_)
    raw_rules = document.get("rules", _MISSING)
    if not isinstance(raw_rules, (list, tuple)) or not raw_rules:
        raise _refuse("rules", "a non-empty array of rule tables ([[rules]])", raw_rules)
    rules = tuple(_rule(raw, index, n_runs) for index, raw in enumerate(raw_rules))
    labels = [rule.label for rule in rules]
    for index, label in enumerate(labels):
        if label in labels[:index]:
            raise _refuse(f"rules[{index}].label", "a label no other rule has (give label = ... to run one rule "
                          "twice with other options)", label)
    threshold, epsilon = "heuristic", None
    if setting == "confidence":
        deltas = _deltas(table.get("delta", _MISSING), f"{setting_key}.delta")
        threshold = table.get("threshold", "heuristic")
        if threshold not in _THRESHOLDS:
            raise _refuse(f"{setting_key}.threshold", "one of " + ", ".join(map(repr, _THRESHOLDS)), threshold)
        checkpoints: Callable[[InstanceSpec], tuple] = lambda instance: deltas
    elif setting == "budget":
        checkpoints = _budget_grid(table.get("budgets", _MISSING), f"{setting_key}.budgets")
        if "epsilon" in table:
            epsilon = _number(table["epsilon"], f"{setting_key}.epsilon", "a positive number", lambda x: x > 0)
    else:
        epsilon = _number(table.get("epsilon", _MISSING), "pac.epsilon", "a positive number", lambda x: x > 0)
        delta = _number(table.get("delta", _MISSING), "pac.delta", "a confidence parameter in (0, 1)",
                        lambda x: 0 < x < 1)
        checkpoints = lambda instance: (delta,)
    instances = tuple(dataclasses.replace(spec, checkpoints=checkpoints(spec)) for _, spec in checked)
    report = _report(document.get("report", {}), labels, setting)
    spec = ExperimentSpec(name=name, description=description, seed=seed, n_runs=n_runs, chunk_size=chunk_size,
                          max_samples=max_samples, setting=setting, threshold=threshold, epsilon=epsilon,
                          instances=instances, rules=rules, report=report)
    _check_cells(spec, [extra["problem"] for extra, _ in checked], setting_key)
    return spec


def load_spec(spec: Any) -> ExperimentSpec:
    """Read and check an experiment spec: a path to a TOML file, a dict, or an :class:`ExperimentSpec`.

    Raises
    ------
    SpecError
        With the key path, what was expected and what was found. Nothing is run or written.

    Examples
    --------
    >>> spec = load_spec({"name": "tiny", "seed": 1, "n_runs": 30, "chunk_size": 10,
    ...                   "instances": [{"name": "g", "theta": [1.0, 0.5, 0.0], "k": 1}],
    ...                   "rules": [{"name": "kkt-ts"}, {"name": "uniform"}],
    ...                   "fixed_confidence": {"delta": [0.1, 0.01]}})
    >>> spec.setting, [rule.label for rule in spec.rules], spec.chunks(0)
    ('confidence', ['kkt-ts', 'uniform'], [(0, 10), (10, 20), (20, 30)])
    >>> load_spec({**spec.canonical(), "format": None})
    Traceback (most recent call last):
    ...
    allocopt.experiments.spec.SpecError: format: expected one of the keys name, description, seed, n_runs, chunk_size, max_samples, instances, rules, fixed_confidence, fixed_budget, pac, report, found the unknown key 'format'
    """
    if isinstance(spec, ExperimentSpec):
        return spec
    if isinstance(spec, Mapping):
        text = json.dumps(_jsonable(_plain(spec)), indent=2, sort_keys=True, allow_nan=False, default=repr)
        return dataclasses.replace(_build(spec), text=text, source=None)
    if not isinstance(spec, (str, Path)):
        raise InvalidArgumentError(f"The 'spec' parameter of load_spec must be a path to a TOML file, a dict or an "
                                   f"ExperimentSpec. Got {describe(spec)} instead.")
    from ._deps import toml_reader

    path = Path(spec)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidArgumentError(f"The 'spec' parameter of load_spec must be a readable TOML file. Got "
                                   f"{str(path)!r} instead ({error.__class__.__name__}: {error}).") from None
    reader = toml_reader()
    try:
        document = reader.loads(text)
    except reader.TOMLDecodeError as error:
        raise SpecError("(the file)", "valid TOML", f"a syntax error: {error}", str(path)) from None
    try:
        built = _build(document)
    except SpecError as error:
        raise SpecError(error.path, error.expected, error.found, str(path)) from None
    return dataclasses.replace(built, text=text, source=str(path))
