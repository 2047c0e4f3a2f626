"""allocopt.experiments is the layer above allocopt.algorithms: nothing below imports it, and importing allocopt
imports neither it nor its optional dependencies."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from experiment_helpers import TINY

PACKAGE = Path(__file__).resolve().parents[2] / "allocopt"


def test_no_lower_layer_imports_the_experiments():
    pattern = re.compile(r"^\s*(from|import)\s+(allocopt\.experiments|\.+experiments)\b", re.MULTILINE)
    offenders = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                 if "experiments" not in path.relative_to(PACKAGE).parts[:1] and path.name != "experiment.py"
                 and pattern.search(path.read_text())]
    assert offenders == []


def test_import_allocopt_stays_light_and_works_without_the_extra():
    code = """
import sys
import allocopt, allocopt.algorithms
print(sorted(name for name in ('allocopt.experiments', 'pandas', 'pyarrow') if name in sys.modules))
sys.modules['pandas'] = None
sys.modules['pyarrow'] = None
import allocopt.experiments as experiments
for spec in ({'name': 'x'}, SPEC):
    try:
        experiments.run_experiment(spec, '/nonexistent/store')
    except Exception as error:
        print(type(error).__name__, error)
""".replace("SPEC", repr(TINY))
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "[]"  # importing allocopt imports neither the experiments nor pandas nor pyarrow
    # a bad spec is bad input whatever is installed; a good one needs the extra, named in the error
    assert lines[1].startswith("SpecError")
    assert lines[2].startswith("MissingDependencyError") and 'pip install "allocopt[experiments]"' in lines[2]


def test_without_dask_a_cluster_run_names_the_extra_and_writes_nothing(tmp_path, monkeypatch):
    import pytest

    from allocopt.exceptions import InvalidArgumentError, MissingDependencyError
    from allocopt.experiments import run_experiment

    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(MissingDependencyError, match=r'Dask cluster needs dask.distributed.*"allocopt\[dask\]"'):
        run_experiment(TINY, tmp_path / "store", scheduler="tcp://127.0.0.1:1")
    assert not (tmp_path / "store").exists()
    with pytest.raises(InvalidArgumentError, match="'scheduler' parameter of run_experiment must be left out"):
        run_experiment(TINY, tmp_path / "store", scheduler="tcp://127.0.0.1:1", client="tcp://127.0.0.1:2")
    assert not (tmp_path / "store").exists()
