#!/usr/bin/env bash
# Installs what mcl needs to build and test, if it is missing: apt-get on
# Debian/Ubuntu (as root, or through sudo), Homebrew on macOS.
set -euo pipefail

debian_packages=(build-essential cmake ninja-build pkg-config libsodium-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libhwloc-dev
  libibverbs-dev
  clang clang-format
  python3 python3-dev python3-numpy python3-pytest python3-matplotlib iproute2
  pybind11-dev libdlpack-dev python3-torch
  openmpi-bin libopenmpi-dev libgloo-dev)  # the peers of perf/compare
# The cluster tests need Linux network namespaces: on macOS they skip.
brew_packages=(cmake ninja pkg-config libsodium googletest google-benchmark
  nlohmann-json hwloc clang-format open-mpi pybind11 dlpack numpy)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else echo "install-deps: need root (or sudo) to run: $*" >&2; exit 1
  fi
}

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
    ;;
  *)
    echo "install-deps: unsupported system $(uname -s)" >&2
    exit 1
    ;;
esac
