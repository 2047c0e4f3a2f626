"""The optional dependencies of :mod:`allocopt.experiments`, imported where they are needed.

The store and the tables need pandas and pyarrow (``pip install "allocopt[experiments]"``), a spec file needs a
TOML reader (:mod:`tomllib` from Python 3.11, ``tomli`` before), the report needs matplotlib
(``pip install "allocopt[plot]"``) and a Dask cluster needs ``dask.distributed`` (``pip install "allocopt[dask]"``).
Running the chunks themselves needs none of them, so Dask workers need only allocopt.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from ..exceptions import MissingDependencyError

__all__ = ["require", "toml_reader", "EXPERIMENTS_EXTRA", "PLOT_EXTRA", "DASK_EXTRA"]

EXPERIMENTS_EXTRA = 'pip install "allocopt[experiments]"'
PLOT_EXTRA = 'pip install "allocopt[plot]"'
DASK_EXTRA = 'pip install "allocopt[dask]"'


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


def toml_reader() -> ModuleType:
    """:mod:`tomllib` (Python >= 3.11) or its backport ``tomli``."""
    if sys.version_info >= (3, 11):
        return importlib.import_module("tomllib")
    return require("tomli", "reading a TOML spec")
