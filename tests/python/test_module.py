"""The module itself, in this process: version, params, the exception
classes and their codes, mcl.empty."""

import builtins
import gc
import glob
import os
import pickle
import re

import numpy as np
import pytest

import mcl


def test_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", mcl.version())
    assert mcl.__version__ == mcl.version()


def test_the_package_tested_is_the_one_meant():
    """scripts/check-pip.sh tests an installed wheel: it names where."""
    installed_under = os.environ.get("MCLTEST_INSTALLED_UNDER")
    if installed_under is None:
        pytest.skip("testing the package of the build tree")
    assert os.path.realpath(mcl.__file__).startswith(
        os.path.realpath(installed_under) + os.sep), mcl.__file__


def test_every_public_name_exists():
    for name in mcl.__all__:
        assert hasattr(mcl, name), name


def test_params_lists_the_environment_knobs():
    params = mcl.params()
    assert "MCL_TIMEOUT" in params and "MCL_TRANSPORT" in params
    for name, (default, doc) in params.items():
        assert isinstance(default, str), name
        assert isinstance(doc, str) and doc, name


@pytest.mark.parametrize("cls, code, name", [
    (mcl.SystemCallError, 2, "mclSystemError"),
    (mcl.InternalError, 3, "mclInternalError"),
    (mcl.InvalidArgumentError, 4, "mclInvalidArgument"),
    (mcl.InvalidUsageError, 5, "mclInvalidUsage"),
    (mcl.RemoteError, 6, "mclRemoteError"),
    (mcl.TimeoutError, 8, "mclTimeout"),
])
def test_error_classes(cls, code, name):
    assert issubclass(cls, mcl.Error)
    exc = cls("what went wrong")
    assert (exc.code, exc.code_name, exc.message) == (code, name,
                                                      "what went wrong")
    assert str(exc) == f"{name}: what went wrong"
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is cls and again.message == exc.message


def test_error_classes_join_the_builtin_ones():
    assert issubclass(mcl.InvalidArgumentError, ValueError)
    assert issubclass(mcl.TimeoutError, builtins.TimeoutError)
    assert not issubclass(mcl.RemoteError, ValueError)


@pytest.mark.parametrize("shape, dtype", [(10, "float32"), ((3, 4), "int64"),
                                          ((2, 3, 5), np.float16),
                                          ((1 << 16,), "complex128")])
def test_empty_gives_zeroed_writable_numpy_arrays(shape, dtype):
    a = mcl.empty(shape, dtype)
    assert isinstance(a, np.ndarray)
    assert a.shape == (shape if isinstance(shape, tuple) else (shape,))
    assert a.dtype == np.dtype(dtype)
    assert a.flags.c_contiguous and a.flags.writeable
    assert not a.any()
    a[...] = 1
    assert a.all()


def test_zeros_is_empty():
    z = mcl.zeros(4)
    assert z.dtype == np.float32 and not z.any()


def _segments():
    """This process's mclMemAlloc segments (named mcl-m<pid>-... on Linux)."""
    return set(glob.glob(f"/dev/shm/mcl-m{os.getpid()}-*"))


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def test_shared_memory_goes_with_the_last_array_using_it():
    before = _segments()
    view = mcl.empty(1 << 16, "uint8")[100:]
    gc.collect()
    assert len(_segments() - before) == 1
    view[:] = 7  # would fault if the memory went with the base array
    assert int(view.sum()) == 7 * ((1 << 16) - 100)
    del view
    gc.collect()
    assert _segments() == before
