"""Helpers shared by the subcommands: exit statuses, example invocations, number lists and JSON output."""

from __future__ import annotations

import argparse
import enum
import re
import sys
from typing import Any, NamedTuple

from .._json import dumps
from .._validation import fail

__all__ = ["ExitStatus", "Example", "float_list", "float_list_or_file", "float_rows", "is_number_list", "print_json",
           "add_instance_arguments", "instance_problem"]


class ExitStatus(enum.IntEnum):
    """Exit statuses of ``allocopt`` (documented in ``allocopt --help`` and docs/cli.md)."""

    SUCCESS = 0
    """The computation ran and its answer is certified (optimal, proven infeasible, check passed)."""
    NOT_CERTIFIED = 1
    """The computation ran but its answer is not certified (``not_certified``, ``iteration_limit``,
    ``inaccurate``, a check with ``passed: False``), or a solver could not produce an answer."""
    BAD_INPUT = 2
    """Bad input: a usage error of the command line or an invalid argument or instance."""
    INTERNAL_ERROR = 3
    """An unexpected error inside allocopt (a bug: please report it)."""
    INTERRUPTED = 130
    """Interrupted by the user (Ctrl-C), as shells report SIGINT (128 + 2)."""
    BROKEN_PIPE = 141
    """The reader of standard output went away (``allocopt ... | head``), as shells report SIGPIPE (128 + 13)."""


class Example(NamedTuple):
    """One example invocation of a subcommand, run by the command-line tests.

    Attributes
    ----------
    argv : tuple of str
        The arguments after the subcommand name.
    status : ExitStatus or tuple of ExitStatus
        The exit status the invocation must give (or the statuses it may give, for an input whose outcome
        depends on the solver but must never be a traceback).
    why : str
        What the example shows (a known failure it reproduces, for example).
    files : tuple of (str, str)
        Files the example reads: ``(name, text)`` pairs that :meth:`materialise` writes into a fresh directory,
        whose path replaces ``{dir}`` in ``argv`` (for commands that read or write files).
    """

    argv: tuple[str, ...]
    status: ExitStatus | tuple[ExitStatus, ...]
    why: str
    files: tuple[tuple[str, str], ...] = ()

    @property
    def statuses(self) -> tuple[ExitStatus, ...]:
        """The acceptable exit statuses."""
        return self.status if isinstance(self.status, tuple) else (self.status,)

    def materialise(self, directory: Any) -> tuple[str, ...]:
        """Write :attr:`files` into ``directory`` and return ``argv`` with ``{dir}`` replaced by its path."""
        from pathlib import Path

        folder = Path(directory)
        for name, text in self.files:
            (folder / name).write_text(text, encoding="utf-8")
        return tuple(token.replace("{dir}", str(folder)) for token in self.argv)


def _number(item: str, text: str) -> float:
    try:
        return float(item)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r} ({item!r} is not a number)") from None


def float_list(text: str) -> list[float]:
    """Parse ``"0.5,0.2,-1"`` into floats (an argparse ``type``).

    Spaces around the numbers are allowed; an empty field (``"0.5,,0.3"``, a leading or trailing comma) is an
    error, never silently dropped.

    Examples
    --------
    >>> float_list("0.5, -1e-3,inf")
    [0.5, -0.001, inf]
    >>> float_list("0.5,0.3,")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected comma-separated numbers, got '0.5,0.3,' (field 3 of 3 is empty)
    """
    items = [item.strip() for item in text.split(",")]
    if text.strip() == "":
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}")
    empty = [position for position, item in enumerate(items) if item == ""]
    if empty:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r} (field {empty[0] + 1} of {len(items)} is empty)")
    return [_number(item, text) for item in items]


def float_list_or_file(text: str) -> list[float]:
    r""":func:`float_list`, or with ``"@PATH"`` the numbers of a text file, separated by commas, spaces or line
    breaks (for long lists: one command-line argument holds at most 128 KiB on Linux).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "theta.txt"
    >>> _ = path.write_text("0.9, 0.5\n0.1\n")
    >>> float_list_or_file("@" + str(path))
    [0.9, 0.5, 0.1]
    >>> float_list_or_file("@" + str(path.parent / "missing.txt"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    argparse.ArgumentTypeError: cannot read the numbers file '...missing.txt': ...
    """
    if not text.startswith("@"):
        return float_list(text)
    path = text[1:]
    try:
        with open(path, encoding="utf-8") as handle:
            content = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise argparse.ArgumentTypeError(f"cannot read the numbers file {path!r}: {error}") from None
    fields = content.replace(",", " ").split()
    if not fields:
        raise argparse.ArgumentTypeError(f"the numbers file {path!r} holds no number")
    numbers = []
    for position, item in enumerate(fields):
        try:
            numbers.append(float(item))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"the numbers file {path!r} must hold numbers; field {position + 1} is {item!r}") from None
    return numbers


def float_rows(text: str) -> list[list[float]]:
    """Parse ``"1,2;3,4"`` (rows separated by ';') into a list of rows (an argparse ``type``).

    An empty row (``"1,2;;3,4"``, a leading or trailing ``';'``) is an error, never silently dropped.

    Examples
    --------
    >>> float_rows("1,2;-3,4")
    [[1.0, 2.0], [-3.0, 4.0]]
    """
    rows = text.split(";")
    if any(row.strip() == "" for row in rows):
        raise argparse.ArgumentTypeError(
            f"expected rows of comma-separated numbers separated by ';', got {text!r} (a row is empty)")
    return [float_list(row) for row in rows]


NUMBER_LIST_TYPES = (float_list, float_list_or_file, float_rows)
"""The argparse types of list-valued options (their values may start with '-', see :func:`is_number_list`)."""

_LEADING_MINUS = re.compile(r"-(\d|\.\d|inf|nan)", re.IGNORECASE)


def is_number_list(token: str) -> bool:
    """Whether a command-line token that starts with '-' is a number list (``-0.5,0.4``), not an option.

    Examples
    --------
    >>> is_number_list("-0.5,0.4"), is_number_list("-.5"), is_number_list("-inf,0"), is_number_list("--k")
    (True, True, True, False)
    """
    return _LEADING_MINUS.match(token) is not None


def print_json(payload: Any) -> None:
    """Print one strict JSON object on stdout (non-finite numbers as ``"Infinity"``, ``"-Infinity"``, ``"NaN"``)."""
    sys.stdout.write(dumps(payload) + "\n")


def add_instance_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that describe a top-k instance: ``--theta``, ``--k``, ``--family``, ``--variance`` and
    ``--shape``."""
    from ..families import FAMILIES

    parser.add_argument("--theta", type=float_list_or_file, required=True,
                        help="comma-separated arm means, or @PATH: a file of means separated by commas, spaces or "
                             "line breaks")
    parser.add_argument("--k", type=int, required=True, help="size of the top set (1..K-1)")
    parser.add_argument("--family", default="gaussian", choices=sorted(FAMILIES), help="reward family")
    parser.add_argument("--variance", type=float_list, default=[1.0],
                        help="gaussian variance: one value or one per arm (default 1)")
    add_shape_argument(parser)


def add_shape_argument(parser: argparse.ArgumentParser) -> None:
    """``--shape``: the gamma family's known shape."""
    parser.add_argument("--shape", type=float, default=None, help="gamma shape alpha > 0 (required with --family gamma)")


def family_argument(args: argparse.Namespace) -> Any:
    """The family of ``--family`` (a name) with ``--shape`` (a :class:`~allocopt.families.Gamma` object)."""
    from ..families import Gamma

    if args.family == "gamma":
        if args.shape is None:
            fail("allocopt", "--shape", "the gamma shape alpha > 0, required with --family gamma", None)
        return Gamma(args.shape)
    if args.shape is not None:
        fail("allocopt", "--shape", "left out unless --family gamma", args.shape)
    return args.family


def instance_problem(args: argparse.Namespace) -> Any:
    """The :class:`~allocopt.TopKProblem` of the options added by :func:`add_instance_arguments`.

    ``--variance`` is one value or one per arm; for the other families only its default is accepted (the
    problem refuses any other value, naming it).
    """
    from ..topk import TopKProblem

    values = args.variance
    variance = values[0] if len(values) == 1 else values
    if args.family != "gaussian" and values == [1.0]:
        variance = None
    return TopKProblem(args.theta, args.k, family=family_argument(args), variance=variance)
