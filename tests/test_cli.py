"""The command line never shows a traceback, follows its exit-status convention and writes strict JSON.

Every example invocation declared by every registered subcommand (``EXAMPLES`` of each module in
``allocopt.cli.SUBCOMMANDS``) runs twice: in a real subprocess (``python -m allocopt ...``) and through
``main()``; in the default suite (``-m "not slow"``) the subprocess runs the first example of each exit status
of each subcommand, and ``main()`` every example. The first tests are the failures once reported against the command line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import allocopt.cli as cli
from allocopt.cli import EXIT_STATUS_HELP, SUBCOMMANDS, ExitStatus, main, subcommand_module

TRACEBACK = "Traceback (most recent call last)"
EXAMPLES = [(name, example) for name in SUBCOMMANDS for example in subcommand_module(name).EXAMPLES]


def example_id(item) -> str:
    name, example = item
    return f"{name} {' '.join(example.argv)}"[:80]


def strict_json(text: str):
    """``json.loads`` that refuses the non-standard constants NaN, Infinity and -Infinity."""
    def refuse(constant):
        raise ValueError(f"non-standard JSON constant {constant}")
    return json.loads(text, parse_constant=refuse)


def run_process(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "allocopt", *argv], capture_output=True, text=True, timeout=600)


def run_main(argv, capsys) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exit_:  # argparse usage errors, --help
        status = exit_.code
    captured = capsys.readouterr()
    return int(status), captured.out, captured.err


def check_outcome(name: str, example, status: int, out: str, err: str) -> None:
    assert TRACEBACK not in err and TRACEBACK not in out
    assert status in example.statuses, (status, err)
    # warnings are summarised on one line, never printed one by one
    assert sum("Warning" in line for line in err.splitlines()) <= 1, err
    if status in (ExitStatus.SUCCESS, ExitStatus.NOT_CERTIFIED):
        assert out.strip(), "a computation that ran prints its answer"
        if "--json" in example.argv:
            assert isinstance(strict_json(out), dict)
    else:
        assert out == "" or "--json" not in example.argv
        last = err.strip().splitlines()[-1]
        # the subcommand's parser or the top-level one (unrecognized arguments) reports usage errors
        assert last.startswith((f"allocopt {name}: ", "allocopt: ")), err
        if status == ExitStatus.INTERNAL_ERROR:
            assert "internal error" in last and "report" in last
        elif status == ExitStatus.BAD_INPUT:
            assert "error: " in last


def test_every_subcommand_declares_good_and_bad_examples():
    assert {"demo", "topk", "cbmai", "complexity"} <= set(SUBCOMMANDS)
    for name in SUBCOMMANDS:
        statuses = {status for example in subcommand_module(name).EXAMPLES for status in example.statuses}
        assert ExitStatus.SUCCESS in statuses and ExitStatus.BAD_INPUT in statuses, name


def process_examples(examples) -> list:
    """Every example, those after the first of each (subcommand, exit statuses) pair marked slow: in the default
    suite a real process runs each kind of outcome of each subcommand once (a process start and import costs about
    as much as the example), and :func:`test_example_through_main` runs every example."""
    seen = set()
    params = []
    for name, example in examples:
        key = (name, frozenset(example.statuses))
        params.append(pytest.param((name, example), id=example_id((name, example)),
                                   marks=pytest.mark.slow if key in seen else ()))
        seen.add(key)
    return params


@pytest.mark.parametrize("item", process_examples(EXAMPLES))
def test_example_in_a_subprocess(item, tmp_path):
    name, example = item
    completed = run_process(name, *example.materialise(tmp_path))
    check_outcome(name, example, completed.returncode, completed.stdout, completed.stderr)


@pytest.mark.parametrize("item", EXAMPLES, ids=example_id)
def test_example_through_main(item, capsys, tmp_path):
    name, example = item
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # main() must count them, not let them escape
        status, out, err = run_main([name, *example.materialise(tmp_path)], capsys)
    check_outcome(name, example, status, out, err)


# ---- the reported failures, first


def test_top_k_instance_given_to_cbmai_lists_only_cbmai_instances(capsys):
    status, out, err = run_main(["cbmai", "--instance", "topk-example-1"], capsys)
    assert status == ExitStatus.BAD_INPUT and TRACEBACK not in err
    choices = err.split("choose from", 1)[1]
    assert "cbmai-d2p" in choices and "topk" not in choices


@pytest.mark.parametrize(("theta", "field"), [("0.5,,0.3", "field 2 of 3 is empty"),
                                              ("0.5,0.3,", "field 3 of 3 is empty"),
                                              (",0.5,0.3", "field 1 of 3 is empty"),
                                              ("0.5,x,0.3", "'x' is not a number")])
def test_empty_fields_and_trailing_commas_are_refused(theta, field, capsys):
    status, _, err = run_main(["topk", "--theta", theta, "--k", "1"], capsys)
    assert status == ExitStatus.BAD_INPUT and field in err


def test_cost_rows_with_an_empty_row_are_refused(capsys):
    status, _, err = run_main(["cbmai", "--rewards", "1,0.2", "--costs", "2,0;;1,1", "--bounds", "1,1"], capsys)
    assert status == ExitStatus.BAD_INPUT and "a row is empty" in err


def test_a_first_mean_with_a_minus_sign_is_a_value(capsys):
    from allocopt import TopKProblem, solve_topk

    outputs = []
    for argv in (["--theta", "-0.5,0.4,0.3"], ["--theta=-0.5,0.4,0.3"]):
        status, out, _ = run_main(["topk", *argv, "--k", "1", "--json"], capsys)
        assert status == ExitStatus.SUCCESS
        outputs.append(strict_json(out))
    assert outputs[0]["psi"] == outputs[1]["psi"]
    # the parsed means are those given: the same allocation as the Python API on theta = (-0.5, 0.4, 0.3)
    assert outputs[0]["psi"] == solve_topk(TopKProblem([-0.5, 0.4, 0.3], 1)).psi.tolist()
    assert outputs[0]["top"] == [1]


def test_every_list_valued_option_accepts_a_leading_minus_sign():
    parser = cli.build_parser()
    for command, subparser in cli._subparsers(parser).choices.items():
        for action in subparser._actions:
            if action.type in cli.NUMBER_LIST_TYPES:
                for option in action.option_strings:
                    argv = cli.normalise_argv(parser, [command, option, "-1,2"])
                    assert argv == [command, f"{option}=-1,2"]
    # a following option is not swallowed, and '--' ends the options
    assert cli.normalise_argv(parser, ["topk", "--theta", "--k"]) == ["topk", "--theta", "--k"]
    assert cli.normalise_argv(parser, ["topk", "--", "--theta", "-1"]) == ["topk", "--", "--theta", "-1"]


def test_a_closed_pipe_exits_quietly():
    # `allocopt topk ... | head -2`: the reader is gone before allocopt writes
    process = subprocess.Popen([sys.executable, "-m", "allocopt", "topk", "--theta", "0.51,0.5,0,-0.01,-0.092",
                                "--k", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()
    error = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=600) == ExitStatus.BROKEN_PIPE
    assert error == ""


@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "PYTHONUNBUFFERED=1"])
def test_a_reader_that_leaves_mid_output_gives_141(unbuffered, tmp_path):
    # `allocopt topk ... --json | head -c 1`: the reader takes one byte of a JSON object larger than a pipe's buffer
    # (64 KiB) and leaves. With PYTHONUNBUFFERED=1 the rest of the write was dropped silently (exit 0, output cut).
    import os

    means = tmp_path / "theta.txt"
    means.write_text("\n".join(str(0.1 + 0.8 * index / 1499) for index in range(1500)), encoding="utf-8")
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    process = subprocess.Popen([sys.executable, "-m", "allocopt", "topk", "--theta", f"@{means}", "--k", "1",
                                "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert os.read(process.stdout.fileno(), 1) == b"{"
    process.stdout.close()
    error = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=600) == ExitStatus.BROKEN_PIPE
    assert error == ""


def test_a_shell_pipeline_into_head_shows_no_error():
    completed = subprocess.run(
        ["bash", "-c", f"'{sys.executable}' -m allocopt topk --theta 0.51,0.5,0,-0.01,-0.092 --k 2 | head -2"], capture_output=True, text=True, timeout=600)
    assert completed.stdout.count("\n") == 2 and completed.stderr == ""


def test_means_at_the_ends_of_the_float_range_give_one_line():
    completed = run_process("topk", "--theta", "1e308,-1e308,0", "--k", "1")
    assert TRACEBACK not in completed.stderr and completed.stderr.count("\n") <= 1
    assert completed.returncode in (ExitStatus.SUCCESS, ExitStatus.BAD_INPUT, ExitStatus.NOT_CERTIFIED,
                                    ExitStatus.INTERNAL_ERROR)


def test_near_tie_is_certified_by_the_check_too(capsys):
    status, out, err = run_main(["topk", "--theta", "0.5,0.49999999999999994,0.3", "--k", "1", "--family",
                                 "bernoulli", "--json"], capsys)
    assert status == ExitStatus.SUCCESS and err == ""
    payload = strict_json(out)
    assert payload["status"] == "optimal" and payload["check"]["passed"] is True
    assert "failed" not in out


def test_uncertified_answers_exit_with_status_1(capsys):
    status, out, _ = run_main(["topk", "--theta", "1,0.6,0.2,-0.1", "--k", "2", "--method", "fwga",
                               "--iterations", "3", "--json"], capsys)
    payload = strict_json(out)
    assert status == ExitStatus.NOT_CERTIFIED
    assert payload["status"] == "iteration_limit" and payload["check"]["passed"] is False
    # a check that does not pass is not certified either: a tolerance no allocation can meet
    status, out, _ = run_main(["topk", "--theta", "1,0.6,0.2,-0.1", "--k", "2", "--check-tol", "1e-300",
                               "--json"], capsys)
    payload = strict_json(out)
    assert payload["status"] == "optimal" and payload["check"]["passed"] is False
    assert status == ExitStatus.NOT_CERTIFIED


def test_json_writes_non_finite_numbers_as_strings(capsys):
    status, out, _ = run_main(["complexity", "--theta", "0.7,0.7,0.5,0.5", "--k", "2", "--family", "bernoulli",
                               "--json"], capsys)
    assert status == ExitStatus.SUCCESS
    assert '"inf"' not in out and "Infinity" in out
    status, out, _ = run_main(["cbmai", "--rewards", "1,0.2", "--costs", "2,3", "--bounds", "1", "--json"], capsys)
    payload = strict_json(out)
    assert payload["value"] == "-Infinity" and payload["p"] == ["NaN", "NaN"] and float(payload["value"]) < 0


# ---- what main() does with whatever a handler throws


def _replace_handler(monkeypatch, behaviour):
    topk = subcommand_module("topk")

    def handler(args):
        return behaviour()
    monkeypatch.setattr(topk, "run", handler)


def _raise(error):
    def behaviour():
        raise error
    return behaviour


ARGV = ["topk", "--theta", "0.5,0.4", "--k", "1"]


def test_an_unexpected_exception_is_one_line_with_a_distinct_status(monkeypatch, capsys):
    _replace_handler(monkeypatch, _raise(ZeroDivisionError("float division by zero")))
    status, out, err = run_main(ARGV, capsys)
    assert status == ExitStatus.INTERNAL_ERROR == 3
    assert err.count("\n") == 1 and "internal error: ZeroDivisionError: float division by zero" in err
    assert "please report" in err


def test_interrupt_and_broken_pipe(monkeypatch, capsys):
    _replace_handler(monkeypatch, _raise(KeyboardInterrupt()))
    assert run_main(ARGV, capsys)[0] == ExitStatus.INTERRUPTED == 130
    _replace_handler(monkeypatch, _raise(BrokenPipeError()))
    status, _, err = run_main(ARGV, capsys)
    assert status == ExitStatus.BROKEN_PIPE and err == ""


def test_library_errors(monkeypatch, capsys):
    from allocopt.exceptions import InvalidArgumentError, SolverError

    _replace_handler(monkeypatch, _raise(InvalidArgumentError("The 'x' parameter of f must be\n positive.")))
    status, _, err = run_main(ARGV, capsys)
    assert status == ExitStatus.BAD_INPUT and err == "allocopt topk: error: The 'x' parameter of f must be positive.\n"
    _replace_handler(monkeypatch, _raise(SolverError("no answer")))
    status, _, err = run_main(ARGV, capsys)
    assert status == ExitStatus.NOT_CERTIFIED and err == "allocopt topk: error: no answer\n"


def test_warnings_are_summarised_on_one_line(monkeypatch, capsys):
    def noisy():
        for _ in range(1000):
            warnings.warn("overflow encountered in divide", RuntimeWarning)
        print("answer")
        return ExitStatus.SUCCESS
    _replace_handler(monkeypatch, noisy)
    status, out, err = run_main(ARGV, capsys)
    assert status == ExitStatus.SUCCESS and out == "answer\n"
    assert err.count("\n") == 1 and "1000 warnings" in err and "overflow encountered in divide" in err


def test_exit_statuses_are_documented():
    completed = run_process("--help")
    assert completed.returncode == 0
    for status in ExitStatus:
        assert f"  {int(status)} " in completed.stdout, status
    assert EXIT_STATUS_HELP.splitlines()[0] in run_process("topk", "--help").stdout
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    for status in ExitStatus:
        assert f"| {int(status)} " in docs, status


def test_a_check_that_cannot_run_is_an_uncertified_answer_not_bad_input(monkeypatch, capsys):
    # an allocation with Gamma(psi) = 0 (all mass on one arm: every pair with another arm has cost 0)
    import dataclasses

    import allocopt.topk as topk_package

    solve = topk_package.solve_topk

    def degenerate(*args, **kwargs):
        result = solve(*args, **kwargs)
        return dataclasses.replace(result, psi=[1.0, 0.0, 0.0], status="not_certified")
    monkeypatch.setattr(topk_package, "solve_topk", degenerate)
    for extra in ([], ["--json"]):
        status, out, err = run_main(["topk", "--theta", "0.5,0.4,0.3", "--k", "1", *extra], capsys)
        assert status == ExitStatus.NOT_CERTIFIED and err == ""
        if extra:
            payload = strict_json(out)
            assert payload["check"] is None and "Gamma(psi) > 0" in payload["check_error"]
        else:
            assert "KKT check not available: " in out


@pytest.mark.parametrize("cut", ["water-fill", "arm-order"])
def test_block_cut_reaches_adaptive_topk_fixed_budget(cut, capsys):
    # a budget of 30 on 4 arms ends inside AdaptiveTopK's first round (its first blocks are longer than 7 pulls
    # an arm): round-robin passes leave counts that differ by at most one, the arm-order cut gives the first arm
    # its whole block before the others get theirs; the command line runs the same rule as the library call
    from allocopt.algorithms import AdaptiveTopKFixedBudget, identify_fixed_budget
    from allocopt import TopKProblem

    status, out, _ = run_main(["identify", "--theta", "0.9,0.8,0.3,0.1", "--k", "2", "--family", "bernoulli",
                               "--policy", "adaptive-topk-budget", "--block-cut", cut, "--budget", "30",
                               "--runs", "3", "--seed", "5", "--json", "--per-run"], capsys)
    assert status == ExitStatus.SUCCESS
    pulls = np.array(strict_json(out)["pulls"])
    assert np.all(pulls.sum(axis=1) == 30)
    if cut == "water-fill":
        assert np.all(pulls.max(axis=1) - pulls.min(axis=1) <= 1)
    else:
        assert np.all(np.diff(pulls, axis=1) <= 0) and np.all(pulls[:, 0] - pulls[:, -1] > 1)
    library = identify_fixed_budget(TopKProblem([0.9, 0.8, 0.3, 0.1], 2, family="bernoulli"),
                                    AdaptiveTopKFixedBudget(block_cut=cut), [30], n_runs=3, rng=5)
    np.testing.assert_array_equal(pulls, library.pulls)


def _worker_processes(parent: int) -> list[int]:
    """The loky worker processes of ``parent`` (from /proc)."""
    from pathlib import Path

    workers = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == parent and b"popen_loky" in command:
            workers.append(int(entry.name))
    return workers


@pytest.mark.slow  # 45 s on a loaded 2-core machine: the CLI's imports, then the workers' start and shutdown
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_while_workers_start_exits_130_with_one_line():
    # Ctrl-C at a terminal sends SIGINT to the whole foreground process group: here, as soon as the loky workers
    # exist (they are still importing), to the group of a process started in its own session. The workers printed
    # their KeyboardInterrupt tracebacks.
    import os
    import signal
    import time

    process = subprocess.Popen([sys.executable, "-m", "allocopt", "identify", "--theta", "1,0.9,0.8,0.7,0.5,0.3",
                                "--k", "2", "--runs", "200000", "--jobs", "2", "--seed", "0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not _worker_processes(process.pid):
            assert process.poll() is None and time.monotonic() < deadline, "no worker process started"
            time.sleep(0.005)
        os.killpg(process.pid, signal.SIGINT)
        error = process.communicate(timeout=300)[1].decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == ExitStatus.INTERRUPTED
    assert "Traceback" not in error and "KeyboardInterrupt" not in error
    assert error.strip().splitlines() == ["allocopt identify: interrupted"]
