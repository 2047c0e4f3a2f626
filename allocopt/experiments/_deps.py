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

from .._deps import DASK_EXTRA, EXPERIMENTS_EXTRA, PLOT_EXTRA, require

__all__ = ["require", "toml_reader", "EXPERIMENTS_EXTRA", "PLOT_EXTRA", "DASK_EXTRA"]


def toml_reader() -> ModuleType:
    """:mod:`tomllib` (Python >= 3.11) or its backport ``tomli``."""
    if sys.version_info >= (3, 11):
        return importlib.import_module("tomllib")
    return require("tomli", "reading a TOML spec")
