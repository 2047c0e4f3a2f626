"""numba's disk cache where the install and the home folder are read-only (issue 32, part 1)."""

from __future__ import annotations

import os

import pytest

from allocopt import _numba
from allocopt.exceptions import PerformanceWarning

numba = pytest.importorskip("numba")


@pytest.fixture
def fresh_check(monkeypatch):
    """A process that has not checked the cache location yet, with numba's configuration restored after."""
    from numba.core import config

    monkeypatch.setitem(_numba._CACHE_CHECK, "done", False)
    monkeypatch.setattr(config, "CACHE_DIR", "")
    return config


def test_nothing_writable_moves_the_cache_to_a_temporary_folder_with_one_warning(fresh_check, monkeypatch):
    monkeypatch.setattr(_numba, "_writable", lambda directory: False)
    with pytest.warns(PerformanceWarning, match="NUMBA_CACHE_DIR"):
        _numba.ensure_cache_location()
    assert os.path.isdir(fresh_check.CACHE_DIR) and "allocopt-numba-" in fresh_check.CACHE_DIR
    # a cached function compiles there (numba refused cache=True before: "no locator available")
    function = _numba.numba_njit()(lambda x: x + 1.0)
    assert function(1.0) == 2.0
    _numba.ensure_cache_location()  # checked once per process: no second warning, the same folder
    assert "allocopt-numba-" in fresh_check.CACHE_DIR


def test_a_writable_package_keeps_numbas_own_locations(fresh_check, recwarn):
    _numba.ensure_cache_location()
    assert fresh_check.CACHE_DIR == ""
    assert not [warning for warning in recwarn if issubclass(warning.category, PerformanceWarning)]


def test_an_unwritable_numba_cache_dir_moves_the_cache_to_a_temporary_folder(fresh_check, monkeypatch, tmp_path):
    # NUMBA_CACHE_DIR set to a folder nobody can create (below a regular file): numba would ignore it and, with the
    # package and the home folder read-only, find no locator
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setattr(fresh_check, "CACHE_DIR", str(blocker / "cache"))
    with pytest.warns(PerformanceWarning, match="in NUMBA_CACHE_DIR"):
        _numba.ensure_cache_location()
    assert "allocopt-numba-" in fresh_check.CACHE_DIR


def test_a_writable_numba_cache_dir_is_kept(fresh_check, monkeypatch, tmp_path, recwarn):
    monkeypatch.setattr(fresh_check, "CACHE_DIR", str(tmp_path / "cache"))
    _numba.ensure_cache_location()
    assert fresh_check.CACHE_DIR == str(tmp_path / "cache")
    assert not [warning for warning in recwarn if issubclass(warning.category, PerformanceWarning)]
