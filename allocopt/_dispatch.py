"""One dispatch mechanism for every solver entry point: ``method=`` names mapped to lazily imported modules.

Each method lives in its own private module, which defines

* ``solve(...)`` - the implementation; every method of one registry has the same signature, and
* ``OPTIONS`` - a mapping from each keyword option the method accepts to its default.

A :class:`MethodRegistry` validates the method name (listing the valid ones in the error), imports the module
only when the method is used (optional dependencies such as CVXPY or PuLP stay optional), and rejects unknown
options with a message naming the valid ones.

Examples
--------
>>> registry = MethodRegistry("solve_cbmai", {"enumerate": "allocopt.cbmai._enumerate",
...                                           "pulp": "allocopt.cbmai._pulp"})
>>> registry.names
('enumerate', 'pulp')
>>> registry.method_options("pulp")
{'solver': None, 'verbose': False}
>>> registry.resolve("enumerate", {"solver": "cbc"})
Traceback (most recent call last):
...
allocopt.exceptions.InvalidArgumentError: solve_cbmai(method='enumerate') got unknown option(s) 'solver'; it takes no options.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._validation import as_choice
from .exceptions import InvalidArgumentError

__all__ = ["MethodRegistry"]


class MethodRegistry:
    """Method names of one entry point, each mapped to the private module that implements it.

    Parameters
    ----------
    func : str
        The public entry point (used in error messages), e.g. ``"solve_cbmai"``.
    modules : mapping of str to str
        Method name -> importable module path; the module defines ``OPTIONS`` and the implementation.
    entry : str, default "solve"
        Name of the implementation inside each module.
    """

    def __init__(self, func: str, modules: Mapping[str, str], *, entry: str = "solve") -> None:
        if not modules:
            raise InvalidArgumentError(f"The 'modules' parameter of MethodRegistry must name at least one method. "
                                       f"Got {dict(modules)!r} instead.")
        self.func = func
        self.entry = entry
        self._modules = dict(modules)
        self._loaded: dict[str, ModuleType] = {}  # the modules imported so far (a call's dispatch is a lookup)

    @property
    def names(self) -> tuple[str, ...]:
        """The method names, in registration order."""
        return tuple(self._modules)

    def __contains__(self, name: object) -> bool:
        return name in self._modules

    def __repr__(self) -> str:
        return f"MethodRegistry({self.func!r}, methods={self.names!r})"

    def check_method(self, method: Any, func: str | None = None) -> str:
        """``method`` when it is a registered name; an ``InvalidArgumentError`` listing the valid names otherwise."""
        if type(method) is str and method in self._modules:
            return method
        return as_choice(method, func or self.func, "method", self.names)

    def _import(self, name: str) -> ModuleType:
        module = self._loaded.get(name)
        if module is None:
            module = self._loaded[name] = importlib.import_module(self._modules[name])
        return module

    def module(self, method: Any) -> ModuleType:
        """The (lazily imported) module implementing ``method``."""
        return importlib.import_module(self._modules[self.check_method(method)])

    def method_options(self, method: Any) -> dict[str, Any]:
        """The options accepted by ``method`` with their defaults (a fresh dict)."""
        name = as_choice(method, "method_options", "method", self.names)
        return dict(importlib.import_module(self._modules[name]).OPTIONS)

    def check_options(self, method: str, module: ModuleType, options: Mapping[str, Any], func: str | None = None
                      ) -> None:
        """Raise an ``InvalidArgumentError`` naming the unknown options and the valid ones (and ``func``, the
        public function called, default the registry's)."""
        unknown = sorted(set(options) - set(module.OPTIONS))
        if unknown:
            valid = (f"valid options are {', '.join(map(repr, module.OPTIONS))}." if module.OPTIONS
                     else "it takes no options.")
            raise InvalidArgumentError(
                f"{func or self.func}(method={method!r}) got unknown option(s) {', '.join(map(repr, unknown))}; "
                f"{valid}")

    def resolve(self, method: Any, options: Mapping[str, Any], func: str | None = None
                ) -> tuple[str, Callable[..., Any]]:
        """Validate ``method`` and ``options``; return the method name and its implementation. Errors name
        ``func`` (a public function that dispatches through this registry), default the registry's entry point."""
        name = self.check_method(method, func)
        module = self._import(name)
        if options:
            self.check_options(name, module, options, func)
        return name, getattr(module, self.entry)
