"""``allocopt demo``: the built-in example run by ``make demo``."""

from __future__ import annotations

import argparse

from ._common import Example, ExitStatus

__all__ = ["register", "run", "EXAMPLES"]

EXAMPLES = (
    Example((), ExitStatus.SUCCESS, "Example 1 of Wang, Yang, You (2022), certified"),
    Example(("--json",), ExitStatus.BAD_INPUT, "demo takes no options"),
)


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "demo", help="solve Example 1 of Wang, Yang, You (2022) and print the allocation and its certificate",
        description="Solves Example 1 of Wang, Yang, You (2022): Gaussian arms theta = (0.51, 0.5, 0, -0.01, "
                    "-0.092), variance 1/4, k = 2, and prints the allocation, Gamma*, T*, the binding-pair "
                    "components and the KKT certificate.")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> ExitStatus:
    from ..testing import get_instance
    from ..topk import TopKProblem, solve_topk
    from .topk import check_result, default_check_tolerance, exit_status, format_report

    instance = get_instance("topk-example-1")
    parameters = instance.parameters
    problem = TopKProblem(parameters["theta"], parameters["k"], family=parameters["family"],
                          variance=parameters["variance"])
    result = solve_topk(problem)
    certificate, check_error = check_result(result, default_check_tolerance(result))
    print(f"Example 1 ({instance.source})")
    print(format_report(result, certificate, check_error))
    if certificate is not None:
        print(f"components (1-based, as in the paper): {certificate.component_indices(one_based=True)}")
    print(f"paper: psi* ~ {instance.expected['psi']}, Gamma* ~ {instance.expected['value']}")
    return exit_status(result, certificate)
