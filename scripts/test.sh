#!/usr/bin/env bash
# Runs the whole test suite of an existing build (scripts/setup.sh makes it):
# unit tests and multi-process integration tests, through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
if ctest --test-dir build --output-on-failure --timeout 600 -j "$jobs" "$@"; then
  exit 0
fi
# A failure's output scrolled by among hundreds of tests: print the end of
# each failed test's output again, last, where a reader of a CI log (often
# only its tail) finds it.
temporary=build/Testing/Temporary
if [ -s "$temporary/LastTestsFailed.log" ]; then
  while IFS=: read -r _ name; do
    echo "== failed: $name (the end of its output) =="
    awk -v name="$name" '
      $0 ~ "^[0-9]+/[0-9]+ Testing: " && $3 == name { inside = 1; next }
      inside && /^<end of output>$/ { exit }
      inside { print }' "$temporary/LastTest.log" | tail -n 40
  done <"$temporary/LastTestsFailed.log"
fi
exit 1
