"""The CBMAI layer's measures for complexity reports: the hardness gaps and exponents of Tang, Jain, Nayyar,
Nuzzo (2024, Section 4.1) of the instance passed as ``report(..., cbmai=CBMAIProblem(...))``.

The CBMAI layer is imported when the provider runs, so that importing :mod:`allocopt.complexity` stays cheap;
``cbmai_hardness`` takes seconds to tens of seconds on the paper's ``K = 24, L = 2`` instances.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InvalidInstanceError
from .measures import GroupBuilder, Measure, MeasureNotApplicable, MeasureProvider, ReportContext

__all__ = ["GROUP_CBMAI", "CBMAI_PROVIDER"]

GROUP_CBMAI = "CBMAI hardness (Tang et al. 2024)"


#: The report entries of the CBMAI group: (attribute of CBMAIHardness, symbol, source, what it bounds); the key is
#: ``"cbmai." + attribute``.
_CBMAI_MEASURES: tuple[tuple[str, str, str, str], ...] = (
    ("sigma_r", "sigma_r", "Tang et al. 2024, Sec. 4.1",
     "noise level weighting reward moves (report's sigma_r, default 1)"),
    ("sigma_c", "sigma_c", "Tang et al. 2024, Sec. 4.1",
     "noise level weighting cost moves (report's sigma_c, default 0.5)"),
    ("optimal_support", "I*", "Tang et al. 2024, Assumption 1",
     "optimal basis: true arms and slacks K + l (0-based columns)"),
    ("infeasibility_gap", "Delta_0^2", "Tang et al. 2024, eq. (11)",
     "least cost move making I* singular or infeasible"),
    ("bases", "bases J", "Tang et al. 2024, Sec. 4.1",
     "every basis (L+1 sorted columns), the rows of cbmai.basis_gaps"),
    ("basis_gaps", "Delta_J^2", "Tang et al. 2024, eq. (9)",
     "least move making basis J feasible and at least as good as I* (attained by a witness)"),
    ("arm_gaps", "Delta_a^2", "Tang et al. 2024, eq. (10)", "min over bases J containing column a of Delta_J^2"),
    ("sorted_arms", "columns by Delta_a^2", "Tang et al. 2024, eq. (10)", "columns in increasing order of Delta_a^2"),
    ("sorted_gaps", "Delta_(i)^2", "Tang et al. 2024, eq. (10)",
     "0 = Delta_(1)^2 = ... = Delta_(L+1)^2 < Delta_(L+2)^2 <= ..."),
    ("consistent_exponent", "(1/2) min(Delta_0^2, Delta_(L+2)^2)", "Tang et al. 2024, Thm 2 (13)",
     "limsup -(1/N) log P(error) of every consistent algorithm"),
    ("uslp_exponent", "USLP exponent", "Tang et al. 2024, Thm 2 (14)",
     "(13) / K: USLP's error exponent is at most this"),
    ("sfsr_exponent", "SFSR exponent", "Tang et al. 2024, eq. (15)",
     "SFSR's liminf -(1/N) log P(error) is at least this"),
)


def _cbmai_measures(context: ReportContext) -> list[Measure]:
    r"""The hardness of the CBMAI instance ``context.cbmai`` (Tang, Jain, Nayyar, Nuzzo 2024, Section 4.1).

    From :func:`allocopt.cbmai.cbmai_hardness` with ``context.sigma_r`` and ``context.sigma_c`` when given (else
    that function's defaults, the paper's experiments: :math:`\sigma_r = 1`, :math:`\sigma_c = 0.5`)."""
    if context.cbmai is None:
        raise MeasureNotApplicable(
            "a CBMAI instance is not described by theta and k; pass one as "
            "report(..., cbmai=allocopt.CBMAIProblem(rewards, costs, bounds))"
        )
    from ..cbmai import cbmai_hardness  # here, not at the top: importing allocopt.complexity stays cheap

    noise = {name: value for name, value in (("sigma_r", context.sigma_r), ("sigma_c", context.sigma_c))
             if value is not None}
    try:
        hardness = cbmai_hardness(context.cbmai, **noise)
    except InvalidInstanceError as error:
        raise MeasureNotApplicable(f"the CBMAI instance has no hardness gaps: {error}") from error
    out = GroupBuilder(GROUP_CBMAI)
    for name, symbol, source, bounds in _CBMAI_MEASURES:
        value = getattr(hardness, name)
        out.add(f"cbmai.{name}", symbol, np.array(value) if isinstance(value, tuple) else value, source, bounds)
    return out.measures


CBMAI_PROVIDER = MeasureProvider(GROUP_CBMAI, _cbmai_measures)
