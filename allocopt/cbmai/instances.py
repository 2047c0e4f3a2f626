"""The CBMAI reference instances D1P, D2P and D3P of Tang, Jain, Nayyar, Nuzzo (2024), Appendix C, Table 1.

They belong to the CBMAI layer (:meth:`CBMAIProblem.from_reference` builds them);
:data:`allocopt.testing.REFERENCE_INSTANCES` lists them with the other published instances.

Examples
--------
>>> sorted(CBMAI_INSTANCES)
['cbmai-d1p', 'cbmai-d2p', 'cbmai-d3p']
>>> CBMAI_INSTANCES["cbmai-d2p"].expected["support"]
(10, 20, 25)
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from .._reference import ReferenceInstance

__all__ = ["CBMAI_INSTANCES"]

# Appendix C of Tang, Jain, Nayyar, Nuzzo (2024), Table 1, top row. The 24 arms are the combinations of
# c1 in {0.4, ..., 1.4} (table row) and c2 in {0.7, 0.9, 1.1, 1.3} (table column), numbered row by row:
# arm 4 * row + column. Rewards are the table entries in the same order; the bold (optimal) ones give the
# support. Slack l is column 24 + l. K0 = K = 24, sigma_r = 1, sigma_c = 0.5, cbar = (1, 1).
_TABLE_1_COST_1 = (0.4, 0.6, 0.8, 1.0, 1.2, 1.4)
_TABLE_1_COST_2 = (0.7, 0.9, 1.1, 1.3)
_TABLE_1_COSTS = (tuple(c1 for c1 in _TABLE_1_COST_1 for _ in _TABLE_1_COST_2),
                  tuple(c2 for _ in _TABLE_1_COST_1 for c2 in _TABLE_1_COST_2))


def _table_1(name: str, rewards: tuple[tuple[float, ...], ...], support: tuple[int, ...], value: float,
             value_tolerance: float, note: str) -> ReferenceInstance:
    return ReferenceInstance(
        name=name,
        source=f"Tang, Jain, Nayyar, Nuzzo (2024), Appendix C, Table 1 ({name[-3:].upper()}). "
               + note,
        parameters={"rewards": tuple(value for row in rewards for value in row), "costs": _TABLE_1_COSTS,
                    "bounds": (1.0, 1.0), "n_unknown": 24, "sigma_r": 1.0, "sigma_c": 0.5,
                    "budgets": (500, 1000, 2000, 4000, 8000), "n_runs": 5000},
        expected={"support": support, "value": value, "value_tolerance": value_tolerance},
    )


_CBMAI_INSTANCES = (
    _table_1("cbmai-d1p", ((0.88, 0.80, 0.82, 0.66), (0.72, 1.02, 0.70, 0.54), (0.92, 0.74, 0.94, 0.84),
                           (0.76, 0.60, 0.56, 0.86), (0.98, 0.64, 0.68, 0.78), (0.62, 0.96, 0.90, 0.58)),
             (5, 24, 25), 1.02, 5e-13,
             "Bold: arm (0.6, 0.9) alone, both slacks basic; its value is its reward 1.02."),
    _table_1("cbmai-d2p", ((0.08, 0.28, -0.02, 0.22), (0.20, 0.46, 0.54, 0.40), (0.42, 0.52, 0.80, 0.34),
                           (0.92, 0.78, 0.96, 0.70), (0.94, 0.76, 1.10, 0.86), (1.42, 1.16, 1.04, 1.24)),
             (10, 20, 25), 1.006667, 5e-7,
             "Bold: arms (0.8, 1.1) and (1.4, 0.7), cost 2 slack; value 0.80 * 2/3 + 1.42/3 = 1.006667 to six "
             "decimals (the first cost binds)."),
    _table_1("cbmai-d3p", ((1.04, 1.22, 1.28, 1.26), (0.98, 1.22, 1.60, 1.54), (1.26, 1.40, 1.88, 1.84),
                           (1.72, 1.76, 1.64, 1.92), (1.78, 1.70, 1.96, 2.08), (1.94, 2.30, 2.32, 2.50)),
             (10, 12, 21), 1.99, 5e-3,
             "Bold: arms (0.8, 1.1), (1.0, 0.7) and (1.4, 0.9); value 1.99 (weights 0.6, 0.1, 0.3, both costs "
             "binding), stated to two decimals."),
)

CBMAI_INSTANCES: Mapping[str, ReferenceInstance] = MappingProxyType({item.name: item for item in _CBMAI_INSTANCES})
"""Name -> instance, in the order of Table 1."""
