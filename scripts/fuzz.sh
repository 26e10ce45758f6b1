#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (in build-fuzz/) and runs each for
# a bounded time, starting from the committed corpus in tests/fuzz/corpus.
# New inputs go to a scratch directory, so the committed corpus only grows
# by hand. Exit status non-zero when a target crashes or fails to build.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
# One per parser of outside input; tests/fuzz/CMakeLists.txt builds the same.
targets=(topology_json system_profiler networksetup thunderbolt_sysfs
  bootstrap_messages tcp_wire shm_wire rdma_wire unique_id algo_spec
  socket_ifname init_details device_details macos_tools)

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (apt-get install clang, or scripts/install-deps.sh)" >&2
  # CI must fuzz; by hand, say so and go on.
  if [ "${CI:-}" = true ] || [ "${MCL_WERROR:-}" = 1 ]; then exit 1; fi
  exit 0
fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCL_BUILD_FUZZERS=ON \
  -DMCL_BUILD_PERF=OFF -DMCL_WERROR="${MCL_WERROR:-OFF}" >/dev/null
ninja -C build-fuzz "${targets[@]/#/fuzz_}"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  echo "== fuzz_$t: ${seconds} s =="
  # -rss_limit and -timeout turn runaway memory or time into failures.
  status=0
  build-fuzz/fuzz/fuzz_"$t" "$scratch/$t" "tests/fuzz/corpus/$t" \
    -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 \
    -artifact_prefix="$scratch/$t-" -print_final_stats=1 \
    >"$scratch/$t.log" 2>&1 || status=$?
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units)" "$scratch/$t.log" || true
  if [ "$status" -ne 0 ]; then
    cat "$scratch/$t.log" >&2
    echo "fuzz_$t FAILED (status $status); the input that failed:" >&2
    for f in "$scratch/$t-"*; do [ -e "$f" ] && od -c "$f" | head -20 >&2; done
    exit 1
  fi
done
