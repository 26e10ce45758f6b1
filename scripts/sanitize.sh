#!/usr/bin/env bash
# Builds mcl with sanitizers and runs the C++ tests under them:
#   asan  build-asan/: AddressSanitizer + UndefinedBehaviorSanitizer +
#         LeakSanitizer on every unit and integration test. Forked ranks
#         check for leaks before they exit (tests/integration/multiprocess),
#         and the init/destroy tests run 1000 cycles per transport. The
#         same objects carry libFuzzer's coverage, and the fuzz targets
#         are linked here too: scripts/fuzz.sh runs them from this build.
#   tsan  build-tsan/: ThreadSanitizer on the tests that run threads (below).
#   scripts/sanitize.sh [asan|tsan|all]   (default all)
# Exit status non-zero on any test failure or sanitizer report.
# MCL_WERROR=1 (CI sets it) makes warnings errors, as in scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in
  asan | tsan | all) ;;
  *)
    echo "usage: $0 [asan|tsan|all]" >&2
    exit 2
    ;;
esac

source scripts/lib/sanitized-build.sh

# Reports also go to files (log_path), so that one in a process whose exit
# status nobody checks still fails the run; each run gets a fresh directory.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0

# Prints the reports of one run and fails the script when there are any.
check_reports() {
  local kind=$1 f
  for f in "$logs/$kind".*; do
    [ -e "$f" ] || continue
    echo "== $kind: sanitizer report $f ==" >&2
    cat "$f" >&2
    status=1
  done
}

# The unit tests in one process per core (GoogleTest shards) rather than
# one per test as CTest runs them: starting a sanitized process costs about
# 0.25 s, which over the 1100 unit tests was most of their time.
run_unit_shards() {
  local kind=$1 i failed=0
  local pids=()
  for ((i = 0; i < jobs; i++)); do
    GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$i \
      "$(sanitized_tree "$kind")/tests/unit/mcl-unit-tests" --gtest_brief=1 \
      >"$logs/unit-shard$i.txt" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      failed=1
      cat "$logs/unit-shard$i.txt" >&2
    fi
  done
  return "$failed"
}

run_asan() {
  sanitized_build asan mcl-unit-tests mcl-integration-tests \
    mcl-nccl-port-c mcl-nccl-port-cpp "${fuzz_targets[@]/#/fuzz_}"
  local start=$SECONDS
  # detect_leaks: LeakSanitizer at every exit. halt_on_error (and
  # -fno-sanitize-recover=undefined): the first report ends the process,
  # so its test fails.
  export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:log_path=$logs/asan"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/asan"
  export LSAN_OPTIONS="log_path=$logs/asan"
  echo "== asan: unit tests =="
  run_unit_shards asan || status=1
  echo "== asan: integration tests =="
  ctest --test-dir "$(sanitized_tree asan)" -L '^integration$' \
    --output-on-failure -j "$jobs" || status=1
  unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
  check_reports asan
  echo "== asan: tests ran in $((SECONDS - start)) s =="
}

# ThreadSanitizer sees races between threads of one process, so the list
# is the tests where mcl runs threads beside each other (the whole suite
# under it takes several times as long):
# - ranks as threads of one process (shared memory, TCP, zero-copy): both
#   ends of each transport, the rendezvous root and the TCP listener
#   threads, and mcl's process-wide state, all at once;
# - streams (StreamsGroups, IssueOrder, CallCheck on a stream): the stream's
#   worker against the caller, issue order across threads;
# - Lifecycle: abort from another thread, destroy and finalize while a
#   stream drains, failures reported through a stream, and the 1000
#   init/destroy cycles over TCP, where rank 0 runs each cycle's rendezvous
#   root and every rank a listener thread beside its own;
# - thread-local last errors (BadSetupInput);
# - RDMA's keeper thread (it services a communicator's connections while no
#   operation does): started and stopped in 1000 init/destroy cycles, and
#   beside every operation of a 4-Mac doubled mesh.
tsan_tests='^(ShmThreads/|TcpThreads/|ZeroCopy/CollectiveMatrixZeroCopyThreads\.'
tsan_tests+='|StreamsGroups\.|IssueOrder\.|CallCheck\.MismatchOnAStream'
tsan_tests+='|Lifecycle\.|Lifecycle/ThousandInitDestroyCycles\.LeakNothing/tcp'
tsan_tests+='|BadSetupInput\.LastErrorIsPerThread|InitModes\.'
tsan_tests+='|RdmaLifecycle\.|RdmaEmu/CollectiveMatrixRdma\..*_mesh4_doubled)'

run_tsan() {
  sanitized_build tsan mcl-integration-tests
  local start=$SECONDS
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$logs/tsan"
  ctest --test-dir "$(sanitized_tree tsan)" -L '^integration$' -R "$tsan_tests" \
    --output-on-failure -j "$jobs" || status=1
  unset TSAN_OPTIONS
  check_reports tsan
  echo "== tsan: tests ran in $((SECONDS - start)) s =="
}

case "$what" in
  asan) run_asan ;;
  tsan) run_tsan ;;
  all)
    run_asan
    run_tsan
    ;;
esac
exit "$status"
