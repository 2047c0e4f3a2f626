"""Reference bandit algorithms built on the optimisation layers.

CBMAI (Tang, Jain, Nayyar, Nuzzo), fixed budget, on simulated Gaussian rewards and costs:

* :func:`sfsr` - SFSR (IV scores) and SFSR-L (Lagrangian scores), Algorithm 1 with the budget schedule (7);
* :func:`uslp` - the uniform-sampling baseline;
* :func:`cbmai_error_rate` - error rate over many independent runs, with a confidence interval.

Sequential identification engine (top-k, fixed confidence and fixed budget):

* :func:`identify`, :func:`identify_fixed_budget` - the runners (Chernoff stopping, common random numbers,
  vectorised over replications, parallel through :func:`allocopt.simulate.monte_carlo`);
* :func:`run_chunk` - replications ``[start, stop)`` of one (problem, rule, setting) cell and their records
  (:class:`ChunkRecords`): the unit the runners and :mod:`allocopt.experiments` are made of;
* :func:`compare_policies` - several rules on one instance, paired by common random numbers (figures in
  :mod:`allocopt.algorithms.plotting`);
* sampling rules :class:`KKTTS` (``"kkt-ts"``), :class:`TrackAndStop` (``"track-and-stop"``, ``"fwga-ts"``)
  and :class:`Uniform` (``"uniform"``), and the protocol a user's own rule follows
  (:mod:`allocopt.algorithms.engine.protocol`);
* the other rules of Wang, Yang, You (2022): :class:`DTTS` (``"dt-ts"``), :class:`BTS` (``"bts"``),
  :class:`OCBA` (OCBAss ``"ocba-balanced"``, OCBASS ``"ocba-unbalanced"``) and the top-two rules for k = 1
  :class:`TTTS` (``"ttts"``), :class:`T3C` (``"t3c"``), :class:`TTEI` (``"ttei"``);
* posterior convergence (k = 1): :func:`posterior_error_probability`, :func:`posterior_convergence` and
  :func:`posterior_error_paths`.
* fixed-budget elimination rules for the top M: :class:`NSAR` (``"nsar"``; ``"sar"`` is its p = 1 case,
  :func:`SAR`), :class:`SuccessiveRejects` (``"successive-rejects"``) and :class:`SequentialHalving`
  (``"sequential-halving"``); :class:`OptMAI` (``"optmai"``, Zhou, Chen, Li 2014) for a small aggregate regret.

PAC identification (epsilon-top-k by the aggregate regret):

* :func:`pac_identify` runs :class:`AdaptiveTopK` (``"adaptive-topk"``); its fixed-budget conversion is
  :class:`AdaptiveTopKFixedBudget` (``"adaptive-topk-budget"``).
"""

from .cbmai._common import CBMAIRunResult
from .cbmai.error_rate import CBMAI_ALGORITHMS, ErrorRate, cbmai_error_rate
from .cbmai.sfsr import SFSR_SCORES, BudgetSchedule, sfsr, sfsr_schedule
from .cbmai.uslp import uslp
from .chunks import ChunkRecords, run_chunk
from .identify import identify, identify_fixed_budget
from .compare import PairedDifference, PolicyComparison, compare_policies
from .rules.kkt_ts import KKTTS
from .rules.bts import BTS
from .rules.dt_ts import DTTS
from .rules.ocba import OCBA
from .rules.top_two import T3C, TTEI, TTTS
from .rules.at_lucb import ATLUCB
from .rules.kl_racing import KLElimination
from .rules.lucb import KLLUCB, LUCB, LilCLUCB, LilLUCB, LilRandLUCB, LUCBPlusPlus
from .engine.protocol import POLICIES, BatchPull, BatchPullEach, Pull, PullEach, RuleContext, RunView, SamplingRule, register_policy
from .posterior import (PosteriorConvergenceResult, PosteriorPaths, posterior_convergence, posterior_error_paths,
                        posterior_error_probability)
from .results import FixedBudgetResult, IdentificationResult, PACResult
from .engine.stopping import HeuristicThreshold, TheoreticalThreshold, glr_statistic
from .rules.track_and_stop import TrackAndStop
from .rules.ugape import UGapE
from .rules.uniform import Uniform
from .rules.elimination import (NSAR, SAR, SequentialHalving, SuccessiveRejects, nsar_schedule, sequential_halving_schedule,
                          successive_rejects_schedule)
from .rules.optmai import OPTMAI_BETA, OptMAI, OptMAIRounds, optmai_rounds
from .rules.adaptive_topk import AdaptiveTopK, AdaptiveTopKFixedBudget, adaptive_topk_round_pulls
from .rules.clucb_pac import CLUCBPAC, CLUCBPACFixedBudget
from .pac import pac_identify

from .._rng import random_candidate

__all__ = [
    "random_candidate",
    "OPTMAI_BETA",
    "OptMAI",
    "OptMAIRounds",
    "optmai_rounds",
    "POLICIES",
    "PosteriorConvergenceResult",
    "PosteriorPaths",
    "posterior_convergence",
    "posterior_error_paths",
    "posterior_error_probability",
    "BatchPull",
    "BatchPullEach",
    "FixedBudgetResult",
    "HeuristicThreshold",
    "IdentificationResult",
    "ATLUCB",
    "KKTTS",
    "BTS",
    "DTTS",
    "OCBA",
    "T3C",
    "TTEI",
    "TTTS",
    "KLElimination",
    "KLLUCB",
    "LUCB",
    "LUCBPlusPlus",
    "LilCLUCB",
    "CLUCBPAC",
    "CLUCBPACFixedBudget",
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
    "NSAR",
    "SAR",
    "SuccessiveRejects",
    "SequentialHalving",
    "nsar_schedule",
    "successive_rejects_schedule",
    "sequential_halving_schedule",
    "AdaptiveTopK",
    "AdaptiveTopKFixedBudget",
    "adaptive_topk_round_pulls",
    "pac_identify",
    "PACResult",
    "glr_statistic",
    "identify",
    "run_chunk",
    "ChunkRecords",
    "compare_policies",
    "PolicyComparison",
    "PairedDifference",
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
