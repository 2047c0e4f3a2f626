"""``allocopt topk``: solve a top-k allocation problem and print its certificate."""

from __future__ import annotations

import argparse


from ._common import float_list, print_json

__all__ = ["register", "run", "format_report", "default_check_tolerance"]


def register(subparsers) -> argparse.ArgumentParser:
    from ..families import FAMILIES
    from ..topk import KINDS, TOPK_METHODS
    from ..topk.solve import DEFAULT_METHOD

    parser = subparsers.add_parser(
        "topk", help="optimal top-k allocation: psi, Gamma*, T*, certified gap, binding components",
        description="Solve max_psi min_{i in top, j in bottom} C_ij(psi) (or B_ij with --kind budget) and print the "
                    "allocation, Gamma*, T* = 1/Gamma*, the certified optimality gap and the connected components "
                    "of the binding-pair graph. Arm indices are 0-based, in the order of --theta.")
    parser.add_argument("--theta", type=float_list, required=True, help="comma-separated arm means")
    parser.add_argument("--k", type=int, required=True, help="size of the top set (1..K-1)")
    parser.add_argument("--family", default="gaussian", choices=sorted(FAMILIES), help="reward family")
    parser.add_argument("--variance", type=float_list, default=[1.0],
                        help="gaussian variance: one value or one per arm (default 1)")
    parser.add_argument("--method", default=DEFAULT_METHOD, choices=TOPK_METHODS, help="solver")
    parser.add_argument("--kind", default="confidence", choices=KINDS,
                        help="confidence (C_ij, fixed confidence) or budget (B_ij, fixed budget)")
    parser.add_argument("--check-tol", type=float, default=None,
                        help="relative tolerance of the binding-pair graph (default: from the certified gap)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(handler=run)
    return parser


def default_check_tolerance(result) -> float:
    """Near-binding tolerance matched to the accuracy of a result: 1e-6, or ten times its relative gap."""
    return float(min(max(1e-6, 10.0 * result.relative_gap), 0.1))


def _variance(values: list[float], family: str):
    if family != "gaussian":
        return None if values == [1.0] else (values[0] if len(values) == 1 else values)
    return values[0] if len(values) == 1 else values


def format_report(result, certificate) -> str:
    """The text report of a solved problem and its :class:`~allocopt.TopKCertificate`."""
    problem = result.problem
    lines = [f"top-{problem.k} allocation of {problem.n_arms} arms ({problem.family!r}, kind {result.kind}, "
             f"method {result.method}, status {result.status})",
             "  arm  set         theta           psi"]
    top = set(problem.top.tolist())
    for arm in range(problem.n_arms):
        lines.append(f"  {arm:3d}  {'top   ' if arm in top else 'bottom'}  {problem.theta[arm]:12.6g}  "
                     f"{result.psi[arm]:12.8f}")
    lines.append(f"Gamma* = {result.value:.10g}   T* = {result.characteristic_time:.10g}")
    lines.append(f"certified gap = {result.gap:.3g} (relative {result.relative_gap:.3g}); "
                 f"T* in [{result.characteristic_time_bounds[0]:.10g}, {result.characteristic_time_bounds[1]:.10g}]")
    lines.append(certificate.summary())
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..topk import TopKProblem, check_topk, solve_topk

    problem = TopKProblem(args.theta, args.k, family=args.family, variance=_variance(args.variance, args.family))
    result = solve_topk(problem, method=args.method, kind=args.kind)
    tolerance = default_check_tolerance(result) if args.check_tol is None else args.check_tol
    certificate = check_topk(problem, result.psi, tol=tolerance, kind=args.kind)
    if args.json:
        print_json({
            "psi": result.psi, "value": result.value, "characteristic_time": result.characteristic_time,
            "gap": result.gap, "relative_gap": result.relative_gap, "upper_bound": result.upper_bound,
            "mu": result.mu, "top": problem.top, "bottom": problem.bottom,
            "components": [{"top": list(c.top), "bottom": list(c.bottom), "balance_residual": c.balance_residual}
                           for c in certificate.components],
            "method": result.method, "kind": result.kind, "status": result.status, "iterations": result.iterations,
            "time": result.time, "check": certificate.to_dict(),
        })
    else:
        print(format_report(result, certificate))
    return 0
