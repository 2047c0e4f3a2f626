"""The CBMAI linear-program layer (Tang, Jain, Nayyar, Nuzzo): the LP of the best mixed arm, its bases, the
intersection-value and Lagrangian scores, and the hardness gaps of an instance.

See ``docs/cbmai.md`` for the mathematics.
"""

from .bases import BasisEnumeration, enumerate_bases
from .certificate import LPCertificate
from .hardness import CBMAIHardness, cbmai_hardness
from .problem import CBMAIProblem
from .scores import iv_scores, lagrangian_scores
from .solve import CBMAI_METHODS, Assumption1Report, CBMAIResult, check_assumption_1, method_options, solve_cbmai

__all__ = [
    "CBMAIProblem",
    "BasisEnumeration",
    "enumerate_bases",
    "CBMAI_METHODS",
    "CBMAIResult",
    "Assumption1Report",
    "LPCertificate",
    "solve_cbmai",
    "method_options",
    "check_assumption_1",
    "iv_scores",
    "lagrangian_scores",
    "CBMAIHardness",
    "cbmai_hardness",
]
