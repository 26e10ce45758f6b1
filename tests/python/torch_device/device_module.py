"""The tests' torch device (mcl_test_device.cpp, beside this file): built
with torch's extension tooling, and opened in a process that uses it. The
device tests and perf/torch_staged.py use it."""

import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def build(directory, optimize="-O1"):
    """Builds the device's module into `directory` (once: torch's tooling
    keeps what it built there) and returns the directory."""
    from torch.utils import cpp_extension
    cpp_extension.load(name="mcl_test_device",
                       sources=[os.path.join(HERE, "mcl_test_device.cpp")],
                       build_directory=str(directory),
                       extra_cflags=[optimize], verbose=False)
    return str(directory)


def open_device(directory):
    """Loads the device built in `directory`: its torch.device, and the
    function that waits for its queue. On PyTorch 2 a device also needs a
    module of its own (torch.<name>) that says it is there."""
    import torch
    sys.path.insert(0, str(directory))
    import mcl_test_device  # registers the device's kernels
    if hasattr(torch, "_register_device_module") and not hasattr(
            torch, "privateuseone"):
        module = types.ModuleType("torch.privateuseone")
        module.is_available = lambda: True
        module.device_count = lambda: 1
        module.current_device = lambda: 0
        module.is_initialized = lambda: True
        module._lazy_init = lambda: None
        module.synchronize = lambda device=None: mcl_test_device.synchronize()
        torch._register_device_module("privateuseone", module)
    return torch.device("privateuseone"), mcl_test_device.synchronize
