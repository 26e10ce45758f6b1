#!/usr/bin/env bash
# The Python package as a user gets it: `pip wheel .` in a fresh venv
# (--system-site-packages: NumPy, PyTorch and pytest come from the system,
# and --no-build-isolation: setuptools and pybind11 too, since PyPI may be
# out of reach), the wheel checked (the native module stripped, the typing
# files there), installed, and the Python tests run against the installed
# package from outside the source tree. Warnings are errors.
#   scripts/check-pip.sh [quick|full]    (default quick)
#     quick: the module's and the torch backend's tests
#     full:  every Python test (tests/python)
# MCL_PIP_PYTHON: the python3 to make the venv with (default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
suite=${1:-quick}
case "$suite" in
  quick) tests=(tests/python/test_module.py tests/python/test_torch_backend.py) ;;
  full) tests=(tests/python) ;;
  *)
    echo "usage: $0 [quick|full]" >&2
    exit 2
    ;;
esac
python=${MCL_PIP_PYTHON:-/usr/bin/python3}
work=$(mktemp -d /tmp/mcl-pip.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$python" -m venv --system-site-packages "$work/venv"
venv_python=$work/venv/bin/python
echo "== pip: $("$venv_python" --version), $("$venv_python" -m pip --version | cut -d' ' -f1-2)," \
  "NumPy $("$venv_python" -c 'import numpy; print(numpy.__version__)')," \
  "PyTorch $("$venv_python" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none) =="

# ccache through setup.py's CMAKE_ARGS, a cache for each Python.
source scripts/lib/ccache.sh
use_ccache "pip-$("$venv_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
export CMAKE_ARGS="${CMAKE_ARGS:-} ${ccache_cmake[*]+${ccache_cmake[*]}}"
start=$SECONDS
if ! MCL_WERROR=1 "$venv_python" -m pip wheel --no-build-isolation --no-deps \
  -w "$work/wheels" . >"$work/wheel.log" 2>&1; then
  tail -n 60 "$work/wheel.log"
  echo "check-pip: pip wheel failed" >&2
  exit 1
fi
wheel=$(ls "$work"/wheels/mcl-*.whl)
echo "== pip: $(basename "$wheel") built in $((SECONDS - start)) s; $(ccache_summary pip) =="

# What the wheel holds: the package's files, and a native module that is
# stripped (no symbol table, no debug sections) and small.
"$venv_python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
wanted = ["mcl/__init__.py", "mcl/torch.py", "mcl/py.typed", "mcl/_mcl.pyi"]
missing = [n for n in wanted if n not in names]
modules = [n for n in names if n.startswith("mcl/_mcl.") and not n.endswith(".pyi")]
if missing or len(modules) != 1:
    sys.exit(f"check-pip: the wheel lacks {missing} or has modules {modules}")
# The C++ torch backend, built where this environment's torch has headers.
torch_backend = [n for n in names if n.startswith("mcl/_torch_backend.")]
try:
    import os, torch, torch.utils.cpp_extension as e
    headers = os.path.exists(os.path.join(e.include_paths()[0], "torch",
                                          "csrc", "distributed", "c10d"))
except ImportError:
    headers = False
if headers and len(torch_backend) != 1:
    sys.exit("check-pip: torch here has its headers, but the wheel has no "
             f"mcl/_torch_backend module ({torch_backend})")
print(f"== pip: C++ torch backend: {torch_backend or 'none (no torch headers)'} ==")
info = zipfile.ZipFile(sys.argv[1]).getinfo(modules[0])
print(f"== pip: {modules[0]}: {info.file_size / 1e6:.1f} MB ==")
if info.file_size > 8e6:
    sys.exit("check-pip: the native module is over 8 MB: not stripped?")
PY
unpacked=$work/unpacked
mkdir -p "$unpacked" && (cd "$unpacked" && "$venv_python" -m zipfile -e "$wheel" .)
sections=$(readelf -S "$unpacked"/mcl/_mcl.* 2>/dev/null || true)
if grep -qE '\.symtab|\.debug_' <<<"$sections"; then
  echo "check-pip: the native module keeps a symbol table or debug sections" >&2
  exit 1
fi

"$venv_python" -m pip install --no-build-isolation "$wheel" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"
  exit 1
}
start=$SECONDS
# From outside the tree, so that only the installed package can be found;
# test_module checks where mcl came from.
# The torch tests say which backend they ran on: the C++ one where the
# wheel has it.
torch_backend=python
if "$venv_python" -c 'import sys, zipfile; sys.exit(not any(
    n.startswith("mcl/_torch_backend.") for n in
    zipfile.ZipFile(sys.argv[1]).namelist()))' "$wheel"; then
  torch_backend=cpp
fi
(cd "$work" && MCLTEST_INSTALLED_UNDER="$work/venv" \
  MCLTEST_TORCH_BACKEND=$torch_backend "$venv_python" -m pytest -q \
  -p no:cacheprovider "${tests[@]/#/$root/}")
echo "== pip: the $suite Python suite passed on the installed wheel in $((SECONDS - start)) s =="
