#!/usr/bin/env bash
# Installs what mcl needs to build and test, if it is missing: apt-get on
# Debian/Ubuntu (as root, or through sudo), Homebrew on macOS.
set -euo pipefail

debian_packages=(build-essential cmake ninja-build pkg-config libsodium-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev
  libhwloc-dev
  libibverbs-dev
  clang clang-format
  python3 python3-dev python3-numpy python3-pytest python3-matplotlib iproute2
  iptables util-linux  # a transparent proxy and setpriv for the security tests
  python3-venv python3-setuptools python3-wheel
  pybind11-dev libdlpack-dev python3-torch
  openmpi-bin libopenmpi-dev libgloo-dev)  # the peers of perf/compare
# The cluster tests need Linux network namespaces: on macOS they skip.
# Homebrew formula names (homebrew/core): pkgconf provides pkg-config;
# python@3.13 and numpy give the bindings a Python with NumPy.
brew_packages=(cmake ninja pkgconf libsodium googletest google-benchmark
  nlohmann-json cli11 hwloc clang-format open-mpi pybind11 dlpack python@3.13
  numpy)

source "$(dirname "$0")/lib/as_root.sh"

case "$(uname -s)" in
  Linux)
    if ! command -v dpkg-query >/dev/null; then
      echo "install-deps: not a Debian/Ubuntu system; install by hand:" \
        "${debian_packages[*]}" >&2
      exit 0
    fi
    missing=()
    for p in "${debian_packages[@]}"; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
      echo "install-deps: installing ${missing[*]}"
      as_root apt-get update -qq
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${missing[@]}"
    fi
    ;;
  Darwin)
    if ! command -v brew >/dev/null; then
      echo "install-deps: install Homebrew, then run:" >&2
      echo "  brew install ${brew_packages[*]}" >&2
      exit 1
    fi
    missing=()
    for p in "${brew_packages[@]}"; do
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
