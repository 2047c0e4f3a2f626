"""``allocopt cbmai`` command line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from allocopt.cli import main


def run_json(argv, capsys):
    assert main(["cbmai", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_output_of_a_small_lp(capsys):
    # arms (c, r) = (2, 1), (0, 0.2), cbar = 1: p = (1/2, 1/2), value 0.6, lambda = (0.4, 0.2) (by hand).
    payload = run_json(["--rewards", "1,0.2", "--costs", "2,0", "--bounds", "1"], capsys)
    assert payload["status"] == "optimal" and payload["support"] == [0, 1]
    assert payload["p"] == pytest.approx([0.5, 0.5]) and payload["value"] == pytest.approx(0.6)
    assert payload["duals"] == pytest.approx([0.4, 0.2])
    assert payload["iv_scores"] == pytest.approx([0.6, 0.6, 0.2])
    assert payload["lagrangian_scores"] == pytest.approx([0.0, 0.0, -0.4])
    assert payload["assumption_1"] == {"holds": True, "failures": []}


def test_costs_rows_are_separated_by_semicolons_and_methods_agree(capsys):
    argv = ["--rewards", "0.9,0.5,0.2", "--costs", "1.5,0.5,0.2;0.2,1.4,0.1", "--bounds", "1,1"]
    values = {method: run_json([*argv, "--method", method], capsys)["value"]
              for method in ("enumerate", "highs", "pulp")}
    assert max(values.values()) - min(values.values()) < 1e-9


def test_reference_instance_and_text_output(capsys):
    # Table 1, D2P: support arms 10 and 20 with the slack of cost 2 (column 25), value 1.006667.
    assert main(["cbmai", "--instance", "cbmai-d2p"]) == 0
    out = capsys.readouterr().out
    assert "support: arm 10, arm 20, slack 1" in out and "value:   1.006666667" in out
    assert "Assumption 1: holds" in out


def test_infeasible_lp_in_json_is_strict_json(capsys):
    payload = run_json(["--rewards", "1,0.2", "--costs", "2,3", "--bounds", "1"], capsys)
    assert payload["status"] == "infeasible" and payload["support"] == [] and payload["value"] == "-Infinity"
    assert payload["iv_scores"] == ["-Infinity"] * 3 and payload["p"] == ["NaN", "NaN"]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--rewards", "1,0.2", "--costs", "2,0,1", "--bounds", "1"], "'costs' parameter of CBMAIProblem"),
        (["--rewards", "1,0.2", "--costs", "2,0", "--bounds", "1,2"], "'bounds' parameter of CBMAIProblem"),
        (["--rewards", "1,nan", "--costs", "2,0", "--bounds", "1"], "'rewards' parameter of CBMAIProblem"),
        (["--rewards", "1,0.2", "--costs", "2,0", "--bounds", "1", "--n-unknown", "3"], "'n_unknown'"),
        (["--rewards", "1,0.2", "--costs", "2,0", "--bounds", "1", "--method", "cplex"], "'method' parameter"),
    ],
)
def test_bad_input_exits_with_status_2_and_one_line(argv, fragment, capsys):
    assert main(["cbmai", *argv]) == 2
    error = capsys.readouterr().err
    assert error.startswith("allocopt cbmai: error:") and fragment in error and error.count("\n") == 1


def test_missing_arguments_are_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["cbmai", "--rewards", "1,2"])
    assert exit_info.value.code == 2
    assert "--rewards, --costs and --bounds are required" in capsys.readouterr().err


def test_module_entry_point():
    completed = subprocess.run([sys.executable, "-m", "allocopt", "cbmai", "--rewards", "1,0.2", "--costs", "2,0",
                                "--bounds", "1", "--json"], capture_output=True, text=True, check=True)
    assert json.loads(completed.stdout)["support"] == [0, 1]


@pytest.mark.parametrize("backend", [["--method", "pulp"], ["--method", "pulp", "--solver", "highs"],
                                     ["--method", "pulp", "--solver", "cbc"], ["--method", "highs"]])
def test_json_output_is_json_whatever_the_backend(backend):
    # A fresh interpreter: HiGHS prints a banner from compiled code when a process builds its first model, which
    # used to come out in front of the JSON (through solve_cbmai and through the Lagrangian scores, which ignored
    # --solver). Values by hand: p = (1/2, 1/2), value 0.6, lambda = (0.4, 0.2).
    from allocopt.cbmai._pulp import available_pulp_solvers

    if "cbc" in backend and "cbc" not in available_pulp_solvers():
        pytest.skip("PuLP cannot run CBC here")
    completed = subprocess.run([sys.executable, "-m", "allocopt", "cbmai", "--rewards", "1,0.2", "--costs", "2,0",
                                "--bounds", "1", "--json", *backend], capture_output=True, text=True)
    assert (completed.returncode, completed.stderr) == (0, "")
    payload = json.loads(completed.stdout)
    assert payload["status"] == "optimal" and payload["value"] == pytest.approx(0.6)
    assert payload["lagrangian_scores"] == pytest.approx([0.0, 0.0, -0.4])


def test_an_uncertified_answer_exits_with_status_1_and_says_why(monkeypatch, capsys):
    # A fake PuLP answering the non-optimal vertex p = (0, 1) (value 0.2 < 0.6), with no enumeration to fall back on.
    from allocopt.cbmai import _pulp
    from allocopt.cbmai import solve as solve_module

    def fake(matrix, rhs, objective, solver=None, *, verbose=False):
        return "Optimal", np.array([0.0, 1.0, 1.0]), np.zeros(matrix.shape[0]), "fake PuLP: Optimal"

    monkeypatch.setattr(_pulp, "solve_with_pulp", fake)
    monkeypatch.setattr(solve_module, "ENUMERATION_BASIS_LIMIT", 0)
    assert main(["cbmai", "--rewards", "1,0.2", "--costs", "2,0", "--bounds", "1", "--method", "pulp",
                 "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "not_certified" and "feasible dual" in payload["message"]
    assert payload["value"] == "NaN" and payload["lagrangian_scores"] == ["NaN"] * 3
