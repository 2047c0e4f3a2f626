"""allocopt.experiments is the layer above allocopt.algorithms: nothing below imports it, and importing allocopt
imports neither it nor its optional dependencies."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "allocopt"


def test_no_lower_layer_imports_the_experiments():
    pattern = re.compile(r"^\s*(from|import)\s+(allocopt\.experiments|\.+experiments)\b", re.MULTILINE)
    offenders = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                 if "experiments" not in path.relative_to(PACKAGE).parts[:1] and path.name != "experiment.py"
                 and pattern.search(path.read_text())]
    assert offenders == []


def test_import_allocopt_stays_light():
    code = ("import sys, allocopt, allocopt.algorithms\n"
            "print(sorted(name for name in ('allocopt.experiments', 'pandas', 'pyarrow') if name in sys.modules))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0 and completed.stdout.strip() == "[]", completed.stderr
