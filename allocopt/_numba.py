r"""Lazy, thread-safe numba compilation: one helper for every compiled module of the package.

A compiled module keeps its kernels as plain Python functions and builds them on first use, so that importing
allocopt never imports numba, and a process that never runs a compiled path never loads its machine code.
:func:`compile_once` describes what a module compiles; calling the object it returns compiles it the first time
and returns the same mapping of compiled kernels every time after.

Every function is compiled with :data:`NJIT_OPTIONS`:

- ``cache=True``: numba keeps the machine code on disk between processes (in ``NUMBA_CACHE_DIR`` if set, else in
  ``__pycache__`` beside the package's files, else in the user's cache folder; where none of these can be written,
  a read-only install run without a writable home, :func:`numba_njit` points numba at a fresh temporary folder,
  with one :class:`~allocopt.exceptions.PerformanceWarning`: each process then compiles once);
- ``nogil=True``: the kernels release the GIL, so that thread pools run them side by side;
- ``error_model="numpy"``: IEEE division (``inf``, ``nan``) as in numpy, without Python's zero-division checks
  (which raise, and keep the pair loops from vectorising).

A numba function calls another jitted function by its global name, resolved when the caller is compiled: such
callees are *rebound*, i.e. the module's global name is replaced by the compiled function, callees before their
callers; functions that other compiled modules define are compiled there first and *shared* (copied into this
module's globals under the same name).

The compiled on/off switch lives here too (the lowest layer, which every layer may read): :data:`AVAILABLE`,
:func:`compiled_enabled` and the context manager :func:`compiled_kernels`. Where it is off, the package takes its
numpy and Python specification paths and calls no compiled kernel.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
import types
from types import ModuleType
from typing import Any, Callable, Iterator, Mapping, Sequence, Union

__all__ = ["NJIT_OPTIONS", "AVAILABLE", "compiled_enabled", "compiled_kernels", "CompiledOnce", "compile_once",
           "kernel", "inlined_kernel", "kernel_copy", "compile_kernels", "numba_njit",
           "ensure_cache_location", "invalidate_stale_caches", "SOURCES_DIGEST", "cache_directory",
           "compiled_functions"]

NJIT_OPTIONS: Mapping[str, Any] = {"cache": True, "nogil": True, "error_model": "numpy"}
"""The options of ``numba.njit`` for every compiled function of the package."""

Rebinding = Union[str, tuple[str, str]]

AVAILABLE = importlib.util.find_spec("numba") is not None
"""Whether numba is installed (a dependency; the Python specifications keep everything working where it is not)."""

_SWITCH = {"enabled": AVAILABLE}


def compiled_enabled() -> bool:
    """Whether the compiled kernels are used now (the engine's loop, the solvers' fast paths)."""
    return _SWITCH["enabled"]


@contextlib.contextmanager
def compiled_kernels(enabled: bool):
    """Context manager: use (``True``, where numba is available) or bypass (``False``) the compiled kernels; the
    Python specifications run instead.

    Examples
    --------
    >>> with compiled_kernels(False):
    ...     compiled_enabled()
    False
    """
    previous = _SWITCH["enabled"]
    _SWITCH["enabled"] = bool(enabled) and AVAILABLE
    try:
        yield
    finally:
        _SWITCH["enabled"] = previous


_CACHE_CHECK = {"done": False}


def _writable(directory: str) -> bool:
    """Whether a file can be created in ``directory`` (created if missing)."""
    import os
    import tempfile

    try:
        os.makedirs(directory, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory):
            return True
    except OSError:
        return False


def ensure_cache_location() -> None:
    """Make sure numba can cache the package's functions (see the module docstring): where ``NUMBA_CACHE_DIR`` is
    set but cannot be written, or is not set and neither the package's ``__pycache__`` nor the user's cache folder
    can be written, numba's cache moves to a new temporary folder (numba would otherwise refuse ``cache=True``: "no
    locator available")."""
    if _CACHE_CHECK["done"]:
        return
    import os
    import tempfile
    import warnings

    from numba.core import config
    from numba.misc.appdirs import AppDirs

    package = os.path.dirname(os.path.abspath(__file__))
    chosen = str(getattr(config, "CACHE_DIR", "") or "")
    if chosen:  # numba ignores a NUMBA_CACHE_DIR it cannot write and then finds no locator either
        usable = _writable(chosen)
        where = f"in NUMBA_CACHE_DIR ({chosen})"
    else:
        usable = (_writable(os.path.join(package, "__pycache__"))
                  or _writable(AppDirs(appname="numba", appauthor=False).user_cache_dir))
        where = f"beside allocopt ({package}) nor in the user's cache folder"
    if not usable:
        from .exceptions import PerformanceWarning

        folder = tempfile.mkdtemp(prefix="allocopt-numba-")
        setattr(config, "CACHE_DIR", folder)
        warnings.warn(f"numba cannot write its cache {where}: compiled code is cached in {folder} for this process "
                      "only (set NUMBA_CACHE_DIR to a writable folder to keep it)", PerformanceWarning,
                      stacklevel=3)
    invalidate_stale_caches(package)
    _CACHE_CHECK["done"] = True


SOURCES_DIGEST = "allocopt-kernel-sources.sha256"
"""The file, in the cache folder of the package's top folder, where :func:`invalidate_stale_caches` keeps the digest
of the sources that the cached machine code was built from."""


def _cache_base(package: str) -> str | None:
    """Where numba's locators put the package's compiled code, in their order: ``NUMBA_CACHE_DIR`` if set, None for
    ``__pycache__`` beside each source if the package's can be written, else the user's cache folder."""
    from numba.core import config
    from numba.misc.appdirs import AppDirs

    chosen = str(getattr(config, "CACHE_DIR", "") or "")
    if chosen:
        return chosen
    if _writable(os.path.join(package, "__pycache__")):
        return None
    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def _cache_folders(package: str) -> list[str]:
    """numba's cache folder for each folder of ``package`` that holds sources (the package's own first)."""
    from numba.core.caching import UserProvidedCacheLocator

    folders = sorted({root for root, _, names in os.walk(package)
                      if "__pycache__" not in root and any(name.endswith(".py") for name in names)})
    base = _cache_base(package)
    if base is None:
        return [os.path.join(folder, "__pycache__") for folder in folders]
    return [os.path.join(base, UserProvidedCacheLocator.get_suitable_cache_subpath(os.path.join(folder, "x.py")))
            for folder in folders]


def _sources_digest(package: str) -> str:
    """sha256 of the paths and contents of every source file of ``package``."""
    import hashlib

    digest = hashlib.sha256()
    for source in sorted(os.path.relpath(os.path.join(root, name), package)
                         for root, _, names in os.walk(package) for name in names if name.endswith(".py")):
        with open(os.path.join(package, source), "rb") as handle:
            digest.update(source.encode() + b"\0" + handle.read() + b"\0")
    return digest.hexdigest()


def invalidate_stale_caches(package: str) -> bool:
    """Remove numba's cached machine code of ``package`` when any of its sources changed since it was cached.

    numba checks a cached function against the contents of its own file only, so a kernel whose callee in another
    file changed (a new version installed over the cache, a checkout, an editable install) would run its old
    inlined copy of that callee: silently the old behaviour. Here the digest of all of the package's sources is
    compared with the one saved in the cache (:data:`SOURCES_DIGEST`); where it differs, the package's cache files
    (``*.nbi``, ``*.nbc``) are removed, so that every kernel is compiled again, and the new digest is saved.
    Returns whether the caches were removed (False where they were current or cannot be written). A user's own
    kernels that call the package's kernels are not covered: their cache follows their own file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "kernels.py").write_text("x = 1")
    >>> invalidate_stale_caches(str(folder)), invalidate_stale_caches(str(folder))
    (True, False)
    """
    import glob
    import tempfile

    digest, folders = _sources_digest(package), _cache_folders(package)
    marker = os.path.join(folders[0], SOURCES_DIGEST)
    try:
        with open(marker, encoding="ascii") as handle:
            if handle.read().strip() == digest:
                return False
    except OSError:
        pass
    try:
        for folder in folders:
            for cached in glob.glob(os.path.join(folder, "*.nb[ic]")):
                os.remove(cached)
        os.makedirs(folders[0], exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folders[0], delete=False, encoding="ascii") as saved:
            saved.write(digest + "\n")
        os.replace(saved.name, marker)
    except OSError:
        return False
    return True


def cache_directory() -> str:
    """Where numba keeps the package's compiled code: ``NUMBA_CACHE_DIR`` (or the temporary folder chosen by
    :func:`ensure_cache_location`), else ``__pycache__`` beside each of the package's modules, else the user's cache
    folder."""
    ensure_cache_location()
    package = os.path.dirname(os.path.abspath(__file__))
    base = _cache_base(package)
    return os.path.join(package, "**", "__pycache__") if base is None else base


_COMPILED: list[Any] = []
_COMPILED_LOCK = threading.Lock()


def compiled_functions() -> list[Any]:
    """Every ``numba`` dispatcher the package has made in this process (by :func:`numba_njit`), in order: each
    one's ``stats.cache_hits`` and ``stats.cache_misses`` count, per signature, the machine code loaded from numba's
    disk cache and the code compiled."""
    with _COMPILED_LOCK:
        return list(_COMPILED)


def numba_njit(**options: Any):
    """``numba.njit`` with :data:`NJIT_OPTIONS` (and ``options``), once numba's cache has a place
    (:func:`ensure_cache_location`); the dispatchers it makes are listed by :func:`compiled_functions`."""
    import numba

    ensure_cache_location()
    decorate = numba.njit(**NJIT_OPTIONS, **options)

    def njit(function: Callable) -> Any:
        dispatcher = decorate(function)
        with _COMPILED_LOCK:
            _COMPILED.append(dispatcher)
        return dispatcher

    return njit


class CompiledOnce:
    """The compiled kernels of one module, built by the first call (see :func:`compile_once`)."""

    def __init__(self, namespace: dict[str, Any], needs: Sequence[Callable[[], object]],
                 shared: Sequence[tuple[ModuleType, Sequence[str]]], rebind: Sequence[Rebinding],
                 kernels: Mapping[str, str]) -> None:
        self._namespace = namespace
        self._needs = tuple(needs)
        self._shared = tuple((module, tuple(names)) for module, names in shared)
        self._rebind = tuple((item, item) if isinstance(item, str) else tuple(item) for item in rebind)
        self._kernels_spec = dict(kernels)
        self._lock = threading.Lock()
        # None until every function is compiled and rebound: one assignment publishes the finished mapping,
        # so a thread that reads it outside the lock never sees a half-built one
        self._kernels: dict[str, Any] | None = None

    @property
    def compiled(self) -> bool:
        """Whether the kernels have been built (in this process)."""
        return self._kernels is not None

    def __call__(self) -> Mapping[str, Any]:
        kernels = self._kernels
        if kernels is None:
            with self._lock:
                kernels = self._kernels
                if kernels is None:
                    kernels = self._kernels = self._compile()
        return kernels

    def _compile(self) -> dict[str, Any]:
        for need in self._needs:
            need()
        namespace = self._namespace
        for module, names in self._shared:
            for name in names:
                namespace[name] = getattr(module, name)
        njit = numba_njit()
        rebound = {}
        for target, source in self._rebind:  # in this order: callees before their callers
            namespace[target] = rebound[target] = njit(namespace[source])
        return {key: rebound[name] if name in rebound else njit(namespace[name])
                for key, name in self._kernels_spec.items()}


def compile_once(namespace: dict[str, Any], *, needs: Sequence[Callable[[], object]] = (),
                 shared: Sequence[tuple[ModuleType, Sequence[str]]] = (), rebind: Sequence[Rebinding] = (),
                 kernels: Mapping[str, str] | None = None) -> CompiledOnce:
    """Describe a module's lazy compilation; the returned object compiles on its first call, once.

    The first call, under a lock (so that threads calling at once compile once and all get the same kernels),
    imports numba and, in this order:

    1. calls each of ``needs`` (other modules' compilations whose compiled functions this module calls);
    2. copies each ``(module, names)`` of ``shared`` into ``namespace``: ``namespace[name] = module.name``;
    3. compiles each function of ``rebind`` with :data:`NJIT_OPTIONS` and rebinds it in ``namespace``: a name
       ``"f"`` replaces ``f`` by its compiled version, a pair ``("g", "f")`` binds ``g`` to the compiled ``f``;
    4. builds the mapping ``{key: compiled namespace[name]}`` of ``kernels``, reusing the compiled function of a
       rebound name and compiling (without rebinding) any other.

    Every later call returns that same mapping without locking.

    Parameters
    ----------
    namespace : dict
        The module's ``globals()``: the functions are looked up, and rebound, there.
    needs : sequence of callables, optional
        Called first, without arguments (e.g. another module's compiled-kernel getter).
    shared : sequence of (module, names), optional
        Compiled functions of other modules called here by their global names.
    rebind : sequence of str or (str, str), optional
        The functions called by their global names, callees before their callers.
    kernels : mapping of str to str, optional
        The kernels returned by the call, by key, as names in ``namespace``.

    Returns
    -------
    CompiledOnce
        Call it for the mapping of compiled kernels; ``.compiled`` says whether that has happened.

    Examples
    --------
    numba caches only functions defined in a file: a small module written to a temporary folder shows the steps.

    >>> import importlib.util, pathlib, tempfile
    >>> import numpy as np
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "halves.py"
    >>> _ = path.write_text("def _half(x):\\n    return 0.5 * x\\n\\n\\n"
    ...                     "def _sum_of_halves(values):\\n"
    ...                     "    total = 0.0\\n"
    ...                     "    for value in values:\\n"
    ...                     "        total += _half(value)\\n"
    ...                     "    return total\\n")
    >>> spec = importlib.util.spec_from_file_location("halves", path)
    >>> module = importlib.util.module_from_spec(spec)
    >>> spec.loader.exec_module(module)
    >>> lazy = compile_once(module.__dict__, rebind=("_half",), kernels={"sum": "_sum_of_halves"})
    >>> lazy.compiled
    False
    >>> kernels = lazy()
    >>> lazy.compiled, lazy() is kernels, kernels["sum"].targetoptions["nogil"]
    (True, True, True)
    >>> kernels["sum"](np.array([1.0, 3.0])), module._half.py_func(3.0)
    (2.0, 1.5)
    """
    return CompiledOnce(namespace, needs, shared, rebind, {} if kernels is None else kernels)


_KERNELS: list[Callable] = []
_KERNELS_LOCK = threading.Lock()
_DISPATCHERS: dict[Callable, Any] = {}


def kernel(function: Callable) -> Callable:
    """Mark a module-level function as a compiled kernel: it stays a plain Python function (the readable form, and
    what runs without numba) until :func:`compile_kernels` replaces it by its ``numba.njit`` dispatcher in every
    module that holds it as a global (its own and those that imported it), so that the compiled functions that
    call it by name call the compiled one.

    Examples
    --------
    >>> def _twice(x):
    ...     return 2.0 * x
    >>> kernel(_twice)(1.5)
    3.0
    """
    with _KERNELS_LOCK:
        _KERNELS.append(function)
    return function


_INLINED: set[Callable] = set()


def inlined_kernel(function: Callable) -> Callable:
    """A kernel (:func:`kernel`) that numba inlines into its compiled callers (``inline="always"``): for the small
    helpers of a hot loop that take a named tuple of work arrays, where a call passes every array of the tuple (and
    its reference count) each time. The operations, and so the results, are those of the call; the callers take
    longer to compile.

    Examples
    --------
    >>> def _thrice(x):
    ...     return 3.0 * x
    >>> inlined_kernel(_thrice)(1.5)
    4.5
    """
    with _KERNELS_LOCK:
        _INLINED.add(function)
    return kernel(function)


def kernel_copy(function: Callable) -> Callable:
    """A kernel (:func:`kernel`) that runs ``function``'s code with its module's globals: for a plain function that
    Python code also calls (and that must stay plain Python there), or one that another module compiles its own
    way, called by name from compiled code. The copy shares the code object, so there is one implementation.

    Examples
    --------
    >>> def _twice(x):
    ...     return 2.0 * x
    >>> copy = kernel_copy(_twice)
    >>> copy is not _twice, copy(1.5)
    (True, 3.0)
    """
    copy = types.FunctionType(function.__code__, function.__globals__, function.__name__, function.__defaults__,
                              function.__closure__)
    copy.__qualname__ = function.__qualname__
    copy.__module__ = function.__module__
    return kernel(copy)


def compile_kernels() -> None:
    """Replace every function marked by :func:`kernel` by its ``numba.njit`` dispatcher (:data:`NJIT_OPTIONS`) in
    every loaded module that holds it as a global (numba compiles each at its first call, or loads it from its
    cache). Run again after more kernels are marked, it replaces those."""
    with _KERNELS_LOCK:
        fresh = [function for function in _KERNELS if function not in _DISPATCHERS]
        if not fresh:
            return
        import numba

        for function in fresh:  # a function without a source file (a doctest's, an interactive session's) is
            # compiled without numba's disk cache, which needs a file to key on
            options = {"inline": "always"} if function in _INLINED else {}
            njit = (numba_njit(**options) if os.path.isfile(function.__code__.co_filename)
                    else numba.njit(**{**NJIT_OPTIONS, "cache": False, **options}))
            _DISPATCHERS[function] = njit(function)
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for name, value in list(namespace.items()):
                if callable(value) and not isinstance(value, type):
                    try:
                        dispatcher = _DISPATCHERS.get(value)
                    except TypeError:  # an unhashable callable
                        continue
                    if dispatcher is not None:
                        namespace[name] = dispatcher
