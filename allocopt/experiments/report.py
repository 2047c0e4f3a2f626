r"""The report of a store: markdown tables and PNG figures of the stopping times and error rates.

:func:`write_report` writes into a directory

* ``report.md``: the experiment (setting, seed, replications, store size and bytes per record, spec hash,
  versions), the instances, one table per instance (mean stopping time with its standard error, error rate with
  its 95% Clopper-Pearson interval, the fraction of runs that stopped), the paired differences against the
  reference rule with their 95% intervals and verdicts, and the compute time of every rule;
* ``summary.csv`` and ``paired_differences.csv``: the same numbers, for further analysis;
* ``stopping_times.png`` (fixed confidence and PAC) and ``error_rates.png``.

The figures are made to be read at a glance: every rule keeps one colour and one marker in every figure
(:mod:`allocopt.experiments.styles`), stopping times that span more than a decade are drawn on a log axis, error
rates on a log axis when they span more than a decade (a rate of zero is drawn as a hollow marker at its 95% upper
bound, which is what zero errors in n runs bound), and titles are wrapped and never clipped. One panel per instance
against the checkpoints (delta, budget); instances with a ``group`` share one panel against their ``x``; an
instance with one checkpoint and no group is drawn with the rules side by side.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .._result import Result
from ..complexity.allocation_measures import kl_confidence
from ._deps import PLOT_EXTRA, require
from .spec import ExperimentSpec
from .store import COMPUTATION_PACKAGES, Store
from .styles import RuleStyle, rule_styles
from .tables import _open, across_instances, checkpoint_column, load, paired_differences, summarize

__all__ = ["ExperimentReport", "write_report", "report_figures", "summary_figures"]

_PANEL_SIZE = (4.8, 3.5)
_MAX_COLUMNS = 3
_MIN_WIDTH = 7.0  # inches: a one-panel figure is as wide as this, so that its title fits on a line or two
_CHARACTERS_PER_INCH = {9: 12, 11: 10}  # of a title line, by font size


@dataclass(frozen=True, kw_only=True)
class ExperimentReport(Result):
    """Outcome of :func:`write_report`: status ``"completed"`` (every chunk stored) or ``"incomplete"`` (the
    report covers the chunks stored so far). ``files`` are the paths written."""

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    out: str
    files: tuple[str, ...]
    chunks: int
    stored: int


@dataclass(frozen=True)
class _Panel:
    """One panel: its title, the instances it draws, and its horizontal axis ("checkpoint", "x" or "rules")."""

    title: str
    instances: tuple[str, ...]
    axis: str
    checkpoint: Any = None


def _panels(spec: ExperimentSpec) -> list[_Panel]:
    panels, seen = [], set()
    for instance in spec.instances:
        if instance.group is None:
            axis = "checkpoint" if len(instance.checkpoints) > 1 else "rules"
            panels.append(_Panel(instance.name, (instance.name,), axis))
        elif instance.group not in seen:
            seen.add(instance.group)
            members = tuple(item.name for item in spec.instances if item.group == instance.group)
            for level in instance.checkpoints:
                suffix = "" if len(instance.checkpoints) == 1 else f", {checkpoint_column(spec.setting)} = {level:g}"
                panels.append(_Panel(instance.group + suffix, members, "x", level))
    return panels


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _figure(plt: Any, n_panels: int, title: str) -> tuple[Any, list[Any]]:
    columns = min(_MAX_COLUMNS, n_panels)
    rows = math.ceil(n_panels / columns)
    width = max(_MIN_WIDTH, _PANEL_SIZE[0] * columns)
    figure, axes = plt.subplots(rows, columns, figsize=(width, _PANEL_SIZE[1] * rows + 1.0), squeeze=False,
                                layout="constrained")
    for axis in axes.flat[n_panels:]:
        axis.set_visible(False)
    figure.suptitle(_wrap(title, int(_CHARACTERS_PER_INCH[11] * width)), fontsize=11)
    return figure, list(axes.flat[:n_panels])


def _readable_log_axis(axis: Any, which: str, values: np.ndarray) -> None:
    """A log axis labelled with plain numbers (0.01, 200, 5000): ticks at 1, 2 and 5 times the powers of ten
    when the values span less than three decades, at the powers of ten otherwise."""
    from matplotlib import ticker

    positive = values[np.isfinite(values) & (values > 0)]
    decades = math.log10(positive.max() / positive.min()) if positive.size > 1 else 0.0
    target = axis.yaxis if which == "y" else axis.xaxis
    target.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades < 3 else (1.0,)))
    target.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    target.set_minor_formatter(ticker.NullFormatter())


def _spans_decades(values: np.ndarray) -> bool:
    positive = values[np.isfinite(values) & (values > 0)]
    return positive.size > 1 and positive.max() / positive.min() >= 10


def _series(summary: Any, spec: ExperimentSpec, panel: _Panel, label: str) -> tuple[np.ndarray, Any]:
    """The x positions and the summary rows of one rule in one panel."""
    checkpoint = checkpoint_column(spec.setting)
    rows = summary[(summary["rule"] == label) & (summary["instance"].isin(panel.instances))]
    if panel.axis == "x":
        rows = rows[rows[checkpoint] == panel.checkpoint]
        xs = {item.name: item.x for item in spec.instances}
        positions = np.array([xs[name] for name in rows["instance"]], dtype=float)
        order = np.argsort(positions, kind="stable")
        return positions[order], rows.iloc[order]
    if panel.axis == "rules":
        return np.full(len(rows), float([rule.label for rule in spec.rules].index(label))), rows
    return rows[checkpoint].to_numpy(dtype=float), rows


def _offset(positions: np.ndarray, index: int, count: int, log: bool) -> np.ndarray:
    """Rules side by side at each position (a small shift, multiplicative on a log axis)."""
    if count == 1 or positions.size == 0:
        return positions
    shift = (index - (count - 1) / 2) / count
    if log:
        return positions * 10 ** (0.12 * shift)
    span = float(positions.max() - positions.min()) or 1.0
    return positions + 0.04 * span * shift


def _draw(axis: Any, kind: str, positions: np.ndarray, rows: Any, style: RuleStyle, label: str) -> None:
    marker = dict(color=style.colour, marker=style.marker, markersize=5, label=label)
    line = "-" if positions.size > 1 else "none"
    if kind == "stopping":
        means = rows["mean_stopping_time"].to_numpy(dtype=float)
        errors = 1.96 * np.nan_to_num(rows["standard_error"].to_numpy(dtype=float))
        axis.errorbar(positions, means, yerr=errors, linestyle=line, capsize=2, linewidth=1, **marker)
        return
    rates = rows["error_rate"].to_numpy(dtype=float)
    low, high = rows["error_low"].to_numpy(dtype=float), rows["error_high"].to_numpy(dtype=float)
    zero = rates == 0
    shown = np.where(zero, high, rates)
    axis.plot(positions, shown, linestyle=line, linewidth=1, color=style.colour)
    if (~zero).any():
        axis.errorbar(positions[~zero], rates[~zero], yerr=[rates[~zero] - low[~zero], high[~zero] - rates[~zero]],
                      linestyle="none", capsize=2, **marker)
    if zero.any():
        axis.plot(positions[zero], high[zero], linestyle="none", markerfacecolor="white",
                  **(marker if (~zero).sum() == 0 else dict(marker, label=None)))


def _axes_finish(axis: Any, spec: ExperimentSpec, panel: _Panel, kind: str, values: np.ndarray,
                 positions: np.ndarray) -> None:
    checkpoint = checkpoint_column(spec.setting)
    width = axis.get_figure().get_figwidth() / min(_MAX_COLUMNS, len(_panels(spec)))
    axis.set_title(_wrap(panel.title, int(_CHARACTERS_PER_INCH[9] * width)), fontsize=9)
    if panel.axis == "rules":
        labels = [rule.label for rule in spec.rules]
        axis.set_xticks(range(len(labels)), [_wrap(label, 12) for label in labels], fontsize=7, rotation=45,
                        ha="right")
    elif panel.axis == "x":
        axis.set_xlabel(str(spec.report.get("x_label", "x")))
        if _spans_decades(positions):
            axis.set_xscale("log")
            _readable_log_axis(axis, "x", positions)
    else:
        axis.set_xlabel(checkpoint)
        if checkpoint == "delta" or _spans_decades(positions):
            axis.set_xscale("log")
            _readable_log_axis(axis, "x", positions)
        if checkpoint == "delta":
            axis.invert_xaxis()  # harder (smaller delta) to the right
    if _spans_decades(values):
        axis.set_yscale("log")
        _readable_log_axis(axis, "y", values)
    elif kind == "error":
        axis.set_ylim(bottom=0.0)
    axis.set_ylabel({"stopping": "samples (mean, 95% bars)" if spec.setting == "pac" else
                     "stopping time (mean, 95% bars)", "error": "error rate (95% C-P)"}[kind])
    axis.grid(True, which="major", alpha=0.3)


def _checkpoints_of(spec: ExperimentSpec, name: str) -> np.ndarray:
    return np.sort(np.array(spec.instances[[item.name for item in spec.instances].index(name)].checkpoints,
                            dtype=float))


def _legend(figure: Any, spec: ExperimentSpec, styles: dict[str, RuleStyle], drawn: list[str],
            extras: dict[str, dict[str, Any]]) -> None:
    """One legend for the whole figure: every rule drawn, in the spec's order, then the reference lines."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=styles[label].colour, marker=styles[label].marker, markersize=5, linewidth=1,
                      label=label) for label in [rule.label for rule in spec.rules] if label in drawn]
    handles += [Line2D([], [], label=label, **options) for label, options in extras.items()]
    figure.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 5), fontsize=8)


def _figure_for(plt: Any, spec: ExperimentSpec, summary: Any, kind: str, styles: dict[str, RuleStyle],
                lower_bounds: dict[str, float]) -> Any:
    panels = _panels(spec)
    what = {"stopping": "mean samples" if spec.setting == "pac" else "mean stopping time",
            "error": "failure rate (aggregate regret > epsilon)" if spec.epsilon is not None else "error rate"}[kind]
    figure, axes = _figure(plt, len(panels), f"{spec.name}: {what}")
    labels = [rule.label for rule in spec.rules]
    drawn: list[str] = []
    extras: dict[str, dict[str, Any]] = {}
    column = "mean_stopping_time" if kind == "stopping" else "error_rate"
    for axis, panel in zip(axes, panels):
        values, positions_all = [], []
        for index, label in enumerate(labels):
            positions, rows = _series(summary, spec, panel, label)
            if not len(rows):
                continue
            log_x = panel.axis == "checkpoint" or (panel.axis == "x" and _spans_decades(positions))
            _draw(axis, kind, _offset(positions, index, len(labels), log_x) if panel.axis != "rules" else positions,
                  rows, styles[label], label)
            drawn.append(label)
            shown = rows[column].to_numpy(dtype=float)
            if kind == "error":
                if (shown == 0).any():
                    extras["no error: drawn at its 95% upper bound"] = dict(
                        color="black", marker="o", markerfacecolor="white", linestyle="none", markersize=5)
                shown = np.where(shown > 0, shown, rows["error_high"].to_numpy(dtype=float))
            values.append(shown)
            positions_all.append(positions)
        if kind == "error" and spec.setting == "confidence" and panel.axis == "checkpoint":
            levels = _checkpoints_of(spec, panel.instances[0])
            axis.plot(levels, levels, "k:", linewidth=1)
            values.append(levels)
            extras["delta"] = dict(color="black", linestyle=":", linewidth=1)
        if kind == "stopping" and panel.axis == "checkpoint" and panel.instances[0] in lower_bounds:
            levels = _checkpoints_of(spec, panel.instances[0])
            bound = lower_bounds[panel.instances[0]] * np.array([kl_confidence(float(level)) for level in levels])
            axis.plot(levels, bound, "k--", linewidth=1)
            values.append(bound)
            extras["T* kl(delta, 1-delta)"] = dict(color="black", linestyle="--", linewidth=1)
        _axes_finish(axis, spec, panel, kind,
                     np.concatenate(values) if values else np.zeros(0),
                     np.concatenate(positions_all) if positions_all else np.zeros(0))
    _legend(figure, spec, styles, drawn, extras)
    return figure


def _characteristic_times(spec: ExperimentSpec) -> dict[str, float]:
    if not spec.report.get("characteristic_time"):
        return {}
    from ..topk import solve_topk

    return {instance.name: float(solve_topk(instance.problem(), method="exact").characteristic_time)
            for instance in spec.instances}


def report_figures(store: Any) -> dict[str, Any]:
    """The report's matplotlib figures by file name (``stopping_times.png``, ``error_rates.png``), not saved."""
    opened = _open(store, "report_figures")
    return summary_figures(opened.spec, summarize(load(opened)))


def summary_figures(spec: ExperimentSpec, summary: Any) -> dict[str, Any]:
    """The report's figures (as :func:`report_figures`) of a table with the columns of
    :func:`~allocopt.experiments.summarize`: for a summary kept from an earlier run (a table recorded in the docs
    before its experiment had a store), drawn the way every report draws."""
    plt = require("matplotlib.pyplot", "drawing the report's figures", PLOT_EXTRA)
    return _figures(plt, spec, summary, _characteristic_times(spec))


def _figures(plt: Any, spec: ExperimentSpec, summary: Any, lower_bounds: dict[str, float]) -> dict[str, Any]:
    styles = rule_styles([(rule.label, rule.name) for rule in spec.rules])
    figures = {}
    if len(summary):
        if spec.setting != "budget":
            figures["stopping_times.png"] = _figure_for(plt, spec, summary, "stopping", styles, lower_bounds)
        figures["error_rates.png"] = _figure_for(plt, spec, summary, "error", styles, lower_bounds)
    return figures


# ------------------------------------------------------------------------------------------------- markdown


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def _setting_line(spec: ExperimentSpec) -> str:
    if spec.setting == "confidence":
        levels = ", ".join(f"{level:g}" for level in spec.instances[0].checkpoints)
        return (f"fixed confidence, delta = {levels}, threshold {spec.threshold}, max_samples "
                f"{spec.max_samples if spec.max_samples is not None else 'default (10^6)'}")
    if spec.setting == "budget":
        grids = {tuple(instance.checkpoints) for instance in spec.instances}
        budgets = (", ".join(str(value) for value in spec.instances[0].checkpoints) if len(grids) == 1 else
                   "per instance (see the tables)")
        tolerance = "" if spec.epsilon is None else (f"; a recommendation fails when its aggregate regret exceeds "
                                                     f"epsilon = {spec.epsilon:g}")
        return f"fixed budget, budgets {budgets}{tolerance}"
    return (f"PAC, epsilon = {spec.epsilon:g}, delta = {spec.instances[0].checkpoints[0]:g}, max_samples "
            f"{spec.max_samples if spec.max_samples is not None else 'default (10^6)'}")


def _header(store: Store, spec: ExperimentSpec, records: int, complete: bool, stored: int, total: int) -> list[str]:
    size = store.size()
    versions = store.manifest["versions"]
    runs = sorted({rule.n_runs for rule in spec.rules})
    lines = [f"# {_cell(spec.name)}", ""]
    if spec.description:
        lines += [spec.description, ""]
    if spec.report.get("notes"):
        lines += [str(spec.report["notes"]), ""]
    lines += ["| | |", "|---|---|", f"| setting | {_setting_line(spec)} |", f"| seed | {spec.seed} |",
              f"| replications | {', '.join(map(str, runs))} per rule, in chunks of {spec.chunk_size} |",
              f"| store | {stored} of {total} chunks{'' if complete else ' (incomplete: the tables cover the chunks stored)'}, "
              f"{records} records, {size} bytes ({size / max(records, 1):.1f} bytes per record) |",
              f"| spec hash | `{store.manifest['spec_hash'][:16]}` |",
              "| computed with | " + ", ".join(f"{name} {versions.get(name)}" for name in ("python", *COMPUTATION_PACKAGES))
              + " |", ""]
    return lines


def _instances_table(spec: ExperimentSpec, lower_bounds: dict[str, float]) -> list[str]:
    measures = list(spec.report.get("measures", ()))
    lines = ["## Instances", "", "| instance | K | k | family | means | " + ("T* | " if lower_bounds else "")
             + "".join(f"{name} | " for name in measures) + "checkpoints |",
             "|---|---|---|---|---|" + ("---|" if lower_bounds else "") + "---|" * len(measures) + "---|"]
    for instance in spec.instances:
        family = instance.family + (f" (variance {instance.variance})" if instance.variance is not None else "") + (
            f" (shape {instance.shape:g})" if instance.shape is not None else "")
        means = (", ".join(f"{value:.6g}" for value in instance.theta) if len(instance.theta) <= 10 else
                 f"{len(instance.theta)} means in [{min(instance.theta):.4g}, {max(instance.theta):.4g}]")
        if instance.source is not None:
            means += " from " + ", ".join(f"{key} = {value}" for key, value in instance.source.items())
        bound = f"{lower_bounds[instance.name]:.6g} | " if lower_bounds else ""
        bound += "".join(f"{instance.measure(name):.6g} | " for name in measures)
        lines.append(f"| {_cell(instance.name)} | {len(instance.theta)} | {instance.k} | {family} | {_cell(means)} | "
                     f"{bound}{', '.join(f'{value:g}' for value in instance.checkpoints)} |")
    return lines + [""]


def _results_tables(spec: ExperimentSpec, summary: Any, lower_bounds: dict[str, float]) -> list[str]:
    checkpoint = checkpoint_column(spec.setting)
    lines = ["## Results", "", "Mean stopping time (samples) with its standard error, error rate with its 95% "
             "Clopper-Pearson interval, and the fraction of runs that stopped before the sample cap ('>=': some did "
             "not, their stopping time is the cap)." if spec.setting != "budget" else
             "Error rate of the recommendation at each budget with its 95% Clopper-Pearson interval.", ""]
    for instance in spec.instances:
        rows = summary[summary["instance"] == instance.name]
        if not len(rows):
            continue
        ratio = instance.name in lower_bounds
        lines += [f"### {_cell(instance.name)}", ""]
        regret = "aggregate_regret" in summary.columns or "mean_regret" in summary.columns
        if spec.setting == "budget":
            lines += ["| rule | runs | budget | " + ("failure rate" if regret else "error rate") + " | 95% interval |"
                      + (" mean regret |" if regret else ""), "|---|---|---|---|---|" + ("---|" if regret else "")]
        else:
            lines += ["| rule | runs | " + ("delta" if spec.setting == "confidence" else "delta (PAC)") + " | "
                      + ("E[samples]" if spec.setting == "pac" else "E[tau]") + " | s.e. | "
                      + ("failure rate" if spec.setting == "pac" else "error rate") + " | 95% interval | stopped | "
                      + ("E[tau]/(T* log 1/delta) | " if ratio else "") + ("mean regret |" if spec.setting == "pac" else ""),
                      "|---|---|---|---|---|---|---|---|" + ("---|" if ratio else "") + ("---|" if spec.setting == "pac" else "")]
        for row in rows.itertuples(index=False):
            row_dict = row._asdict()
            level = row_dict[checkpoint]
            interval = f"[{row.error_low:.4f}, {row.error_high:.4f}]"
            if spec.setting == "budget":
                lines.append(f"| {_cell(row.rule)} | {row.n_runs} | {level} | {row.error_rate:.4f} | {interval} |"
                             + (f" {row_dict['mean_regret']:.4g} |" if regret else ""))
                continue
            bound = ">=" if row.censored else ""
            cells = [_cell(row.rule), str(row.n_runs), f"{level:g}", f"{bound}{row.mean_stopping_time:.1f}",
                     f"{row.standard_error:.1f}", f"{row.error_rate:.4f}", interval, f"{row.stopped_fraction:.3f}"]
            if ratio:
                cells.append(f"{bound}{row.mean_stopping_time / (lower_bounds[instance.name] * math.log(1 / level)):.3f}")
            if spec.setting == "pac":
                cells.append(f"{row_dict['mean_regret']:.4g}")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _paired_table(spec: ExperimentSpec, paired: Any, reference: str) -> list[str]:
    checkpoint = checkpoint_column(spec.setting)
    what = ("error indicators 1{wrong}" if spec.setting == "budget" else
            "samples" if spec.setting == "pac" else "stopping times")
    lines = [f"## Paired differences against {_cell(reference)}", "",
             f"Rule minus {_cell(reference)}, replication by replication (the rules read the same rewards: common "
             f"random numbers), of the {what}: the mean difference, its standard error and a 95% normal interval; "
             "'lower' when the whole interval is below 0, 'higher' when above, else 'level'.", ""]
    if not len(paired):
        return lines + ["(Nothing to pair: one rule, or no replication that both rules ran.)", ""]
    lines += [f"| instance | rule | {checkpoint} | difference | s.e. | 95% interval | pairs | verdict |",
              "|---|---|---|---|---|---|---|---|"]
    digits = 4 if spec.setting == "budget" else 1
    for row in paired.itertuples(index=False):
        level = row._asdict()[checkpoint]
        lines.append(f"| {_cell(row.instance)} | {_cell(row.rule)} | {level:g} | {row.mean:+.{digits}f} | "
                     f"{row.standard_error:.{digits}f} | [{row.low:+.{digits}f}, {row.high:+.{digits}f}] | "
                     f"{row.n_pairs} | {row.verdict} |")
    return lines + [""]


def _across_table(spec: ExperimentSpec, paired: Any, reference: str) -> list[str]:
    """The paired differences against ``reference`` averaged over the instances of each group (the draws of a
    random setup), beside the per-instance rows of :func:`_paired_table`."""
    groups = {instance.name: instance.group for instance in spec.instances if instance.group}
    table = across_instances(paired, groups)
    if not len(table):
        return []
    what = "error indicators" if spec.setting == "budget" else "stopping times"
    lines = [f"## Across the instances of each group, against {_cell(reference)}", "",
             f"The mean over a group's instances (draws) of the paired mean differences of the {what} above, its "
             "standard error across the instances and a 95% Student-t interval (the instances are the units), and "
             "on how many instances the rule is lower, level with or higher than the reference.", "",
             "| group | rule | checkpoint | instances | mean difference | s.e. | 95% interval | lower / level / higher |",
             "|---|---|---|---|---|---|---|---|"]
    digits = 4 if spec.setting == "budget" else 1
    for row in table.itertuples(index=False):
        lines.append(f"| {_cell(row.group)} | {_cell(row.rule)} | {row.checkpoint_rank} | {row.draws} | "
                     f"{row.mean:+.{digits}f} | {row.standard_error:.{digits}f} | [{row.low:+.{digits}f}, "
                     f"{row.high:+.{digits}f}] | {row.lower} / {row.level} / {row.higher} |")
    return lines + [""]


def _compute_table(store: Store, spec: ExperimentSpec) -> list[str]:
    stored = store.stored()
    seconds = {rule.label: 0.0 for rule in spec.rules}
    steps = {rule.label: 0 for rule in spec.rules}
    chunks = {rule.label: 0 for rule in spec.rules}
    for key in store.grid():
        if key in stored:
            metadata = store.chunk_metadata(stored[key])
            label = spec.rules[key[1]].label
            seconds[label] += float(metadata.get("seconds", 0.0))
            steps[label] += int(metadata.get("replication_steps", 0))
            chunks[label] += 1
    lines = ["## Compute", "", "Wall-clock seconds of the chunks where they ran (added up over the chunks, whatever "
             "ran them in parallel) and the engine's replication-steps.", "",
             "| rule | chunks | seconds | replication-steps | us per replication-step |", "|---|---|---|---|---|"]
    for label in seconds:
        per_step = 1e6 * seconds[label] / steps[label] if steps[label] else math.nan
        lines.append(f"| {_cell(label)} | {chunks[label]} | {seconds[label]:.1f} | {steps[label]} | {per_step:.2f} |")
    return lines + [""]


def write_report(store: Any, out: Any, *, reference: str | list[str] | None = None) -> ExperimentReport:
    """Write the report of ``store`` into the directory ``out`` (see the module docstring).

    Parameters
    ----------
    store : str or Path
        An experiment store (complete or not: an incomplete one is reported on the chunks stored).
    out : str or Path
        The directory of the report (created).
    reference : str or list of str, optional
        The rule (or rules: one table each) the paired differences are taken against (default: ``[report]
        reference`` of the spec, else the first rule).

    Returns
    -------
    ExperimentReport

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import tempfile
    >>> from allocopt.experiments import run_experiment
    >>> spec = {"name": "tiny", "seed": 1, "n_runs": 20, "chunk_size": 10,
    ...         "instances": [{"name": "g", "theta": [1.0, 0.5, 0.0], "k": 1, "variance": 0.25}],
    ...         "rules": [{"name": "kkt-ts"}, {"name": "uniform"}], "fixed_confidence": {"delta": [0.1, 0.01]}}
    >>> folder = tempfile.mkdtemp()
    >>> _ = run_experiment(spec, folder + "/store")
    >>> report = write_report(folder + "/store", folder + "/report")
    >>> report.status, [path.rsplit("/", 1)[1] for path in report.files]
    ('completed', ['report.md', 'stopping_times.png', 'error_rates.png', 'summary.csv', 'paired_differences.csv'])
    """
    import time

    started = time.perf_counter()
    plt = require("matplotlib.pyplot", "drawing the report's figures", PLOT_EXTRA)
    opened = _open(store, "write_report")
    spec = opened.spec
    chosen = reference or spec.report.get("reference") or spec.rules[0].label
    references = [chosen] if isinstance(chosen, str) else list(chosen)
    records = load(opened)
    summary = summarize(records)
    pairs = [paired_differences(records, reference=item) for item in references]
    lower_bounds = _characteristic_times(spec)
    stored, total = sum(key in opened.stored() for key in opened.grid()), len(opened.grid())
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    figures = _figures(plt, spec, summary, lower_bounds)
    for name, figure in figures.items():
        figure.savefig(folder / name, dpi=110, bbox_inches="tight")
        plt.close(figure)
        files.append(folder / name)
    summary.to_csv(folder / "summary.csv", index=False)
    pd = require("pandas", "writing the report's tables")
    pd.concat(pairs, ignore_index=True).to_csv(folder / "paired_differences.csv", index=False)
    files += [folder / "summary.csv", folder / "paired_differences.csv"]
    alt = {"stopping_times.png": "Mean stopping times", "error_rates.png": "Error rates"}
    lines = _header(opened, spec, len(records), stored == total, stored, total)
    lines += ["## Figures", ""] + [f"![{alt[name]}]({name})\n" for name in figures]
    lines += _instances_table(spec, lower_bounds) + _results_tables(spec, summary, lower_bounds)
    for item, paired in zip(references, pairs):
        lines += _paired_table(spec, paired, item)
    for item, paired in zip(references, pairs):
        lines += _across_table(spec, paired, item)
    lines += _compute_table(opened, spec)
    lines += [f"Written by `allocopt experiment report` from the store `{Path(opened.path).name}`.", ""]
    (folder / "report.md").write_text("\n".join(lines), encoding="utf-8")
    files.insert(0, folder / "report.md")
    complete = stored == total
    return ExperimentReport(status="completed" if complete else "incomplete",
                            message=f"report of {spec.name} in {folder}: {len(files)} files"
                                    + ("" if complete else f" (incomplete store: {stored} of {total} chunks)"),
                            method="write_report", time=time.perf_counter() - started, out=str(folder),
                            files=tuple(str(path) for path in files), chunks=total, stored=stored)
