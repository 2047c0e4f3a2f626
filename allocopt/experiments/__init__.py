r"""Experiments as data: a spec, a crash-safe store of per-run records, resume, Dask, tidy tables and reports.

The layer above :mod:`allocopt.algorithms` (it uses the public names of the algorithms, top-k and simulation layers;
nothing below imports it).

* :func:`load_spec` reads and checks a spec (a TOML file or a dict: instances, rules, one setting, the
  replications; :mod:`allocopt.experiments.spec`); a bad spec raises :class:`SpecError` with the key path;
* :func:`run_experiment` runs the chunks the store does not hold yet, here, on joblib workers or on a Dask
  cluster, and writes one Parquet file per chunk atomically (:mod:`allocopt.experiments.store`): a run killed at
  any moment is completed by running it again, and the records are those of one uninterrupted run, bit for bit;
* :func:`store_status` says which chunks are stored, per instance and rule;
* :func:`load` gives the records as a pandas DataFrame in long form; :func:`summarize` and
  :func:`paired_differences` the mean stopping times with standard errors, the error rates with Clopper-Pearson
  intervals and the paired differences against a reference rule;
* :func:`write_report` writes markdown tables and PNG figures (:mod:`allocopt.experiments.report`).

The command line is ``allocopt experiment run|status|report`` (:mod:`allocopt.cli.experiment`).

pandas and pyarrow come with ``pip install "allocopt[experiments]"`` (and ``tomli`` before Python 3.11); the
report's figures need matplotlib (``pip install "allocopt[plot]"``) and a cluster ``dask.distributed``
(``pip install "allocopt[dask]"``). Without them the functions that need them raise
:class:`~allocopt.exceptions.MissingDependencyError` naming the command; the workers that compute chunks need
none of them.

Examples
--------
>>> import tempfile
>>> from allocopt.experiments import load, run_experiment, summarize
>>> spec = {"name": "tiny", "seed": 7, "n_runs": 40, "chunk_size": 20,
...         "instances": [{"name": "g4", "theta": [1.0, 0.8, 0.2, 0.0], "k": 2, "variance": 0.25}],
...         "rules": [{"name": "kkt-ts"}, {"name": "uniform"}], "fixed_confidence": {"delta": [0.1, 0.01]}}
>>> store = tempfile.mkdtemp() + "/tiny"
>>> run_experiment(spec, store).status
'completed'
>>> table = summarize(load(store))
>>> table[["rule", "delta", "n_runs"]].values.tolist()
[['kkt-ts', 0.1, 40], ['kkt-ts', 0.01, 40], ['uniform', 0.1, 40], ['uniform', 0.01, 40]]
"""

from __future__ import annotations

from .report import ExperimentReport, report_figures, summary_figures, write_report
from .runner import ExperimentRun, run_experiment
from .spec import ExperimentSpec, InstanceSpec, RuleSpec, SpecError, load_spec
from .status import StoreStatus, store_status
from .store import Store, StoreBusyError, StoreMismatchError
from .styles import RULE_STYLES, rule_styles
from .tables import across_instances, load, paired_differences, summarize

__all__ = [
    "ExperimentSpec",
    "InstanceSpec",
    "RuleSpec",
    "SpecError",
    "load_spec",
    "run_experiment",
    "ExperimentRun",
    "Store",
    "StoreMismatchError",
    "StoreBusyError",
    "store_status",
    "StoreStatus",
    "load",
    "summarize",
    "paired_differences",
    "across_instances",
    "write_report",
    "report_figures",
    "summary_figures",
    "ExperimentReport",
    "rule_styles",
    "RULE_STYLES",
]
