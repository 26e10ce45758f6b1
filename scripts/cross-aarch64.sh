#!/usr/bin/env bash
# Apple silicon is arm64, and CI machines are x86-64: this cross-builds the
# unit tests for aarch64 Linux (g++-aarch64-linux-gnu, in build-aarch64/) and
# runs them under qemu-user, so the NEON paths of the kernels are compiled
# and exercised. Installs what is missing first (Debian/Ubuntu, as root or
# through sudo): the cross compiler, qemu, and libsodium and GoogleTest for
# arm64 from Debian multiarch. Exit status non-zero when a test fails.
#   scripts/cross-aarch64.sh [GTEST_FILTER]   (default: every test but those
#                                              excluded below)
set -euo pipefail
cd "$(dirname "$0")/.."
build="build-aarch64"
triplet=aarch64-linux-gnu
sysroot=/usr/$triplet

# Build machine: compiler, emulator, build tools, header-only nlohmann-json,
# the verbs header (arch-independent; the ibverbs provider is built when it
# is there, as on the host). hwloc is left out: optional, and under qemu it
# would describe the x86-64 host anyway.
host_packages=(g++-aarch64-linux-gnu qemu-user cmake ninja-build pkg-config
  nlohmann-json3-dev libibverbs-dev)
# Target: the libraries the unit tests link, built by Debian for arm64.
arm64_packages=(libsodium-dev:arm64 libgtest-dev:arm64)

source scripts/lib/as_root.sh

if ! command -v dpkg-query >/dev/null; then
  echo "cross-aarch64: needs Debian/Ubuntu (dpkg multiarch, apt-get)" >&2
  exit 1
fi
missing=()
for p in "${host_packages[@]}" "${arm64_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "cross-aarch64: installing ${missing[*]}"
  # The arm64 packages need arm64 in dpkg's architectures, and apt's lists
  # of arm64 packages, which the update after it fetches.
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    as_root dpkg --add-architecture arm64
  fi
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
werror=OFF
if [ "${MCL_WERROR:-0}" = 1 ] || [ "${CI:-}" = true ]; then werror=ON; fi
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)

# -O2 as in the RelWithDebInfo build (the kernels' loops are shaped for what
# GCC vectorizes at -O2), without -g: debug info is 40% of the compile time.
# Unity: the files with an arm64 branch (the kernels) compile alone
# (cmake/unity.cmake). Its output goes to a log, shown on failure: hwloc's
# absence is expected.
source scripts/lib/ccache.sh
use_ccache aarch64
mkdir -p "$build"
cmake -S . -B "$build" "${generator[@]}" \
  -DCMAKE_UNITY_BUILD=ON ${ccache_cmake[@]+"${ccache_cmake[@]}"} \
  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/$triplet.cmake \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
  -DMCL_BUILD_PERF=OFF -DMCL_BUILD_PYTHON=OFF -DMCL_BUILD_TESTS=ON \
  -DMCL_WERROR="$werror" \
  >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 1; }
# Only the unit tests (the kernels' tests among them): the integration tests
# start real processes talking over sockets and shared memory.
cmake --build "$build" -j "$jobs" --target mcl-unit-tests
ccache_summary aarch64

# Excluded under qemu, for qemu's sake (they pass on real arm64):
#  - RunCommand.MissingProgramIsNotStarted: qemu-user runs the
#    clone(CLONE_VM|CLONE_VFORK) of glibc's posix_spawn as a plain fork, so
#    the child cannot hand a failed exec back to the parent: posix_spawn
#    succeeds and the child exits 127.
excluded=RunCommand.MissingProgramIsNotStarted
filter=${1:-"-$excluded"}

# As CMAKE_CROSSCOMPILING_EMULATOR in the toolchain file (which says why).
qemu=$(command -v qemu-aarch64 || command -v qemu-aarch64-static)
run=("$qemu" -L "$sysroot" -E "LD_LIBRARY_PATH=$sysroot/lib"
  "$build/tests/unit/mcl-unit-tests" --gtest_brief=1
  "--gtest_filter=$filter")

# Emulated, the tests take minutes on one core: one gtest shard per core.
# timeout: a hang must fail the run, not hold CI until its own limit.
shards=$jobs
pids=()
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
    timeout 1200 "${run[@]}" >"$build/unit-tests.$i.log" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < shards; i++)); do
  if ! wait "${pids[$i]}"; then
    status=1
    echo "== shard $i of $shards failed ($build/unit-tests.$i.log) ==" >&2
    cat "$build/unit-tests.$i.log" >&2
  fi
done

# gtest's closing lines: "[==========] 570 tests from 50 test suites ran.",
# "[  PASSED  ] 567 tests.", "[  SKIPPED ] 3 tests." (--gtest_brief prints
# no count of failures: they are the rest).
count() {
  sed -n "s/^\[$1\] \([0-9]*\) tests\{0,1\}[ .,].*/\1/p" \
    "$build"/unit-tests.*.log | awk '{n += $1} END {print n + 0}'
}
ran=$(count ==========)
passed=$(count "  PASSED  ")
skipped=$(count "  SKIPPED ")
failed=$((ran - passed - skipped))
grep -h "^half conversion:" "$build"/unit-tests.*.log || true
# The point of the exercise: the kernels took their arm64 paths.
if [ -z "${1:-}" ] &&
  ! grep -qx "half conversion: neon, kernels: neon" "$build"/unit-tests.*.log; then
  echo "cross-aarch64: the kernels did not report their NEON paths" >&2
  status=1
fi
# A shard that crashed has no closing lines: its exit status failed the run.
if [ "$passed" -eq 0 ] || [ "$failed" -ne 0 ]; then status=1; fi
echo "aarch64: $passed passed, $failed failed, $skipped skipped"
exit "$status"
