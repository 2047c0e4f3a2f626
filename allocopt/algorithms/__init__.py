"""Reference bandit algorithms built on the optimisation layers.

CBMAI (Tang, Jain, Nayyar, Nuzzo), fixed budget, on simulated Gaussian rewards and costs:

* :func:`sfsr` - SFSR (IV scores) and SFSR-L (Lagrangian scores), Algorithm 1 with the budget schedule (7);
* :func:`uslp` - the uniform-sampling baseline;
* :func:`cbmai_error_rate` - error rate over many independent runs, with a confidence interval.

Sequential identification engine (top-k, fixed confidence and fixed budget):

* :func:`identify`, :func:`identify_fixed_budget` - the runners (Chernoff stopping, common random numbers,
  vectorised over replications, parallel through :func:`allocopt.simulate.monte_carlo`);
* sampling rules :class:`KKTTS` (``"kkt-ts"``), :class:`TrackAndStop` (``"track-and-stop"``, ``"fwga-ts"``)
  and :class:`Uniform` (``"uniform"``), and the protocol a user's own rule follows
  (:mod:`allocopt.algorithms.protocol`).
"""

from ._cbmai_common import CBMAIRunResult
from .cbmai_error_rate import CBMAI_ALGORITHMS, ErrorRate, cbmai_error_rate
from .sfsr import SFSR_SCORES, BudgetSchedule, sfsr, sfsr_schedule
from .uslp import uslp
from .identify import identify, identify_fixed_budget
from .at_lucb import ATLUCB
from .kkt_ts import KKTTS
from .kl_racing import KLElimination
from .lucb import KLLUCB, LUCB, LilCLUCB, LilLUCB, LilRandLUCB, LUCBPlusPlus
from .protocol import POLICIES, BatchPull, BatchPullEach, Pull, PullEach, RuleContext, RunView, SamplingRule, register_policy
from .results import FixedBudgetResult, IdentificationResult
from .stopping import HeuristicThreshold, TheoreticalThreshold, glr_statistic
from .track_and_stop import TrackAndStop
from .ugape import UGapE
from .uniform import Uniform

__all__ = [
    "POLICIES",
    "BatchPull",
    "BatchPullEach",
    "FixedBudgetResult",
    "HeuristicThreshold",
    "IdentificationResult",
    "ATLUCB",
    "KKTTS",
    "KLElimination",
    "KLLUCB",
    "LUCB",
    "LUCBPlusPlus",
    "LilCLUCB",
    "LilLUCB",
    "LilRandLUCB",
    "Pull",
    "PullEach",
    "RuleContext",
    "RunView",
    "SamplingRule",
    "TheoreticalThreshold",
    "TrackAndStop",
    "UGapE",
    "Uniform",
    "glr_statistic",
    "identify",
    "identify_fixed_budget",
    "register_policy",
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
