#!/usr/bin/env bash
# README's first command: installs what is missing to build mcl, then
# configures build/ and builds what the main job runs: the library,
# mcl-perf and, where their dependencies are there, the Python bindings
# (CMake's target mcl-product). scripts/test.sh builds the tests.
# MCL_WERROR=1 (CI sets it) makes warnings errors.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh build
source scripts/lib/configure.sh
configure_build
cmake --build build -j "$jobs" --target mcl-product
