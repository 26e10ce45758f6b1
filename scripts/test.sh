#!/usr/bin/env bash
# Runs the whole test suite of an existing build (scripts/setup.sh makes it):
# unit tests and multi-process integration tests, through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure --timeout 600 -j "$jobs" "$@"
