"""``allocopt identify``: the table, strict JSON and errors."""

from __future__ import annotations

import json

from allocopt.cli import main


def test_identify_prints_one_row_per_delta(capsys):
    assert main(["identify", "--theta", "1,0.8,0.2", "--k", "1", "--variance", "0.25", "--delta", "0.1,0.01",
                 "--runs", "5", "--seed", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("kkt-ts: 5 runs") and len(lines) == 4


def test_identify_json_is_strict_and_reproducible(capsys):
    arguments = ["identify", "--theta", "0.8,0.5,0.2", "--k", "1", "--family", "bernoulli", "--policy", "uniform",
                 "--runs", "4", "--seed", "3", "--json", "--per-run"]
    assert main(arguments) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(arguments) == 0
    second = json.loads(capsys.readouterr().out)
    assert first["stopping_times"] == second["stopping_times"] and len(first["summary"]) == 3


def test_identify_reports_bad_input(capsys):
    assert main(["identify", "--theta", "1,0.8", "--k", "1", "--delta", "0.1,2", "--runs", "2"]) == 2
    assert "'delta' parameter of identify" in capsys.readouterr().err
