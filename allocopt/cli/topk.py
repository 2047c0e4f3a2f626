"""``allocopt topk``: solve a top-k allocation problem and print its certificate."""

from __future__ import annotations

import argparse
import math

from ._common import Example, ExitStatus, add_instance_arguments, instance_problem, print_json

__all__ = ["register", "run", "format_report", "default_check_tolerance", "EXAMPLES"]

EXAMPLES = (
    Example(("--theta", "0.51,0.5,0,-0.01,-0.092", "--k", "2", "--variance", "0.25"), ExitStatus.SUCCESS,
            "Example 1 of Wang, Yang, You (2022)"),
    Example(("--theta", "-0.5,0.4,0.3", "--k", "1"), ExitStatus.SUCCESS,
            "a first mean with a minus sign is a value, not an option"),
    Example(("--theta", "2,1.5,1,0.5", "--k", "2", "--family", "gamma", "--shape", "3", "--method", "cvxpy"),
            ExitStatus.SUCCESS, "gamma arms of known shape 3 (3 times the exponential family's Gamma*)"),
    Example(("--theta", "2,1.5,1,0.5", "--k", "2", "--family", "gamma"), ExitStatus.BAD_INPUT,
            "the gamma family needs --shape"),
    Example(("--theta", "2,1.5,1,0.5", "--k", "2", "--family", "poisson", "--shape", "2"), ExitStatus.BAD_INPUT,
            "--shape belongs to the gamma family only"),
    Example(("--theta", "0.5,0.49999999999999994,0.3", "--k", "1", "--family", "bernoulli", "--json"),
            ExitStatus.SUCCESS, "near-tie one ulp apart: the KKT check certifies what the solver certifies"),
    Example(("--theta", "0.7,0.6,0.4,0.3", "--k", "2", "--family", "bernoulli", "--kind", "budget", "--json"),
            ExitStatus.SUCCESS, "fixed-budget costs"),
    Example(("--theta", "1,0.6,0.2,-0.1", "--k", "2", "--method", "fwga", "--iterations", "3", "--json"),
            ExitStatus.NOT_CERTIFIED, "three Frank-Wolfe iterations stop at the iteration limit"),
    Example(("--theta", "0.5,,0.3", "--k", "1"), ExitStatus.BAD_INPUT, "an empty field is refused"),
    Example(("--theta", "0.5,0.4,0.3", "--k", "1", "--check-tol", "2"), ExitStatus.BAD_INPUT,
            "a check tolerance outside (0, 1]"),
    Example(("--theta", "0.5,0.3,", "--k", "1"), ExitStatus.BAD_INPUT, "a trailing comma is refused"),
    Example(("--theta", "0.5,0.5,0.1", "--k", "1"), ExitStatus.BAD_INPUT, "a tie at the top-k boundary"),
    Example(("--theta", "0.5,1.5", "--k", "1", "--family", "bernoulli", "--json"), ExitStatus.BAD_INPUT,
            "a Bernoulli mean outside (0, 1)"),
    Example(("--theta", "0.5,0.4", "--k", "2"), ExitStatus.BAD_INPUT, "k must be in 1..K-1"),
    Example(("--theta", "1e308,-1e308,0", "--k", "1", "--json"),
            (ExitStatus.SUCCESS, ExitStatus.BAD_INPUT, ExitStatus.NOT_CERTIFIED, ExitStatus.INTERNAL_ERROR),
            "means at the ends of the float range: whatever the solver does, one line on stderr and no traceback"),
)


def register(subparsers) -> argparse.ArgumentParser:
    from ..topk import KINDS, TOPK_METHODS
    from ..topk.solve import DEFAULT_METHOD

    parser = subparsers.add_parser(
        "topk", help="optimal top-k allocation: psi, Gamma*, T*, certified gap, binding components",
        description="Solve max_psi min_{i in top, j in bottom} C_ij(psi) (or B_ij with --kind budget) and print the "
                    "allocation, Gamma*, T* = 1/Gamma*, the certified optimality gap and the connected components "
                    "of the binding-pair graph. Arm indices are 0-based, in the order of --theta.")
    add_instance_arguments(parser)
    parser.add_argument("--method", default=DEFAULT_METHOD, choices=TOPK_METHODS, help="solver")
    parser.add_argument("--kind", default="confidence", choices=KINDS,
                        help="confidence (C_ij, fixed confidence) or budget (B_ij, fixed budget)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="iterations of the iterative methods (fwga, kkt-tracking; default: the method's)")
    parser.add_argument("--check-tol", type=_tolerance, default=None,
                        help="relative tolerance of the binding-pair graph (default: from the certified gap)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(handler=run)
    return parser


def _tolerance(text: str) -> float:
    """An argparse type: a relative tolerance in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a relative tolerance in (0, 1], got {text!r}")
    return value


def default_check_tolerance(result) -> float:
    r"""Near-binding tolerance matched to the accuracy of a result: :math:`\max(10^{-6}, 10\sqrt{g})` for its
    certified relative gap :math:`g`, at most 0.1.

    A certified gap bounds the value, not the allocation: where :math:`\Gamma` is curved around its maximum,
    an allocation within a relative gap :math:`g` of :math:`\Gamma^*` can lie :math:`O(\sqrt g)` from
    :math:`\psi^*`, and the check's balance and KKT residuals are linear in that distance. An exact answer
    (:math:`g \approx 10^{-15}`) is checked at :math:`10^{-6}`; an interior-point answer with :math:`g = 10^{-9}`
    at :math:`3.2 \times 10^{-4}`.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> default_check_tolerance(SimpleNamespace(relative_gap=1e-15))
    1e-06
    >>> round(default_check_tolerance(SimpleNamespace(relative_gap=1e-10)), 12)
    0.0001
    """
    return float(min(max(1e-6, 10.0 * math.sqrt(max(float(result.relative_gap), 0.0))), 0.1))


def format_report(result, certificate, check_error: str = "") -> str:
    """The text report of a solved problem and its :class:`~allocopt.TopKCertificate` (``None`` when the check
    could not run, ``check_error`` saying why)."""
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
    lines.append(certificate.summary() if certificate is not None else f"KKT check not available: {check_error}")
    return "\n".join(lines)


def exit_status(result, certificate) -> ExitStatus:
    """0 when the solver certified its answer and the KKT check passed, 1 otherwise (or without a check)."""
    passed = certificate is not None and certificate.passed
    return ExitStatus.SUCCESS if result.status == "optimal" and passed else ExitStatus.NOT_CERTIFIED


def check_result(result, tolerance: float):
    """``(check_topk report, "")`` of a result with the solver's multipliers as candidates, or ``(None, reason)``
    when the check cannot run on the solver's allocation (for example Gamma(psi) = 0 after too few
    iterations): the input was valid, so this is an uncertified answer, not an input error."""
    import numpy as np

    from ..exceptions import AllocoptError
    from ..topk import check_topk

    values = result.multipliers.values  # sparse: the check never builds the k x (K-k) matrix
    usable = bool(np.all(np.isfinite(values)) and np.all(values >= 0) and np.any(values > 0))
    try:
        return check_topk(result.problem, result.psi, tol=tolerance, kind=result.kind,
                          mu=result.multipliers if usable else None), ""
    except AllocoptError as error:
        return None, str(error)


def run(args: argparse.Namespace) -> ExitStatus:
    from ..topk import solve_topk

    problem = instance_problem(args)
    options = {} if args.iterations is None else {"iterations": args.iterations}
    result = solve_topk(problem, method=args.method, kind=args.kind, **options)
    tolerance = default_check_tolerance(result) if args.check_tol is None else args.check_tol
    certificate, check_error = check_result(result, tolerance)
    if args.json:
        print_json({
            **result.to_dict(),  # the result's own strict-JSON form, plus the check of the certificate
            "components": [] if certificate is None else [
                {"top": list(c.top), "bottom": list(c.bottom), "balance_residual": c.balance_residual}
                for c in certificate.components],
            "check": None if certificate is None else certificate.to_dict(),
            **({"check_error": check_error} if certificate is None else {}),
        })
    else:
        print(format_report(result, certificate, check_error))
    return exit_status(result, certificate)
