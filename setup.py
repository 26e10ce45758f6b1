"""Builds the Python package `mcl` with the project's CMake (pyproject.toml
names setuptools as the backend; the metadata is there).

The native module `mcl._mcl` carries libmcl (linked statically), so a wheel
needs no `cmake --install`. Where the environment the wheel is for has
PyTorch with its C++ headers (pip's torch; Debian's libtorch-dev), the C++
torch.distributed backend `mcl._torch_backend` is built against it too. It is built Release and stripped. Settings, from
the environment:
  CMAKE_ARGS                  more CMake arguments (as conda-forge passes them)
  MCL_WERROR=1                warnings are errors (CI)
  MACOSX_DEPLOYMENT_TARGET    the oldest macOS the wheel runs on (default: the
                              library's, 14.4); the wheel's tag says the same
The CMake build tree is kept (build-python/) so a second install is quick.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent

# os_sync_wait_on_address (the shared-memory wait) arrived in macOS 14.4:
# CMakeLists.txt defaults to it, and so do the wheels.
MACOS_OLDEST = "14.4"


def project_version() -> str:
    """The one version number, CMakeLists.txt's project(VERSION)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    found = re.search(r"project\(mcl VERSION ([0-9.]+)", text)
    if not found:
        raise RuntimeError("setup.py: no project(mcl VERSION x.y.z) in "
                           "CMakeLists.txt")
    return found.group(1)


def macos_target() -> str:
    """The deployment target of the wheel, set in the environment too: the
    wheel's platform tag is computed from it."""
    target = os.environ.get("MACOSX_DEPLOYMENT_TARGET", MACOS_OLDEST)
    parts = [int(p) for p in target.split(".")]
    if parts < [int(p) for p in MACOS_OLDEST.split(".")]:
        raise RuntimeError(
            f"setup.py: MACOSX_DEPLOYMENT_TARGET={target} is older than "
            f"macOS {MACOS_OLDEST}, the oldest mcl runs on")
    os.environ["MACOSX_DEPLOYMENT_TARGET"] = target
    return target


def pybind11_arguments() -> list:
    """pybind11's CMake package from its Python package when the build has
    it (pip's isolated build installs it); else CMake finds a system one
    (Debian's pybind11-dev, Homebrew's pybind11)."""
    try:
        import pybind11
    except ImportError:
        return []
    return [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]


class CMakeExtension(Extension):
    """The native module, built by CMake's target mcl_python."""

    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures the project (library and module only), builds the module
    target and installs it stripped next to the package's Python files."""

    def build_extension(self, ext: Extension) -> None:
        build_dir = ROOT / "build-python" / Path(self.build_temp).name
        build_dir.mkdir(parents=True, exist_ok=True)
        staging = build_dir / "staging"
        arguments = [
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DMCL_PYTHON={sys.executable}",
            "-DMCL_BUILD_PYTHON=ON",
            "-DMCL_BUILD_TESTS=OFF",
            "-DMCL_BUILD_PERF=OFF",
            # One compiler run per batch of sources: half the build time.
            "-DCMAKE_UNITY_BUILD=ON",
            # The module is installed alone, under staging/mcl.
            "-DMCL_PYTHON_INSTALL_DIR=.",
            "-DMCL_WERROR=" + ("ON" if os.environ.get("MCL_WERROR") == "1"
                               else "OFF"),
        ]
        if sys.platform == "darwin":
            arguments.append(f"-DCMAKE_OSX_DEPLOYMENT_TARGET={macos_target()}")
        if shutil.which("ninja") and not (build_dir / "Makefile").exists():
            arguments += ["-G", "Ninja"]
        arguments += pybind11_arguments()
        arguments += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        jobs = str(os.cpu_count() or 2)
        self.run_cmake(["-S", str(ROOT), "-B", str(build_dir)] + arguments)
        self.run_cmake(["--build", str(build_dir), "--target",
                        "mcl_python_package", "--parallel", jobs])
        shutil.rmtree(staging, ignore_errors=True)
        self.run_cmake(["--install", str(build_dir), "--component",
                        "python_module", "--strip", "--prefix", str(staging)])
        built = list((staging / "mcl").glob("_mcl*"))
        if len(built) != 1:
            raise RuntimeError(
                f"setup.py: expected one native module in {staging / 'mcl'}, "
                f"found {[p.name for p in built]}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)
        shutil.copymode(built[0], target)
        # The C++ PyTorch backend, where CMake found torch with its headers
        # (its configure output says which, or why not).
        for backend in (staging / "mcl").glob("_torch_backend*"):
            shutil.copyfile(backend, target.parent / backend.name)
            shutil.copymode(backend, target.parent / backend.name)

    @staticmethod
    def run_cmake(arguments: list) -> None:
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError(
                "setup.py: mcl builds with CMake 3.20 or newer, and there is "
                "no cmake on PATH (Debian: apt-get install cmake; macOS: brew "
                "install cmake; or pip install cmake)")
        print("cmake " + " ".join(shlex.quote(a) for a in arguments),
              flush=True)
        subprocess.run([cmake] + arguments, check=True)


if sys.platform == "darwin":
    macos_target()
(ROOT / "build-python").mkdir(exist_ok=True)

setup(
    version=project_version(),
    ext_modules=[CMakeExtension("mcl._mcl")],
    cmdclass={"build_ext": CMakeBuild},
    # build/ is the CMake tree of scripts/setup.sh; setuptools keeps its
    # own files apart.
    options={"build": {"build_base": "build-python/setuptools"},
             "egg_info": {"egg_base": "build-python"}},
)
