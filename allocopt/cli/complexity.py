"""``allocopt complexity``: every complexity measure of an instance, as a table or as JSON."""

from __future__ import annotations

import argparse

from ._common import (Example, ExitStatus, add_shape_argument, family_argument, float_list, float_list_or_file,
                      print_json)

__all__ = ["register", "exit_status", "EXAMPLES"]

EXAMPLES = (
    Example(("--theta", "0.5,0.9,0.8", "--k", "1", "--p", "2"), ExitStatus.SUCCESS, "a table"),
    Example(("--theta", "0.7,0.7,0.5,0.5", "--k", "2", "--family", "bernoulli", "--json"), ExitStatus.SUCCESS,
            "ties within the top set: the infinite spread constant is written \"Infinity\""),
    Example(("--theta", "-0.5,0.4,0.3", "--k", "1", "--json"), ExitStatus.SUCCESS,
            "a first mean with a minus sign is a value, not an option"),
    Example(("--theta", "2,1.5,1,0.5", "--k", "2", "--family", "gamma", "--shape", "3", "--json"), ExitStatus.SUCCESS,
            "gamma arms of known shape 3"),
    Example(("--theta", "@{dir}/theta.txt", "--k", "1", "--json"), ExitStatus.SUCCESS,
            "the means read from a file, as the other commands' --theta @PATH", (("theta.txt", "0.5 0.9\n0.8\n"),)),
    Example(("--theta", "@{dir}/missing.txt", "--k", "1"), ExitStatus.BAD_INPUT, "a numbers file that cannot be read"),
    Example(("--theta", "0.5,0.9", "--k", "3"), ExitStatus.BAD_INPUT, "k must be in 1..K-1"),
    Example(("--theta", "0.5,0.9,", "--k", "1", "--json"), ExitStatus.BAD_INPUT, "a trailing comma is refused"),
    Example(("--theta", "0.5,0.9,0.1", "--k", "1", "--p", "0.5,,1"), ExitStatus.BAD_INPUT,
            "an empty field is refused"),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``complexity`` subcommand."""
    from ..complexity import NSAR_EXPERIMENT_EXPONENTS
    from ..families import FAMILIES

    parser = subparsers.add_parser(
        "complexity",
        help="complexity measures of a bandit instance",
        description="Print every complexity measure that applies to the instance (theta, k, family): gaps, "
                    "H1/H2/H(p) and the fixed-budget bounds of Shahrampour and Tarokh (2017), H(t, eps) and "
                    "H(0, eps) of Chen, Chen, Zhang, Zhou (2017), "
                    "and the optimal allocations of the top-k layer: Gamma*, T* = 1/Gamma*, the lower bound "
                    "T* kl(delta, 1-delta) and the fixed-budget exponent Gamma_B*, with certified gaps. (The CBMAI "
                    "gaps need a CBMAI instance: use complexity.report(..., cbmai=...) in Python.) "
                    "See docs/complexity.md.",
    )
    parser.add_argument("--theta", type=float_list_or_file, required=True, metavar="MEANS",
                        help="means of the arms, comma-separated, in any order (e.g. 0.7,0.5,0.66), or @PATH: a "
                             "file of means separated by commas, spaces or line breaks")
    parser.add_argument("--k", type=int, required=True, help="size of the top set, 1..K-1")
    parser.add_argument("--family", default="gaussian", choices=sorted(FAMILIES), help="reward family")
    parser.add_argument("--variance", type=float_list, default=None, metavar="V",
                        help="gaussian variance: one value, or one per arm comma-separated")
    add_shape_argument(parser)
    parser.add_argument("--delta", type=float, default=0.01, help="target error probability (default 0.01)")
    parser.add_argument("--eps", type=float, default=0.01, help="tolerance on the aggregate regret (default 0.01)")
    parser.add_argument("--p", type=float_list, default=list(NSAR_EXPERIMENT_EXPONENTS), metavar="P",
                        help="exponents of H(p) and NSAR, comma-separated (default: those of the "
                             "experiments of Shahrampour and Tarokh 2017)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(handler=_run)


def exit_status(result) -> ExitStatus:
    """1 when an optimal allocation of the report is not certified within the exact solver's tolerance
    (the criterion of its status ``"optimal"``), 0 otherwise."""
    from ..topk import method_options

    tolerance = method_options("exact")["tol"]
    for key in ("gamma_star", "gamma_b_star"):
        if key in result and not result[f"{key}.gap"] <= tolerance * result[key]:
            return ExitStatus.NOT_CERTIFIED
    return ExitStatus.SUCCESS


def _run(args: argparse.Namespace) -> ExitStatus:
    from ..complexity import report

    variance = args.variance
    if variance is not None and len(variance) == 1:
        variance = variance[0]
    result = report(args.theta, args.k, family_argument(args), variance=variance, delta=args.delta, eps=args.eps, p=args.p)
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.to_table())
    return exit_status(result)
