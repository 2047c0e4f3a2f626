"""The top-k optimal allocation layer: problem, solvers, certificate and structure checks."""

from .batch import TopKBatchResult, solve_topk_batch
from .certificate import Certificate, certify, upper_bound
from .kkt import TopKCertificate, check_topk
from .problem import KINDS, TopKProblem
from .result import IterationHistory, TopKResult
from .solve import DEFAULT_METHOD, TOPK_METHODS, characteristic_time, method_options, solve_topk

__all__ = [
    "KINDS",
    "TopKProblem",
    "TopKResult",
    "IterationHistory",
    "Certificate",
    "certify",
    "upper_bound",
    "TopKCertificate",
    "check_topk",
    "solve_topk",
    "solve_topk_batch",
    "TopKBatchResult",
    "characteristic_time",
    "method_options",
    "TOPK_METHODS",
    "DEFAULT_METHOD",
]
