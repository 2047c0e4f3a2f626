"""allocopt._numba.compile_once: one compilation under concurrent first calls, the njit options, the order of the
steps and the rebinding of module globals."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import threading
import time

import numba
import numpy as np
import pytest

from allocopt._numba import NJIT_OPTIONS, compile_once

_FUNCTIONS = pathlib.Path(__file__).with_name("compile_once_functions.py")


def _fresh_module():
    """A new module object from compile_once_functions.py (its own globals, none rebound yet)."""
    spec = importlib.util.spec_from_file_location("compile_once_functions", _FUNCTIONS)
    module = importlib.util.module_from_spec(spec)
    # registered as an import does, under the file's own name: numba's cache rebuilds a cached function's
    # environment from the module of that name
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def njit_calls(monkeypatch):
    """Records the options of every ``numba.njit(...)`` call and every function it decorates; each decoration
    sleeps 20 ms so that threads started together are all inside the first call at once."""
    calls: dict[str, list] = {"options": [], "functions": []}
    real_njit = numba.njit

    def recording_njit(*functions, **options):
        if functions:  # numba's own modules decorate with a bare @njit when first imported: not recorded
            return real_njit(*functions, **options)
        calls["options"].append(options)
        decorator = real_njit(**options)

        def decorate(function):
            calls["functions"].append(function.__name__)
            time.sleep(0.02)
            return decorator(function)

        return decorate

    monkeypatch.setattr(numba, "njit", recording_njit)
    return calls


def test_concurrent_first_calls_compile_once_and_share_the_kernels(njit_calls):
    module = _fresh_module()
    lazy = compile_once(module.__dict__, rebind=("_half",), kernels={"sum": "_sum_of_halves"})
    n_threads = 8
    barrier = threading.Barrier(n_threads)
    results: list = [None] * n_threads

    def first_call(index):
        barrier.wait()
        results[index] = lazy()

    threads = [threading.Thread(target=first_call, args=(index,)) for index in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(result is results[0] for result in results)
    # one njit(...) call and one decoration per function, whatever the number of threads
    assert len(njit_calls["options"]) == 1
    assert njit_calls["functions"] == ["_half", "_sum_of_halves"]
    assert lazy() is results[0] and len(njit_calls["options"]) == 1


def test_nothing_is_compiled_before_the_first_call(njit_calls):
    module = _fresh_module()
    pure_half = module._half
    lazy = compile_once(module.__dict__, rebind=("_half",), kernels={"sum": "_sum_of_halves"})
    assert not lazy.compiled and njit_calls["options"] == [] and module._half is pure_half
    lazy()
    assert lazy.compiled


def test_the_njit_options_are_the_packages(njit_calls):
    module = _fresh_module()
    kernels = compile_once(module.__dict__, kernels={"reciprocal": "_reciprocal"})()
    assert njit_calls["options"] == [{"cache": True, "nogil": True, "error_model": "numpy"}] == [dict(NJIT_OPTIONS)]
    reciprocal = kernels["reciprocal"]
    assert reciprocal.targetoptions["nogil"] is True
    assert reciprocal.targetoptions["error_model"] == "numpy"
    assert type(reciprocal._cache).__name__ == "FunctionCache"  # cache=True (NullCache otherwise)
    # error_model="numpy": IEEE division, 1/0 = inf, where Python's model raises ZeroDivisionError
    assert reciprocal(0.0) == np.inf
    with pytest.raises(ZeroDivisionError):
        module._reciprocal(0.0)  # not rebound: the Python function


def test_rebinding_replaces_the_globals_that_compiled_callers_read():
    module = _fresh_module()
    pure_half, pure_sum = module._half, module._sum_of_halves
    kernels = compile_once(module.__dict__, rebind=(("half_alias", "_half"), "_half"),
                           kernels={"sum": "_sum_of_halves", "half": "_half"})()
    # the rebound names hold compiled twins of the Python functions; the kernel that names a rebound function
    # is that same object, and a kernel not rebound leaves its global name alone
    assert isinstance(module._half, numba.core.registry.CPUDispatcher) and module._half.py_func is pure_half
    assert isinstance(module.half_alias, numba.core.registry.CPUDispatcher) and module.half_alias.py_func is pure_half
    assert kernels["half"] is module._half
    assert module._sum_of_halves is pure_sum and kernels["sum"].py_func is pure_sum
    values = np.array([1.0, 2.5, -4.0])
    assert kernels["sum"](values) == 0.5 * values.sum() == -0.25  # (1 + 2.5 - 4) / 2, by hand


def test_needs_run_first_then_shared_names_are_copied():
    module, other = _fresh_module(), _fresh_module()
    steps = []

    def need():
        steps.append("need")
        other._half = "set by the need"  # copied below only if the need ran first

    compile_once(module.__dict__, needs=(need,), shared=((other, ("_half",)),))()
    assert steps == ["need"] and module._half == "set by the need"


def test_a_failed_first_call_publishes_nothing_and_the_next_call_compiles():
    module = _fresh_module()
    attempts = []

    def need():
        attempts.append(len(attempts))
        if len(attempts) == 1:
            raise RuntimeError("first attempt")

    lazy = compile_once(module.__dict__, needs=(need,), kernels={"reciprocal": "_reciprocal"})
    with pytest.raises(RuntimeError, match="first attempt"):
        lazy()
    assert not lazy.compiled
    assert lazy()["reciprocal"](4.0) == 0.25 and lazy.compiled and attempts == [0, 1]
