"""allocopt: exact, certified optimisation subproblems of pure-exploration bandits.

Layers (each depends only on the ones above it):

* :mod:`allocopt.families` - one-parameter exponential families (kl, natural parameter, A, A*).
* :mod:`allocopt.topk` - the top-k optimal allocation problem, its solvers and its KKT certificate.
* :mod:`allocopt.cbmai` - the constrained best-mixed-arm linear program, its bases and scores.
* :mod:`allocopt.complexity` - complexity measures of bandit instances.
* :mod:`allocopt.algorithms` - reference bandit algorithms built on the layers above.
* :mod:`allocopt.experiments` - experiments as data: specs, crash-safe stores of per-run records, tables, reports.

Importing :mod:`allocopt` is cheap: heavy dependencies (cvxpy, pulp, matplotlib) are imported by the
functions that need them. The public names below are resolved lazily on first access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # exceptions
    "AllocoptError": "allocopt.exceptions",
    "InvalidArgumentError": "allocopt.exceptions",
    "InvalidInstanceError": "allocopt.exceptions",
    "SolverError": "allocopt.exceptions",
    "MissingDependencyError": "allocopt.exceptions",
    # families
    "ExponentialFamily": "allocopt.families",
    "Gaussian": "allocopt.families",
    "Bernoulli": "allocopt.families",
    "Poisson": "allocopt.families",
    "Exponential": "allocopt.families",
    "Gamma": "allocopt.families",
    "get_family": "allocopt.families",
    "FAMILIES": "allocopt.families",
    # top-k layer
    "TopKProblem": "allocopt.topk",
    "TopKResult": "allocopt.topk",
    "TopKCertificate": "allocopt.topk",
    "solve_topk": "allocopt.topk",
    "solve_topk_batch": "allocopt.topk",
    "TopKBatchResult": "allocopt.topk",
    "check_topk": "allocopt.topk",
    "characteristic_time": "allocopt.topk",
    "TOPK_METHODS": "allocopt.topk",
    # CBMAI layer
    "CBMAIProblem": "allocopt.cbmai",
    "CBMAIResult": "allocopt.cbmai",
    "CBMAI_METHODS": "allocopt.cbmai",
    "CBMAIHardness": "allocopt.cbmai",
    "BasisEnumeration": "allocopt.cbmai",
    "enumerate_bases": "allocopt.cbmai",
    "solve_cbmai": "allocopt.cbmai",
    "iv_scores": "allocopt.cbmai",
    "lagrangian_scores": "allocopt.cbmai",
    "cbmai_hardness": "allocopt.cbmai",
    # numba's disk cache filled ahead of time
    "precompile": "allocopt.testing.precompile",
    "PrecompileResult": "allocopt.testing.precompile",
}

_SUBMODULES = ("families", "topk", "cbmai", "complexity", "algorithms", "simulate", "testing", "exceptions",
               "experiments")

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"allocopt.{name}")
    raise AttributeError(f"module 'allocopt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(_SUBMODULES))


if TYPE_CHECKING:  # pragma: no cover - static type checkers see the eager imports
    from .exceptions import (AllocoptError, InvalidArgumentError, InvalidInstanceError, MissingDependencyError,
                             SolverError)
    from .families import FAMILIES, Bernoulli, Exponential, ExponentialFamily, Gamma, Gaussian, Poisson, get_family
    from .topk import (TOPK_METHODS, TopKBatchResult, TopKCertificate, TopKProblem, TopKResult, characteristic_time,
                       check_topk, solve_topk, solve_topk_batch)
    from .cbmai import (CBMAI_METHODS, BasisEnumeration, CBMAIHardness, CBMAIProblem, CBMAIResult, cbmai_hardness,
                        enumerate_bases, iv_scores, lagrangian_scores, solve_cbmai)
    from .testing.precompile import PrecompileResult, precompile
