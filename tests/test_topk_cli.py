"""Command-line interface: output format, JSON keys and error handling.

Reference values: Example 1 of Wang, Yang, You (2022) (Gamma* ~ 0.0568, components {1,3} and {2,4,5}).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from allocopt.cli import main


def test_topk_json_has_the_documented_keys(capsys):
    assert main(["topk", "--theta", "0.51,0.5,0,-0.01,-0.092", "--k", "2", "--family", "gaussian",
                 "--variance", "0.25", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {"psi", "value", "characteristic_time", "gap", "multipliers", "components", "method"} <= set(payload)
    assert round(payload["value"], 4) == 0.0568
    assert payload["characteristic_time"] == pytest.approx(1 / payload["value"])
    assert [(c["top"], c["bottom"]) for c in payload["components"]] == [([0], [2]), ([1], [3, 4])]
    # the multipliers, sparse: on Example 1's binding pairs (the components above), summing to one
    multipliers = payload["multipliers"]
    assert sorted(zip(multipliers["top"], multipliers["bottom"])) == [(0, 2), (1, 3), (1, 4)]
    assert sum(multipliers["values"]) == pytest.approx(1.0) and min(multipliers["values"]) > 0


# KKT-Tracking stops at its iteration limit before the exact solver's 1e-9 relative gap: exit status 1
@pytest.mark.parametrize(("extra", "status", "word"), [(["--method", "kkt-tracking"], 1, "status iteration_limit"),
                                                       (["--kind", "budget", "--family", "bernoulli"], 0,
                                                        "status optimal")])
def test_topk_table_output(capsys, extra, status, word):
    theta = "0.7,0.6,0.4,0.3" if "bernoulli" in extra else "1,0.6,0.2,-0.1"
    arguments = ["topk", "--theta", theta, "--k", "2"] + extra
    assert main(arguments) == status
    out = capsys.readouterr().out
    assert word in out
    assert "Gamma* =" in out and "T* =" in out and "certified gap" in out and "components of the binding graph" in out


def test_topk_errors_exit_with_status_2_and_a_clear_message(capsys):
    assert main(["topk", "--theta", "0.5,0.5,0.1", "--k", "1"]) == 2
    assert "arms [0, 1] (0-based) are tied at 0.5" in capsys.readouterr().err
    assert main(["topk", "--theta", "0.5,1.5", "--k", "1", "--family", "bernoulli"]) == 2
    assert "open interval (0, 1)" in capsys.readouterr().err


def test_demo_runs_as_a_module():
    completed = subprocess.run([sys.executable, "-m", "allocopt", "demo"], capture_output=True, text=True, check=True)
    assert "components (1-based, as in the paper): [((1,), (3,)), ((2,), (4, 5))]" in completed.stdout
    assert "passed: True" in completed.stdout


def test_topk_reads_the_means_from_a_file(capsys, tmp_path):
    """--theta @PATH: the file's numbers (commas, spaces and line breaks) give the same JSON as the inline list
    (Example 1 of Wang, Yang, You 2022), and a missing file or a non-number is bad input (status 2)."""
    options = ["--k", "2", "--family", "gaussian", "--variance", "0.25", "--json"]
    assert main(["topk", "--theta", "0.51,0.5,0,-0.01,-0.092"] + options) == 0
    inline = json.loads(capsys.readouterr().out)
    means = tmp_path / "theta.txt"
    means.write_text("0.51, 0.5\n0\n-0.01 -0.092\n")
    assert main(["topk", "--theta", f"@{means}"] + options) == 0
    from_file = json.loads(capsys.readouterr().out)
    assert from_file["psi"] == inline["psi"] and from_file["value"] == inline["value"]
    for text, message in ((f"@{tmp_path / 'missing.txt'}", "cannot read the numbers file"),
                          (f"@{means}", "field 3 is 'zero'")):
        means.write_text("0.51, 0.5, zero")
        with pytest.raises(SystemExit) as usage_error:  # argparse's usage error
            main(["topk", "--theta", text] + options)
        assert usage_error.value.code == 2 and message in capsys.readouterr().err
