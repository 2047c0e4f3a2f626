"""Reference bandit algorithms built on the optimisation layers.

CBMAI (Tang, Jain, Nayyar, Nuzzo), fixed budget, on simulated Gaussian rewards and costs:

* :func:`sfsr` - SFSR (IV scores) and SFSR-L (Lagrangian scores), Algorithm 1 with the budget schedule (7);
* :func:`uslp` - the uniform-sampling baseline;
* :func:`cbmai_error_rate` - error rate over many independent runs, with a confidence interval.
"""

from ._cbmai_common import CBMAIRunResult
from .cbmai_error_rate import CBMAI_ALGORITHMS, ErrorRate, cbmai_error_rate
from .sfsr import SFSR_SCORES, BudgetSchedule, sfsr, sfsr_schedule
from .uslp import uslp

__all__ = [
    "CBMAI_ALGORITHMS",
    "SFSR_SCORES",
    "BudgetSchedule",
    "CBMAIRunResult",
    "ErrorRate",
    "cbmai_error_rate",
    "sfsr",
    "sfsr_schedule",
    "uslp",
]
