"""Optional dependencies, imported where they are needed: a missing one is a
:class:`~allocopt.exceptions.MissingDependencyError` that names the extra which installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from .exceptions import MissingDependencyError

__all__ = ["require", "EXPERIMENTS_EXTRA", "PLOT_EXTRA", "DASK_EXTRA", "PROGRESS_EXTRA"]

EXPERIMENTS_EXTRA = 'pip install "allocopt[experiments]"'
PLOT_EXTRA = 'pip install "allocopt[plot]"'
DASK_EXTRA = 'pip install "allocopt[dask]"'
PROGRESS_EXTRA = 'pip install "allocopt[progress]"'


def require(module: str, feature: str, install: str = EXPERIMENTS_EXTRA) -> ModuleType:
    """``import module``, or a :class:`~allocopt.exceptions.MissingDependencyError` that names ``feature`` and the
    command that installs it.

    Examples
    --------
    >>> require("json", "reading JSON").__name__
    'json'
    >>> require("no_such_module_here", "the store")
    Traceback (most recent call last):
    ...
    allocopt.exceptions.MissingDependencyError: the store needs no_such_module_here, which is not installed: pip install "allocopt[experiments]"
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingDependencyError(f"{feature} needs {module}, which is not installed: {install}") from error
