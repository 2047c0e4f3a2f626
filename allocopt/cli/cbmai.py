"""``allocopt cbmai``: solve a CBMAI linear program and print its support, mix, value, duals and scores.

Examples::

    allocopt cbmai --rewards 1,0.2 --costs "2,0" --bounds 1
    allocopt cbmai --rewards 0.9,0.5,0.2 --costs "1.5,0.5,0.2;0.2,1.4,0.1" --bounds 1,1 --method highs --json
    allocopt cbmai --instance cbmai-d2p
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ._common import Example, ExitStatus, float_list, float_rows, print_json

__all__ = ["register", "cbmai_instance_names", "EXAMPLES"]

EXAMPLES = (
    Example(("--rewards", "1,0.2", "--costs", "2,0", "--bounds", "1", "--json"), ExitStatus.SUCCESS,
            "a two-arm LP solved by hand: p = (1/2, 1/2), value 0.6"),
    Example(("--instance", "cbmai-d2p"), ExitStatus.SUCCESS, "Table 1 (D2P) of Tang, Jain, Nayyar, Nuzzo"),
    Example(("--rewards", "1,0.2", "--costs", "2,3", "--bounds", "1", "--json"), ExitStatus.SUCCESS,
            "a proven infeasible LP is a certified answer; its value -inf is written \"-Infinity\""),
    Example(("--rewards", "-1,-0.2", "--costs", "-2,0", "--bounds", "-1", "--json"), ExitStatus.SUCCESS,
            "number lists that start with a minus sign"),
    Example(("--instance", "topk-example-1"), ExitStatus.BAD_INPUT,
            "a top-k instance is not a CBMAI instance: the message lists only the CBMAI instances"),
    Example(("--instance", "no-such-instance", "--json"), ExitStatus.BAD_INPUT, "an unknown instance"),
    Example(("--rewards", "1,,0.2", "--costs", "2,0", "--bounds", "1"), ExitStatus.BAD_INPUT,
            "an empty field is refused"),
    Example(("--rewards", "1,0.2", "--costs", "2,0;", "--bounds", "1"), ExitStatus.BAD_INPUT,
            "an empty row is refused"),
    Example(("--rewards", "1,0.2", "--costs", "2,0,1", "--bounds", "1"), ExitStatus.BAD_INPUT,
            "costs of the wrong length"),
    Example(("--rewards", "1,0.2"), ExitStatus.BAD_INPUT, "--costs and --bounds are missing"),
)


def cbmai_instance_names() -> tuple[str, ...]:
    """The reference instances that are CBMAI instances (they have rewards, costs and bounds)."""
    from ..testing.instances import REFERENCE_INSTANCES

    return tuple(name for name, instance in REFERENCE_INSTANCES.items()
                 if {"rewards", "costs", "bounds"} <= set(instance.parameters))


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "cbmai",
        help="solve the CBMAI linear program (best mixed arm under cost constraints)",
        description="Solve max r^T p s.t. c p <= cbar, 1^T p = 1, p >= 0 and print the optimal support (slack l "
                    "is reported as K + l), the mix p, the value, the dual solution, and the IV (6) and "
                    "Lagrangian (8) scores of every arm.",
    )
    parser.add_argument("--rewards", type=float_list, help="K mean rewards, comma-separated")
    parser.add_argument("--costs", type=float_rows, help="L rows of K mean costs: 'c11,c12,...;c21,c22,...'")
    parser.add_argument("--bounds", type=float_list, help="L cost bounds, comma-separated")
    parser.add_argument("--n-unknown", type=int, default=None, help="K0: arms 0..K0-1 are unknown (default K)")
    parser.add_argument("--instance", default=None, choices=cbmai_instance_names(), metavar="NAME",
                        help="a reference instance instead of --rewards/--costs/--bounds: "
                             + ", ".join(cbmai_instance_names()))
    parser.add_argument("--method", default="enumerate", help="enumerate (default), highs or pulp")
    parser.add_argument("--solver", default=None, help="PuLP solver for --method pulp: highs or cbc")
    parser.add_argument("--strict-iv", action="store_true", help="strict IV variant (only BFS with x_a > 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=_handle, parser=parser)


def _problem(args: argparse.Namespace):
    from ..cbmai import CBMAIProblem

    given = [args.rewards is not None, args.costs is not None, args.bounds is not None]
    if args.instance is not None:
        if any(given):
            args.parser.error("--instance cannot be combined with --rewards, --costs or --bounds")
        return CBMAIProblem.from_reference(args.instance)
    if not all(given):
        args.parser.error("--rewards, --costs and --bounds are required (or --instance)")
    return CBMAIProblem(args.rewards, args.costs, args.bounds, args.n_unknown)


def exit_status(result) -> ExitStatus:
    """0 when the LP certificate vouches for the answer (every "optimal" or "infeasible" status of
    :func:`~allocopt.cbmai.solve_cbmai` is certified), 1 for "not_certified"."""
    certified = result.status in ("optimal", "infeasible")
    return ExitStatus.SUCCESS if certified else ExitStatus.NOT_CERTIFIED


def _handle(args: argparse.Namespace) -> ExitStatus:
    from ..cbmai import iv_scores, lagrangian_scores, solve_cbmai

    problem = _problem(args)
    result = solve_cbmai(problem, args.method, solver=args.solver)
    iv = iv_scores(problem, strict=args.strict_iv)
    if result.status == "not_certified":  # the scores would need the same certified dual
        lagrangian = np.full(problem.n_columns, np.nan)
    else:
        lagrangian = lagrangian_scores(problem, method=args.method, solver=args.solver)
    labels = [problem.arm_label(column) for column in range(problem.n_columns)]
    report = result.assumption_1
    payload = {
        "status": result.status,
        "message": result.message,
        "method": result.method,
        "support": list(result.support),
        "support_labels": result.support_labels(),
        "p": result.p,
        "slack": result.slack,
        "value": result.value,
        "duals": result.duals,
        "dual_rule": result.dual_rule,
        "iv_scores": iv,
        "iv_variant": "strict" if args.strict_iv else "literal (6)",
        "lagrangian_scores": lagrangian,
        "columns": labels,
        "assumption_1": None if report is None else {"holds": report.holds, "failures": list(report.failures)},
        "certificate_max_violation": result.certificate.max_violation(),
    }
    if args.json:
        print_json(payload)
        return exit_status(result)
    with np.printoptions(precision=6, suppress=True):
        print(f"status: {result.status} (method {result.method})")
        if result.status == "not_certified" or result.certificate_failure:
            print(f"note:    {result.message}")
        if result.optimal:
            print(f"support: {', '.join(result.support_labels())}  (columns {list(result.support)})")
            print(f"value:   {result.value:.10g}")
            print(f"p:       {result.p}")
            print(f"slack:   {result.slack}")
            print(f"duals:   {result.duals}  ({result.dual_rule})")
        if report is not None:
            print("Assumption 1: " + ("holds" if report.holds else "fails: " + "; ".join(report.failures)))
        width = max(len(label) for label in labels)
        print(f"{'column':<{width}}  {'IV score':>12}  {'Lagrangian':>12}")
        for label, iv_score, l_score in zip(labels, iv, lagrangian):
            print(f"{label:<{width}}  {iv_score:>12.6g}  {l_score:>12.6g}")
    return exit_status(result)
