"""The helpers of the command line and of the scripts in examples/ and benchmarks/ (allocopt._scripts), and the
script-written sections of docs/: every measured table there names the script that wrote it, with its date,
machine and load, and that script exists."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from allocopt._scripts import (MeasuredRun, progress_iter, progress_on_terminal, tee_stdout, write_docs_section,
                               write_marked_section)

ROOT = Path(__file__).resolve().parent.parent
SECTION = re.compile(r"<!-- (?P<name>[\w-]+): written by its script, do not edit -->\n(?P<body>.*?)<!-- (?P=name): end -->",
                     re.S)


class _Terminal:
    """A stand-in for standard error that says it is a terminal and keeps what is written."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def test_progress_only_on_a_terminal(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert progress_on_terminal()
    assert list(progress_iter(range(4), desc="counting")) == [0, 1, 2, 3]
    assert "counting" in sys.stderr.text and "0/4" in sys.stderr.text  # the bar is drawn (and cleared at the end)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert not progress_on_terminal()


def test_no_progress_without_tqdm(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    assert not progress_on_terminal()
    assert list(progress_iter([1, 2])) == [1, 2] and sys.stderr.text == ""


def test_sections_are_replaced_in_place(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Page\n\nbefore\n")
    run = MeasuredRun.start()
    write_docs_section(page, "table", run, ["| a |", "|---|", "| 1 |"])
    write_docs_section(page, "table", run, ["| a |", "|---|", "| 2 |"])
    text = page.read_text()
    assert text.startswith("# Page\n\nbefore\n") and text.count("written by its script") == 1
    assert "| 2 |" in text and "| 1 |" not in text
    with pytest.raises(FileNotFoundError):
        write_marked_section(tmp_path / "missing.md", "<!-- a -->", "<!-- b -->", "<!-- a -->x<!-- b -->")


def test_tee_keeps_what_is_printed(capsys):
    with tee_stdout() as printed:
        print("one")
        print("two")
    assert capsys.readouterr().out == "one\ntwo\n" and printed.getvalue() == "one\ntwo\n"


def test_docs_sections_name_their_script_date_machine_and_load():
    sections = [(page, match) for page in sorted((ROOT / "docs").glob("*.md"))
                for match in SECTION.finditer(page.read_text())]
    assert sections, "no script-written section found in docs/"
    for page, match in sections:
        provenance = match["body"].strip().splitlines()[0]
        found = re.match(r"Written by `python ((?:examples|benchmarks)/\w+\.py)[^`]*` on \d{4}-\d\d-\d\d \d\d:\d\d UTC: "
                         r".*\d+ cores, load average [\d.]+ at the start and [\d.]+ at the end", provenance)
        assert found, f"{page.name}, section {match['name']}: {provenance[:120]}"
        assert (ROOT / found.group(1)).exists(), f"{page.name}: {found.group(1)} does not exist"
