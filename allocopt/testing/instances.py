"""Reference bandit instances from published papers, each with where its numbers come from.

An instance records its inputs and the published values that tests and examples compare against, with the
tolerance at which the source states them (usually the number of printed digits).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from .._reference import ReferenceInstance
from .._validation import as_choice
from ..cbmai.instances import CBMAI_INSTANCES

__all__ = ["ReferenceInstance", "REFERENCE_INSTANCES", "get_instance"]


_INSTANCES: tuple[ReferenceInstance, ...] = (
    ReferenceInstance(
        name="topk-example-1",
        source="Wang, Yang, You (2022), Example 1",
        parameters={"theta": (0.51, 0.5, 0.0, -0.01, -0.092), "k": 2, "family": "gaussian", "variance": 0.25},
        expected={
            "psi": (0.2185, 0.2371, 0.2185, 0.2026, 0.1232),
            "psi_tolerance": 5e-5,  # printed to 4 decimals
            "value": 0.0568,
            "value_tolerance": 5e-5,
            # binding pairs C_13 = C_24 = C_25 (1-based) and the two components {1,3}, {2,4,5}
            "binding_pairs": ((0, 2), (1, 3), (1, 4)),
            "components": (((0,), (2,)), ((1,), (3, 4))),
        },
    ),
    ReferenceInstance(
        name="topk-figure-3-bernoulli",
        source="Wang, Yang, You (2022), Section D (Figure 3, right): top-3 of a Bernoulli bandit",
        parameters={"theta": (0.8, 0.6, 0.6, 0.4, 0.4, 0.4, 0.2, 0.2, 0.2, 0.2), "k": 3, "family": "bernoulli"},
        expected={},
    ),
    ReferenceInstance(
        name="topk-small-gamma-bernoulli",
        source=("relative-accuracy check of the CVXPY oracle on a tiny Gamma*: T* = 14368.69 to 0.01, "
                "certified by the solvers' optimality gaps (CVXPY at default settings, unscaled, returns 14368.92)"),
        parameters={"theta": (0.3, 0.21, 0.2, 0.19, 0.18), "k": 2, "family": "bernoulli"},
        expected={"characteristic_time": 14368.69, "characteristic_time_tolerance": 0.01},
    ),
    ReferenceInstance(
        name="topk-experiments-gaussian-20",
        source="Wang, Yang, You (2022), Section 5: theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4, k = 5",
        parameters={"theta": tuple(1 - i / 20 for i in range(20)), "k": 5, "family": "gaussian", "variance": 0.25},
        expected={},
    ),
)

_INSTANCES = _INSTANCES + tuple(CBMAI_INSTANCES.values())

REFERENCE_INSTANCES: Mapping[str, ReferenceInstance] = MappingProxyType({item.name: item for item in _INSTANCES})


def get_instance(name: str) -> ReferenceInstance:
    """The reference instance called ``name`` (see :data:`REFERENCE_INSTANCES` for the list)."""
    return REFERENCE_INSTANCES[as_choice(name, "get_instance", "name", REFERENCE_INSTANCES)]
