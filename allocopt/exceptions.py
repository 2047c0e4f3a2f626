"""Exceptions raised by allocopt.

Every error caused by user input derives from :class:`InvalidArgumentError`, which is also a
:class:`ValueError`, so that ``except ValueError`` keeps working for callers that do not know allocopt.
"""

from __future__ import annotations

__all__ = [
    "AllocoptError",
    "InvalidArgumentError",
    "InvalidInstanceError",
    "SolverError",
    "MissingDependencyError",
    "PerformanceWarning",
]


class AllocoptError(Exception):
    """Base class of every exception raised by allocopt."""


class InvalidArgumentError(AllocoptError, ValueError):
    """An argument does not satisfy its documented requirement.

    The message names the function, the argument, the requirement and the value received.
    """


class InvalidInstanceError(InvalidArgumentError):
    """A bandit instance is not well posed (for example a tie at the top-k boundary)."""


class SolverError(AllocoptError, RuntimeError):
    """A numerical solver failed to produce an answer it could vouch for."""


class MissingDependencyError(AllocoptError, ImportError):
    """An optional dependency needed by the requested feature is not installed."""


class PerformanceWarning(UserWarning):
    """Something runs correctly but on a slower path than the user may expect (e.g. a subclass of a compiled rule
    that overrides its step without a compiled step of its own runs the Python step)."""
