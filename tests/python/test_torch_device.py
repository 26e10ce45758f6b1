"""The "mcl" backend on tensors that are not CPU tensors: a device of the
tests' own (torch_device/mcl_test_device.cpp, PyTorch's PrivateUse1
extension point: its memory is scrambled and its fill_ runs later, so a
missing copy or synchronization gives wrong values), and CUDA where
torch.cuda.is_available(). Needs the C++ backend (the Python one refuses
other devices) and torch's C++ headers to build the device."""

import os

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")

EXPECTED = {"all_reduce", "async all_reduce", "future",
            "future's tensor is the caller's", "broadcast",
            "all_gather_into_tensor", "all_gather", "reduce_scatter_tensor",
            "all_to_all_single", "a call mixing devices refused naming it",
            "usable after refusals", "reduce_scatter (list)",
            "all_to_all_single uneven", "two async calls on one tensor",
            "a callback that waits for another call",
            "waited after the group is gone"}


@pytest.fixture(scope="module")
def native_backend():
    from mcl import _torch_native
    reason = _torch_native.why_not_native()
    if reason is not None:
        if os.environ.get("MCLTEST_TORCH_BACKEND") == "cpp":
            pytest.fail(f"the C++ backend was built but is not used: {reason}")
        pytest.skip(f"the Python backend takes CPU tensors only: {reason}")


@pytest.fixture(scope="module")
def device_dir(tmp_path_factory, native_backend):
    """The test device, built once with torch's extension tooling."""
    from torch.utils import cpp_extension
    include = cpp_extension.include_paths()[0]
    if not os.path.exists(os.path.join(include, "torch", "extension.h")):
        pytest.skip("torch has no C++ headers here (Debian: libtorch-dev)")
    from torch_device import device_module
    return device_module.build(tmp_path_factory.mktemp("torch_device"))


@pytest.mark.parametrize("nranks", [2, 3])
def test_collectives_on_a_device_that_is_not_the_cpu(ranks, device_dir,
                                                      nranks):
    reports = ranks.run("torch_device_collectives", nranks,
                        env={"MCLTEST_TORCH_DEVICE_DIR": device_dir})
    for rank, report in enumerate(reports):
        assert report["failures"] == [], f"rank {rank}: {report['failures']}"
        wanted = EXPECTED | ({"send/recv"} if rank == 1 else set())
        missing = wanted - set(report["checks"])
        assert not missing, f"rank {rank} did not check {missing}"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA here")
def test_collectives_on_cuda(ranks, native_backend):
    reports = ranks.run("torch_device_collectives", 2, args={"cuda": True})
    for rank, report in enumerate(reports):
        assert report["failures"] == [], f"rank {rank}: {report['failures']}"


def test_mps_tensors_reach_the_backend_on_pytorch_2(native_backend):
    # PyTorch 2 registers c10d's kernels for CPU, CUDA and PrivateUse1
    # tensors only; mcl.torch adds MPS ones that run the CPU kernel, which
    # calls the group's backend (registered for "mps" too), which stages
    # the tensors as it does the test device's. No MPS here: this checks
    # the kernels are there; tests/python on a Mac runs them.
    import mcl.torch
    if torch.__version__.startswith("1."):
        pytest.skip("PyTorch 1.x calls the process group directly")
    for op in ("allreduce_", "broadcast_", "allgather_", "send", "recv_",
               "_reduce_scatter_base_", "alltoall_base_", "barrier"):
        dump = torch._C._dispatch_dump(f"c10d::{op}")
        assert any(line.startswith("MPS:") for line in dump.splitlines()), \
            (op, dump)
    assert "mps" in mcl.torch._devices()
