#!/usr/bin/env bash
# Installs what is missing, then configures and builds mcl in build/.
# MCL_WERROR=1 (CI sets it) makes warnings errors.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
werror=OFF
if [ "${MCL_WERROR:-0}" = 1 ] || [ "${CI:-}" = true ]; then werror=ON; fi
# CI must build the Python bindings; elsewhere they are skipped, with a
# warning, when their dependencies are missing.
python=()
if [ "${CI:-}" = true ]; then python=(-DMCL_BUILD_PYTHON=ON); fi
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)

cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMCL_WERROR="$werror" ${python[@]+"${python[@]}"}
cmake --build build -j "$jobs"
