#!/usr/bin/env bash
# Installs what mcl needs, if it is missing: apt-get on Debian/Ubuntu (as
# root, or through sudo), Homebrew on macOS.
#   scripts/install-deps.sh [build|test]   (default build)
#     build: what builds the library, mcl-perf and the Python package
#            (README's first command: scripts/setup.sh)
#     test:  that, plus what the tests and perf/compare need: GoogleTest,
#            Google Benchmark, PyTorch, pytest, network namespaces, the
#            fuzzers' clang, OpenMPI and Gloo (scripts/test.sh)
set -euo pipefail
what=${1:-build}
case "$what" in
  build | test) ;;
  *)
    echo "usage: $0 [build|test]" >&2
    exit 2
    ;;
esac

debian_build=(build-essential cmake ninja-build pkg-config ccache
  libsodium-dev nlohmann-json3-dev libcli11-dev libhwloc-dev libibverbs-dev
  python3 python3-dev python3-numpy pybind11-dev libdlpack-dev
  python3-venv python3-setuptools python3-wheel)
debian_test=(libgtest-dev libgmock-dev libbenchmark-dev clang clang-format
  python3-pytest python3-matplotlib python3-torch libtorch-dev iproute2
  iptables util-linux  # a transparent proxy and setpriv for the security tests
  openmpi-bin libopenmpi-dev libgloo-dev)  # the peers of perf/compare
# The cluster tests need Linux network namespaces: on macOS they skip.
# Homebrew formula names (homebrew/core): pkgconf provides pkg-config;
# python@3.13 and numpy give the bindings a Python with NumPy.
brew_build=(cmake ninja pkgconf ccache libsodium nlohmann-json cli11 hwloc
  pybind11 dlpack python@3.13 numpy)
brew_test=(googletest google-benchmark clang-format open-mpi)

source "$(dirname "$0")/lib/as_root.sh"

case "$(uname -s)" in
  Linux)
    wanted=("${debian_build[@]}")
    [ "$what" = test ] && wanted+=("${debian_test[@]}")
    if ! command -v dpkg-query >/dev/null; then
      echo "install-deps: not a Debian/Ubuntu system; install by hand:" \
        "${wanted[*]}" >&2
      exit 0
    fi
    as_root_apt_install "${wanted[@]}"
    ;;
  Darwin)
    wanted=("${brew_build[@]}")
    [ "$what" = test ] && wanted+=("${brew_test[@]}")
    if ! command -v brew >/dev/null; then
      echo "install-deps: install Homebrew, then run:" >&2
      echo "  brew install ${wanted[*]}" >&2
      exit 1
    fi
    missing=()
    for p in "${wanted[@]}"; do
      brew list --versions "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then brew install "${missing[@]}"; fi
    # The bindings need a python3 with NumPy (CMake's MCL_PYTHON picks the
    # first one): say which one it will be, or what to do.
    python=$(brew --prefix)/bin/python3
    if "$python" -c "import numpy" 2>/dev/null; then
      echo "install-deps: Python bindings will use $python" \
        "(NumPy $("$python" -c 'import numpy; print(numpy.__version__)'))"
    else
      echo "install-deps: $python has no NumPy, so the Python bindings" \
        "would be skipped: brew install numpy, or make a venv" \
        "(python3 -m venv ~/mcl-venv && ~/mcl-venv/bin/pip install numpy)" \
        "and configure with -DMCL_PYTHON=~/mcl-venv/bin/python" >&2
    fi
    ;;
  *)
    echo "install-deps: unsupported system $(uname -s)" >&2
    exit 1
    ;;
esac
