# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: configures and builds
# the sanitized trees with clang when there is one (scripts/install-deps.sh
# installs it for the fuzzers; it compiles the ASan+UBSan build in about
# 55% of GCC's time).
#   sanitized_build asan|tsan TARGET...
#     asan  build-asan/: -fsanitize=address,undefined, and libFuzzer's
#           coverage on every object (with clang): the fuzz targets link here
#     tsan  build-tsan/: -fsanitize=thread
# -O1 -g1: fast enough to run, and line tables are all a report's stack
# needs. The library in unity batches (cmake/unity.cmake): a sanitizer sees
# the same code either way, in less compile time; README's per-file build
# catches what a batch would hide. The tests compile file by file here
# (tests/CMakeLists.txt says why). Without mcl-perf (it adds a fifth to the build) and the Python
# bindings (they would not load into an uninstrumented python3): the
# integration tests that run mcl-perf are left out of the build then.
# MCL_WERROR=1 (CI sets it) makes warnings errors, as in scripts/setup.sh.
# Another toolchain (scripts/check-trixie.sh builds the ASan tree with
# clang 19 and libc++ this way):
#   MCLBUILD_SANITIZE_TREE    the build directory (default build-KIND)
#   MCLBUILD_SANITIZE_CMAKE   more CMake arguments (compilers, flags)
#   MCLBUILD_SANITIZE_CCACHE  ccache's cache for it (default KIND)
#   MCLBUILD_SANITIZE_FUZZERS=0  no fuzz targets (nor their coverage)
source "$(dirname "${BASH_SOURCE[0]}")/ccache.sh"
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
# One per parser of outside input; tests/fuzz/CMakeLists.txt builds the same.
fuzz_targets=(topology_json system_profiler networksetup thunderbolt_sysfs
  bootstrap_messages tcp_wire shm_wire rdma_wire unique_id algo_spec
  socket_ifname init_details device_details macos_tools)

# sanitized_tree KIND: the build directory of KIND.
sanitized_tree() { echo "${MCLBUILD_SANITIZE_TREE:-build-$1}"; }

sanitized_build() {
  local kind=$1 start=$SECONDS sanitizers fuzzers=OFF
  shift
  local generator=() werror=OFF compiler=() more=() tree
  tree=$(sanitized_tree "$kind")
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  if [ "${MCL_WERROR:-0}" = 1 ] || [ "${CI:-}" = true ]; then werror=ON; fi
  if command -v clang++ >/dev/null; then
    compiler=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
  fi
  # Word-split on purpose: a list of -D arguments without spaces in them.
  # shellcheck disable=SC2206
  [ -n "${MCLBUILD_SANITIZE_CMAKE:-}" ] && more=($MCLBUILD_SANITIZE_CMAKE)
  case "$kind" in
    asan)
      sanitizers=address,undefined
      [ ${#compiler[@]} -gt 0 ] && [ "${MCLBUILD_SANITIZE_FUZZERS:-1}" != 0 ] &&
        fuzzers=ON
      ;;
    tsan) sanitizers=thread ;;
  esac
  if [ "$fuzzers" = OFF ]; then
    local wanted=() t
    for t in "$@"; do [[ "$t" == fuzz_* ]] || wanted+=("$t"); done
    set -- "${wanted[@]}"
  fi
  use_ccache "${MCLBUILD_SANITIZE_CCACHE:-$kind}"
  echo "== $tree: -fsanitize=$sanitizers =="
  cmake -S . -B "$tree" ${generator[@]+"${generator[@]}"} \
    ${compiler[@]+"${compiler[@]}"} ${more[@]+"${more[@]}"} \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DMCL_SANITIZE="$sanitizers" -DMCL_BUILD_FUZZERS="$fuzzers" \
    -DCMAKE_UNITY_BUILD=ON \
    -DMCL_BUILD_PERF=OFF -DMCL_BUILD_PYTHON=OFF -DMCL_BUILD_TESTS=ON \
    -DMCL_WERROR="$werror" ${ccache_cmake[@]+"${ccache_cmake[@]}"} >/dev/null
  cmake --build "$tree" -j "$jobs" --target "$@"
  echo "== $tree: built in $((SECONDS - start)) s; $(ccache_summary "$kind") =="
}
