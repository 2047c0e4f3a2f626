"""``allocopt identify``: the table, strict JSON and errors."""

from __future__ import annotations

import json

import pytest

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


def test_identify_fixed_budget_prints_one_row_per_budget(capsys):
    assert main(["identify", "--theta", "0.7,0.7,0.5,0.5,0.5", "--k", "2", "--family", "bernoulli", "--policy",
                 "successive-rejects", "--budget", "50,200,800", "--runs", "10", "--seed", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("successive-rejects: 10 runs, fixed budget") and len(lines) == 5
    assert [int(line.split()[0]) for line in lines[2:]] == [50, 200, 800]


def test_identify_pac_json_is_strict(capsys):
    assert main(["identify", "--theta", "0.9,0.8,0.3,0.1", "--k", "2", "--family", "bernoulli", "--pac",
                 "--epsilon", "0.1", "--delta", "0.1", "--runs", "4", "--seed", "2", "--json", "--per-run"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["policy"] == "adaptive-topk" and len(payload["samples"]) == 4
    assert payload["summary"]["epsilon"] == 0.1 and len(payload["aggregate_regret"]) == 4


def test_identify_settings_report_bad_input(capsys):
    base = ["identify", "--theta", "0.9,0.8,0.3,0.1", "--k", "2", "--family", "bernoulli", "--runs", "2"]
    assert main(base + ["--pac", "--delta", "0.1"]) == 2
    assert "'--epsilon'" in capsys.readouterr().err
    assert main(base + ["--pac", "--epsilon", "0.1", "--delta", "0.1,0.01"]) == 2
    assert "one confidence parameter" in capsys.readouterr().err
    assert main(base + ["--epsilon", "0.1"]) == 2
    assert "only with --pac" in capsys.readouterr().err
    assert main(base + ["--policy", "nsar", "--p", "-1", "--budget", "100"]) == 2
    assert "'p' parameter of NSAR" in capsys.readouterr().err
    assert main(base + ["--policy", "sar", "--budget", "4"]) == 2
    assert "'budget' parameter of NSAR" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:  # a usage error: argparse exits with status 2
        main(base + ["--budget", "10.5"])
    assert exit_info.value.code == 2 and "integers" in capsys.readouterr().err
