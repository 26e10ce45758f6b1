#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time, starting from the committed
# corpus in tests/fuzz/corpus, as many at once as there are cores. The
# targets are built in the AddressSanitizer tree (build-asan/, with clang:
# scripts/lib/sanitized-build.sh), whose objects carry libFuzzer's coverage:
# a tree scripts/sanitize.sh has built is used as it is. New inputs go to
# MCLBUILD_CACHE_DIR/fuzz-corpus (CI sets it), so that each run goes on from
# where the last one stopped and a short run still fuzzes deep over many
# runs; without it, or when it cannot be written, to a scratch directory.
# The committed corpus only grows by hand. Exit status non-zero when a
# target crashes or fails to build.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (apt-get install clang, or scripts/install-deps.sh test)" >&2
  # CI must fuzz; by hand, say so and go on.
  if [ "${CI:-}" = true ] || [ "${MCL_WERROR:-}" = 1 ]; then exit 1; fi
  exit 0
fi
source scripts/lib/sanitized-build.sh
sanitized_build asan "${fuzz_targets[@]/#/fuzz_}"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Where each target's new inputs go: the cache when there is one (any bytes
# in it are just more inputs: a damaged cache costs nothing).
corpus=$scratch/new
if [ -n "${MCLBUILD_CACHE_DIR:-}" ] && mkdir -p "$MCLBUILD_CACHE_DIR/fuzz-corpus" 2>/dev/null &&
  [ -w "$MCLBUILD_CACHE_DIR/fuzz-corpus" ]; then
  corpus=$MCLBUILD_CACHE_DIR/fuzz-corpus
fi
echo "== fuzz: new inputs kept in $corpus =="

# fuzz_one TARGET: runs it, prints its totals; on a failure its log and
# the input that failed, and exit status 1.
fuzz_one() {
  local t=$1 status=0 f
  mkdir -p "$corpus/$t"
  # -rss_limit and -timeout turn runaway memory or time into failures.
  build-asan/fuzz/fuzz_"$t" "$corpus/$t" "tests/fuzz/corpus/$t" \
    -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 \
    -artifact_prefix="$scratch/$t-" -print_final_stats=1 \
    >"$scratch/$t.log" 2>&1 || status=$?
  {
    echo "== fuzz_$t: ${seconds} s =="
    grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units)" "$scratch/$t.log" || true
  } >"$scratch/$t.summary"
  if [ "$status" -ne 0 ]; then
    {
      cat "$scratch/$t.log"
      echo "fuzz_$t FAILED (status $status); the input that failed:"
      for f in "$scratch/$t-"*; do [ -e "$f" ] && od -c "$f" | head -20; done
    } >>"$scratch/$t.summary"
    return 1
  fi
}
export -f fuzz_one
export scratch corpus seconds
failed=0
printf '%s\n' "${fuzz_targets[@]}" |
  xargs -P "$jobs" -I{} bash -c 'fuzz_one {}' || failed=1
for t in "${fuzz_targets[@]}"; do cat "$scratch/$t.summary"; done
exit "$failed"
