"""Command-line interface: ``allocopt <subcommand> ...`` (also ``python -m allocopt``).

Adding a subcommand
-------------------
Each subcommand lives in its own module of this package, listed in :data:`SUBCOMMANDS`, and defines

* ``register(subparsers)``, which adds an :mod:`argparse` parser whose ``handler`` default is a function
  ``handler(args) -> ExitStatus``. List-valued options use the argparse types ``float_list`` / ``float_rows``
  of :mod:`allocopt.cli._common`: their values may then start with a minus sign (``--theta -0.5,0.4``), which
  :func:`normalise_argv` arranges for every such option of every subcommand;
* ``EXAMPLES``, a tuple of :class:`~allocopt.cli._common.Example` (arguments after the subcommand name and
  the exit status they must give). The command-line tests run every example of every registered subcommand,
  in a subprocess and through :func:`main`, and check that no traceback reaches stderr, that the exit
  status is the expected one and that ``--json`` output is strict JSON. Give at least one example that
  succeeds and one bad input.

Handlers print results with ``print`` (text) or ``print_json`` (strict JSON, the convention of
:mod:`allocopt._json`) and raise library errors (:class:`~allocopt.exceptions.AllocoptError`) for bad input;
:func:`main` turns every outcome into one of the exit statuses below and never shows a traceback.

Exit statuses
-------------
See :class:`~allocopt.cli._common.ExitStatus`: 0 certified answer, 1 computation ran but the answer is not
certified (or a solver produced no answer), 2 bad input, 3 internal error (a bug), 130 interrupted,
141 standard output closed early.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Callable

from ..exceptions import AllocoptError, SolverError
from ._common import NUMBER_LIST_TYPES, Example, ExitStatus, is_number_list

__all__ = ["main", "build_parser", "normalise_argv", "subcommand_module", "SUBCOMMANDS", "ExitStatus", "Example",
           "EXIT_STATUS_HELP"]

# modules of this package that define a subcommand, in the order shown by --help
SUBCOMMANDS: tuple[str, ...] = ("demo", "topk", "cbmai", "complexity", "identify", "experiment", "precompile")

EXIT_STATUS_HELP = """\
exit status:
  0    success: the answer is certified (optimal, proven infeasible, check passed)
  1    the computation ran but the answer is not certified (status not_certified,
       iteration_limit or inaccurate, or "passed: False"), or a solver produced no answer
  2    bad input: a usage error or an invalid argument or instance
  3    internal error: a bug in allocopt, please report it (ALLOCOPT_TRACEBACK=1 shows the traceback)
  130  interrupted (Ctrl-C)
  141  standard output was closed early (for example by `allocopt ... | head`)
"""

_TRACEBACK_VARIABLE = "ALLOCOPT_TRACEBACK"


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions as usual but keeps the exit-status table as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("exit status:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def subcommand_module(name: str) -> ModuleType:
    """The module of the subcommand ``name`` (one of :data:`SUBCOMMANDS`)."""
    return importlib.import_module(f"{__name__}.{name}")


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered subcommand."""
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="allocopt",
        description="Exact, certified optimisation subproblems of pure-exploration bandits.",
        epilog=EXIT_STATUS_HELP, formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"allocopt {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in SUBCOMMANDS:
        subcommand_module(name).register(subparsers)
    for subparser in subparsers.choices.values():
        subparser.formatter_class = _HelpFormatter
        if subparser.epilog is None:
            subparser.epilog = EXIT_STATUS_HELP
    return parser


def normalise_argv(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """Join each list-valued option with a value that starts with '-' (``--theta -0.5,0.4`` becomes
    ``--theta=-0.5,0.4``), so that argparse does not take the value for an option.

    The list-valued options are those of the subcommand named in ``argv`` whose argparse ``type`` is one of
    ``NUMBER_LIST_TYPES``; tokens after ``--`` are left alone.

    Examples
    --------
    >>> normalise_argv(build_parser(), ["topk", "--theta", "-0.5,0.4,0.3", "--k", "1"])
    ['topk', '--theta=-0.5,0.4,0.3', '--k', '1']
    """
    tokens = list(argv)
    choices = _subparsers(parser).choices
    start = next((index for index, token in enumerate(tokens) if token in choices), None)
    if start is None:
        return tokens
    options = {option for action in choices[tokens[start]]._actions if action.type in NUMBER_LIST_TYPES
               for option in action.option_strings}
    result = tokens[:start + 1]
    index = start + 1
    while index < len(tokens):
        token = tokens[index]
        if token == "--":
            result.extend(tokens[index:])
            break
        if token in options and index + 1 < len(tokens) and is_number_list(tokens[index + 1]):
            result.append(f"{token}={tokens[index + 1]}")
            index += 2
            continue
        result.append(token)
        index += 1
    return result


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


class _WarningCounter:
    """Counts the warnings raised while it is active instead of printing each one."""

    def __init__(self) -> None:
        self.count = 0
        self.first: str | None = None

    def __call__(self, message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        self.count += 1
        if self.first is None:
            self.first = f"{category.__name__}: {_one_line(message)}"

    def describe(self) -> str:
        plural = "s" if self.count > 1 else ""
        return f"{self.count} warning{plural} inside allocopt (first: {self.first})"


def _silence_stdout() -> None:
    """Point standard output at the null device, so that the final flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass  # not a real file (for example captured output in tests): nothing will be flushed at exit


def _whole_writes() -> Callable[[], None]:
    """Make every write to standard output complete or raise; returns the function that undoes it.

    With ``PYTHONUNBUFFERED=1`` (common in container images) ``sys.stdout`` writes straight to the file descriptor,
    and a write that the pipe's reader cut short (``allocopt ... | head``) is dropped without an error: the command
    exited 0 with its output truncated. A buffered writer over the same descriptor writes the rest or raises
    :class:`BrokenPipeError` (exit status 141); lines are still passed on as they are printed.
    """
    stream = sys.stdout
    raw = getattr(stream, "buffer", None)
    if not isinstance(stream, io.TextIOWrapper) or not isinstance(raw, io.RawIOBase):
        return lambda: None
    wrapper = io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding, errors=stream.errors,
                               line_buffering=True)
    sys.stdout = wrapper

    def restore() -> None:
        sys.stdout = stream
        try:
            wrapper.flush()
        except OSError:  # the reader went away after the command's own flush: nothing more can reach it
            _silence_stdout()
            with contextlib.suppress(OSError):
                wrapper.flush()
        with contextlib.suppress(OSError, ValueError):
            wrapper.detach().detach()  # keep the descriptor's own stream open

    return restore


def _run(argv: Sequence[str] | None, context: dict[str, str], counter: _WarningCounter) -> int:
    parser = build_parser()
    tokens = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(normalise_argv(parser, tokens))
    context["command"] = f"allocopt {args.command}"
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = counter
        status = int(args.handler(args))
    if counter.count:
        print(f"{context['command']}: warning: {counter.describe()}; please report it", file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the process exit status (see :class:`ExitStatus`); never shows a traceback.

    Usage errors (and ``--help``, ``--version``) raise :class:`SystemExit` from :mod:`argparse` as usual.
    """
    context = {"command": "allocopt"}
    counter = _WarningCounter()
    restore = _whole_writes()
    try:
        return _status(argv, context, counter)
    finally:
        restore()


def _status(argv: Sequence[str] | None, context: dict[str, str], counter: _WarningCounter) -> int:
    """The exit status of one run (:func:`main`)."""
    try:
        try:
            return _run(argv, context, counter)
        finally:
            if sys.stdout is not None:
                sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return ExitStatus.BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"{context['command']}: interrupted", file=sys.stderr)
        return ExitStatus.INTERRUPTED
    except SolverError as error:
        print(f"{context['command']}: error: {_one_line(error)}", file=sys.stderr)
        return ExitStatus.NOT_CERTIFIED
    except AllocoptError as error:
        print(f"{context['command']}: error: {_one_line(error)}", file=sys.stderr)
        return ExitStatus.BAD_INPUT
    except Exception as error:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        after = f" after {counter.describe()}" if counter.count else ""
        print(f"{context['command']}: internal error: {type(error).__name__}: {_one_line(error)}{after}. "
              f"This is a bug in allocopt: please report it with the command line "
              f"(set {_TRACEBACK_VARIABLE}=1 to see the traceback).", file=sys.stderr)
        if os.environ.get(_TRACEBACK_VARIABLE):
            traceback.print_exc()
        return ExitStatus.INTERNAL_ERROR
