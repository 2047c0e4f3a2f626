r"""The records of a store as a pandas table in long form, and their summaries.

:func:`load` gives one row per (instance, rule, replication, checkpoint): the columns ``instance``, ``rule``
(categoricals in the spec's order), ``replication``, ``delta`` (fixed confidence, PAC) or ``budget`` (fixed
budget), ``stopping_time``, ``correct``, ``stopped``, with a tolerance epsilon (PAC, and fixed budget when the spec
gives one) ``epsilon`` and ``aggregate_regret``,
and ``diagnostic_NAME`` for the numbers rules report (NaN for the rules that do not). With ``pulls=True`` a column
``pulls`` holds each row's final counts of the K arms (those of the engine run that recorded the checkpoint), and
with ``recommendations=True`` a column ``recommendation`` the k recommended arms.

:func:`summarize` gives, per (instance, rule, checkpoint), the mean stopping time with its standard error
:math:`s/\sqrt{n}` and the error rate with its 95% Clopper-Pearson interval
(:func:`allocopt.simulate.binomial_confidence_interval`), as :meth:`allocopt.algorithms.IdentificationResult.summary`
computes them; :func:`paired_differences` the differences against a reference rule over the replications both
ran (:func:`allocopt.simulate.paired_mean_difference`), of the stopping times (fixed confidence, PAC) or of the
error indicators (fixed budget), as :meth:`allocopt.algorithms.PolicyComparison.paired_differences` does.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import describe
from ..exceptions import InvalidArgumentError
from ._deps import require
from .spec import ExperimentSpec
from .store import Store

__all__ = ["load", "summarize", "paired_differences", "across_instances", "checkpoint_column"]


def _open(store: Any, func: str) -> Store:
    if isinstance(store, Store):
        return store
    if not isinstance(store, (str, Path)):
        raise InvalidArgumentError(f"The 'store' parameter of {func} must be the path of an experiment store. Got "
                                   f"{describe(store)} instead.")
    return Store.open(store, func)


def _chunk_columns(table: Any, metadata: dict[str, Any], *, pulls: bool, recommendations: bool,
                   diagnostics: list[str]) -> dict[str, Any]:
    """One chunk's records in long form (replication-major: each replication's checkpoints in order)."""
    checkpoints = np.asarray(metadata["checkpoints"])
    n_check, n_rows = checkpoints.shape[0], table.num_rows
    replication = table.column("replication").to_numpy()

    def stacked(name: str) -> np.ndarray:
        return np.stack([table.column(f"{name}.{c}").to_numpy() for c in range(n_check)], axis=1).reshape(-1)

    out: dict[str, Any] = {"replication": np.repeat(replication, n_check),
                           "checkpoint": np.tile(checkpoints, n_rows),
                           "stopping_time": stacked("stopping_time"), "correct": stacked("correct"),
                           "stopped": stacked("stopped")}
    if "aggregate_regret.0" in table.column_names:
        out["aggregate_regret"] = stacked("aggregate_regret")
    runs = metadata["checkpoint_run"]
    for name in diagnostics:
        if f"diagnostic.{name}.0" in table.column_names:
            out[f"diagnostic_{name}"] = np.stack([table.column(f"diagnostic.{name}.{runs[c]}").to_numpy()
                                                  for c in range(n_check)], axis=1).reshape(-1)
        else:
            out[f"diagnostic_{name}"] = np.full(n_rows * n_check, np.nan)
    for wanted, name, columns in ((pulls, "pulls", [f"pulls.{runs[c]}" for c in range(n_check)]),
                                  (recommendations, "recommendation", [f"recommendation.{c}" for c in range(n_check)])):
        if wanted:
            cells = np.empty(n_rows * n_check, dtype=object)
            for c, column in enumerate(columns):
                values = table.column(column).combine_chunks()
                flat = values.values.to_numpy().astype(np.int64).reshape(n_rows, -1)
                cells[c::n_check] = list(flat)
            out[name] = cells
    return out


def load(store: Any, *, pulls: bool = False, recommendations: bool = False) -> Any:
    """The stored records as a pandas DataFrame in long form (see the module docstring).

    Chunks not stored yet (a run still going or killed) are absent: each (instance, rule) has the replications
    of its stored chunks.

    Examples
    --------
    >>> import tempfile
    >>> from allocopt.experiments import run_experiment
    >>> spec = {"name": "tiny", "seed": 1, "n_runs": 20, "chunk_size": 10,
    ...         "instances": [{"name": "g", "theta": [1.0, 0.5, 0.0], "k": 1, "variance": 0.25}],
    ...         "rules": [{"name": "kkt-ts"}, {"name": "uniform"}], "fixed_confidence": {"delta": [0.1, 0.01]}}
    >>> folder = tempfile.mkdtemp() + "/store"
    >>> _ = run_experiment(spec, folder)
    >>> records = load(folder, pulls=True)
    >>> list(records.columns)
    ['instance', 'rule', 'replication', 'delta', 'stopping_time', 'correct', 'stopped', 'pulls']
    >>> len(records), records["pulls"].iloc[0].shape
    (80, (3,))
    """
    pd = require("pandas", "allocopt.experiments.load")
    require("pyarrow", "allocopt.experiments.load")
    opened = _open(store, "load")
    spec = opened.spec
    stored = opened.stored()
    keys = [key for key in opened.grid() if key in stored]
    chunks = [(key, *opened.read_chunk(key, stored[key])) for key in keys]
    diagnostics = sorted({column.split(".")[1] for _, table, _ in chunks for column in table.column_names
                          if column.startswith("diagnostic.")})
    parts = [(key, _chunk_columns(table, metadata, pulls=pulls, recommendations=recommendations,
                                  diagnostics=diagnostics)) for key, table, metadata in chunks]
    return _frame(pd, spec, parts, diagnostics, pulls=pulls, recommendations=recommendations)


def _frame(pd: Any, spec: ExperimentSpec, parts: list[tuple[Any, dict[str, Any]]], diagnostics: list[str], *,
           pulls: bool, recommendations: bool) -> Any:
    def joined(name: str, dtype: Any) -> np.ndarray:
        if not parts:
            return np.zeros(0, dtype=dtype)
        return np.concatenate([part[name] for _, part in parts]).astype(dtype, copy=False)

    lengths = [part["replication"].shape[0] for _, part in parts]
    instance_codes = np.repeat(np.array([key[0] for key, _ in parts], dtype=np.int64), lengths)
    rule_codes = np.repeat(np.array([key[1] for key, _ in parts], dtype=np.int64), lengths)
    checkpoint = checkpoint_column(spec.setting)
    columns: dict[str, Any] = {
        "instance": pd.Categorical.from_codes(instance_codes, [item.name for item in spec.instances]),
        "rule": pd.Categorical.from_codes(rule_codes, [item.label for item in spec.rules]),
        "replication": joined("replication", np.int64)}
    if spec.epsilon is not None:
        columns["epsilon"] = np.full(instance_codes.shape[0], float(spec.epsilon))
    columns[checkpoint] = joined("checkpoint", np.int64 if checkpoint == "budget" else np.float64)
    columns["stopping_time"] = joined("stopping_time", np.int64)
    columns["correct"] = joined("correct", bool)
    columns["stopped"] = joined("stopped", bool)
    if spec.epsilon is not None:
        columns["aggregate_regret"] = joined("aggregate_regret", np.float64)
    for name in diagnostics:
        columns[f"diagnostic_{name}"] = joined(f"diagnostic_{name}", np.float64)
    for wanted, name in ((pulls, "pulls"), (recommendations, "recommendation")):
        if wanted:
            columns[name] = joined(name, object)
    return pd.DataFrame(columns)


def checkpoint_column(setting: str) -> str:
    """``"budget"`` in the fixed-budget setting, else ``"delta"``."""
    return "budget" if setting == "budget" else "delta"


def _records(data: Any, func: str) -> tuple[Any, str]:
    """A long table and its setting, from a store or a table of :func:`load`."""
    pd = require("pandas", f"allocopt.experiments.{func}")
    if isinstance(data, pd.DataFrame):
        needed = {"instance", "rule", "replication", "stopping_time", "correct", "stopped"}
        if not needed <= set(data.columns) or not ({"delta", "budget"} & set(data.columns)):
            raise InvalidArgumentError(f"The 'data' parameter of {func} must be a store or a table of "
                                       f"allocopt.experiments.load (columns {', '.join(sorted(needed))} and delta or "
                                       f"budget). Got a table with columns {list(data.columns)} instead.")
        setting = "budget" if "budget" in data.columns else ("pac" if "aggregate_regret" in data.columns
                                                             else "confidence")
        return data, setting
    opened = _open(data, func)
    return load(opened), opened.spec.setting


def _groups(frame: Any, keys: list[str]) -> Any:
    return frame.groupby(keys, observed=True, sort=False)


def summarize(data: Any) -> Any:
    r"""Per (instance, rule, checkpoint): the replications, the mean stopping time and its standard error, the error
    rate and its 95% Clopper-Pearson interval, the fraction of runs that stopped (and ``censored``: some did not, so
    the mean is a lower bound), and in the PAC setting the mean aggregate regret.

    ``data`` is a store (a path) or a table of :func:`load`.
    """
    from ..simulate import binomial_confidence_interval

    pd = require("pandas", "allocopt.experiments.summarize")
    frame, setting = _records(data, "summarize")
    checkpoint = checkpoint_column(setting)
    rows = []
    for (instance, rule, level), group in _groups(frame, ["instance", "rule", checkpoint]):
        times = group["stopping_time"].to_numpy().astype(float)
        correct = group["correct"].to_numpy()
        stopped = group["stopped"].to_numpy()
        n_runs = times.shape[0]
        errors = int(n_runs - correct.sum())
        low, high = binomial_confidence_interval(errors, n_runs)
        row = {"instance": instance, "rule": rule, checkpoint: level, "n_runs": n_runs,
               "mean_stopping_time": float(times.mean()),
               "standard_error": float(times.std(ddof=1)) / math.sqrt(n_runs) if n_runs > 1 else math.nan,
               "error_rate": errors / n_runs, "error_low": low, "error_high": high,
               "stopped_fraction": float(stopped.mean()), "censored": not bool(stopped.all())}
        if "aggregate_regret" in group.columns:
            row["mean_regret"] = float(group["aggregate_regret"].to_numpy().mean())
        rows.append(row)
    return pd.DataFrame(rows)


def paired_differences(data: Any, reference: str | None = None) -> Any:
    r"""Every rule against ``reference`` (default: the first rule), per instance and checkpoint, over the
    replications both ran: the mean of the differences (stopping times; in the fixed-budget setting the error
    indicators :math:`1\{\text{wrong}\}`), its standard error, the number of pairs, a 95% normal interval (1.96
    standard errors) and the verdict ``"lower"`` (the whole interval below 0), ``"higher"`` (above) or
    ``"level"``.

    ``data`` is a store (a path) or a table of :func:`load`.
    """
    from ..simulate import paired_mean_difference

    pd = require("pandas", "allocopt.experiments.paired_differences")
    frame, setting = _records(data, "paired_differences")
    checkpoint = checkpoint_column(setting)
    labels = [str(label) for label in frame["rule"].cat.categories] if hasattr(frame["rule"], "cat") else list(
        dict.fromkeys(frame["rule"]))
    reference = labels[0] if reference is None else reference
    if reference not in labels:
        raise InvalidArgumentError(f"The 'reference' parameter of paired_differences must be one of the rules "
                                   f"({', '.join(labels)}). Got {describe(reference)} instead.")
    value = "error" if setting == "budget" else "stopping_time"
    frame = frame.assign(error=~frame["correct"].to_numpy())
    rows = []
    for (instance, level), group in _groups(frame, ["instance", checkpoint]):
        base = group[group["rule"] == reference].set_index("replication")[value]
        for label in labels:
            other = group[group["rule"] == label]
            if label == reference or other.empty or base.empty:
                continue
            other_values = other.set_index("replication")[value]
            common = np.intersect1d(base.index.to_numpy(), other_values.index.to_numpy())
            if not common.size:
                continue
            paired = paired_mean_difference(other_values.loc[common].to_numpy(), base.loc[common].to_numpy())
            low, high = paired.interval()
            rows.append({"instance": instance, "rule": label, "reference": reference, checkpoint: level,
                         "value": value, "mean": paired.mean, "standard_error": paired.standard_error,
                         "n_pairs": paired.n_pairs, "low": low, "high": high,
                         "verdict": "lower" if high < 0 else "higher" if low > 0 else "level"})
    return pd.DataFrame(rows)


def across_instances(paired: Any, groups: dict[str, str]) -> Any:
    r"""The paired differences of :func:`paired_differences` averaged over the instances of each group.

    An experiment run over several drawn instances (a random setup, each draw one instance of a ``group``) asks
    what holds across the draws, not on one of them. For each group, rule and checkpoint rank (the j-th checkpoint
    of each instance: budgets such as :math:`\lceil H_1 \rceil` differ from draw to draw), with :math:`d_1, \dots,
    d_n` the mean differences of the :math:`n` draws: their mean :math:`\bar d`, its standard error
    :math:`s/\sqrt n` across the draws (the draws are the units; the replications within a draw only make each
    :math:`d_i` precise), a 95% Student-t interval, and how many draws the rule is ``lower``, ``level`` and
    ``higher`` than the reference on (the per-draw verdicts of :func:`paired_differences`).

    Parameters
    ----------
    paired : pandas.DataFrame
        A table of :func:`paired_differences`.
    groups : dict
        Instance name -> group name; instances not named, and groups of a single instance, are left out.

    Returns
    -------
    pandas.DataFrame
        Columns ``group, rule, reference, checkpoint_rank, draws, mean, standard_error, low, high, lower, level,
        higher``.

    Examples
    --------
    >>> import pandas as pd
    >>> paired = pd.DataFrame({"instance": ["a", "b", "c"], "rule": "r", "reference": "s", "budget": [10, 12, 11],
    ...                        "mean": [-0.02, -0.04, 0.0], "verdict": ["lower", "lower", "level"]})
    >>> row = across_instances(paired, {"a": "draws", "b": "draws", "c": "draws"}).iloc[0]
    >>> round(float(row["mean"]), 4), int(row["draws"]), int(row["lower"]), int(row["level"])
    (-0.02, 3, 2, 1)
    """
    from scipy import stats

    pd = require("pandas", "allocopt.experiments.across_instances")
    if not len(paired):
        return pd.DataFrame()
    checkpoint = next(name for name in ("delta", "budget", "epsilon") if name in paired.columns)
    frame = paired[paired["instance"].isin(list(groups))].copy()
    frame["group"] = frame["instance"].map(groups)
    frame["checkpoint_rank"] = frame.groupby(["instance", "rule"])[checkpoint].rank(method="first").astype(int)
    rows = []
    for (group, rule, reference, rank), part in frame.groupby(["group", "rule", "reference", "checkpoint_rank"],
                                                             sort=False, observed=True):
        values = part["mean"].to_numpy(dtype=float)
        if values.size < 2:
            continue
        error = float(values.std(ddof=1) / np.sqrt(values.size))
        half = float(stats.t.ppf(0.975, values.size - 1)) * error
        verdicts = part["verdict"].value_counts()
        rows.append({"group": group, "rule": rule, "reference": reference, "checkpoint_rank": int(rank),
                     "draws": int(values.size), "mean": float(values.mean()), "standard_error": error,
                     "low": float(values.mean()) - half, "high": float(values.mean()) + half,
                     **{verdict: int(verdicts.get(verdict, 0)) for verdict in ("lower", "level", "higher")}})
    return pd.DataFrame(rows)
