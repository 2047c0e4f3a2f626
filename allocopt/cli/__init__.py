"""Command-line interface: ``allocopt <subcommand> ...`` (also ``python -m allocopt``).

Each subcommand lives in its own module of this package and exposes ``register(subparsers)``, which adds
an :mod:`argparse` parser whose ``handler`` default is a function ``handler(args) -> int``. Errors caused by
user input are printed as one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..exceptions import AllocoptError

__all__ = ["main", "build_parser", "SUBCOMMANDS"]

# modules of this package that define a subcommand, in the order shown by --help
SUBCOMMANDS: tuple[str, ...] = ("demo", "topk", "cbmai", "complexity", "identify")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered subcommand."""
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="allocopt",
        description="Exact, certified optimisation subproblems of pure-exploration bandits.",
    )
    parser.add_argument("--version", action="version", version=f"allocopt {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except AllocoptError as error:
        print(f"allocopt {args.command}: error: {error}", file=sys.stderr)
        return 2
