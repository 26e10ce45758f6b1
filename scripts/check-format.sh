#!/usr/bin/env bash
# Fails when a C/C++ source differs from what clang-format makes of it.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files '*.h' '*.cpp' '*.c' | xargs clang-format --dry-run --Werror
echo "formatting OK"
