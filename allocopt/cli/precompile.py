"""``allocopt precompile``: fill numba's disk cache ahead of time (for container images and clusters)."""

from __future__ import annotations

import argparse
import sys

from ._common import Example, ExitStatus, print_json

__all__ = ["register", "EXAMPLES"]

EXAMPLES = (
    Example(("--families", "gaussian", "--rules", "none", "--json"), ExitStatus.SUCCESS,
            "the Gaussian solvers only, as JSON"),
    Example(("--families", "cauchy"), ExitStatus.BAD_INPUT, "an unknown family"),
    Example(("--rules", "uniform,no-such-rule"), ExitStatus.BAD_INPUT, "an unknown rule"),
)


def _names(text: str) -> list[str]:
    """Comma-separated names (an argparse ``type``); ``none`` is the empty list."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    return [] if names == ["none"] else names


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``precompile`` subcommand."""
    parser = subparsers.add_parser(
        "precompile", help="compile every compiled path once, so that numba's disk cache holds it",
        description="Run the top-k solvers (both kinds) of each family and the engine's compiled loop of each rule "
                    "on small instances, so that numba's disk cache (NUMBA_CACHE_DIR if set, else __pycache__ "
                    "beside the package, else the user's cache folder) holds their machine code: later processes "
                    "load it instead of compiling for seconds. Run it where the install is made (a container "
                    "image, a cluster's shared install), with the NUMBA_CACHE_DIR of the processes that will use it; "
                    "the cache serves the same install on the same kind of CPU. See docs/cli.md.")
    parser.add_argument("--families", type=_names, default=None, metavar="NAMES",
                        help="comma-separated family names (default: all)")
    parser.add_argument("--rules", type=_names, default=None, metavar="NAMES",
                        help="comma-separated rule names (default: all registered rules; 'none': solvers only)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of progress lines")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> ExitStatus:
    from ..testing.precompile import precompile

    def progress(line: str) -> None:
        if line.endswith(" s"):
            print(f"  {line}", file=sys.stderr, flush=True)

    result = precompile(args.families, args.rules, progress=None if args.json else progress)
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.message)
    return ExitStatus.SUCCESS if result.success else ExitStatus.NOT_CERTIFIED
