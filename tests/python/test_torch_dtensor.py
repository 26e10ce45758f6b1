"""PyTorch's own tensor parallelism on "mcl": examples/python/
tensor_parallel_dtensor.py shards a Llama-shaped block with DTensor's
parallelize_module over 2 and 4 ranks, decodes a prompt and 4 tokens, and
compares every step with the block run unsharded (float32 sums in another
order: within atol 1e-5, rtol 1e-4, the example's defaults); then the
functional collectives DTensor uses, plain and under torch.compile
(inductor where a C++ compiler is there, else aot_eager). PyTorch 2.2+
(init_device_mesh) and the C++ backend."""

import json
import os
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian: python3-torch)")

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "examples", "python", "tensor_parallel_dtensor.py")


@pytest.fixture(scope="module")
def dtensor_torch():
    try:
        from torch.distributed.device_mesh import init_device_mesh  # noqa
    except ImportError:
        pytest.skip(f"PyTorch {torch.__version__} has no init_device_mesh "
                    "(DTensor tensor parallelism: PyTorch 2.2+)")
    from mcl import _torch_native
    reason = _torch_native.why_not_native()
    if reason is not None:
        if os.environ.get("MCLTEST_TORCH_BACKEND") == "cpp":
            pytest.fail(f"the C++ backend was built but is not used: {reason}")
        pytest.skip("DTensor's functional collectives reach a backend per "
                    f"device: the C++ one's ({reason})")


@pytest.mark.parametrize("nranks", [2, 4])
def test_a_sharded_block_decodes_as_one_rank(dtensor_torch, tmp_path,
                                             nranks):
    # inductor compiles C++ at run time: once, on 2 ranks, where g++ is.
    compiler = "inductor" if nranks == 2 and shutil.which("g++") else \
        "aot_eager"
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "MCL_SECRET")}
    done = subprocess.run(
        [sys.executable, EXAMPLE, "--ranks", str(nranks), "--compile",
         compiler, "--report", str(report)],
        env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    found = json.loads(report.read_text())
    assert found["steps"] == 5, found
    assert found["close"], found
    assert found["functional"], found
    assert found["compiled"] and found["compile_backend"] == compiler, found
    assert f"{nranks} ranks: 5 steps" in done.stdout, done.stdout
