#!/usr/bin/env bash
# README's second command, after scripts/setup.sh: installs what the tests
# need, builds them in build/ (everything scripts/setup.sh did not) and runs
# the whole test suite through CTest: unit tests, multi-process integration
# tests, Python tests and, as root, the multi-host and fault tests in
# network namespaces. Arguments go to ctest (-R NAME, -L LABEL, ...).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh test
source scripts/lib/configure.sh
configure_build -DMCL_BUILD_TESTS=ON
cmake --build build -j "$jobs"
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
