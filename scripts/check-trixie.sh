#!/usr/bin/env bash
# Builds and tests mcl with today's compilers, in a Debian 13 (trixie) root
# made with debootstrap (cached; needs root), warnings as errors:
#   gcc    GCC 14 with libstdc++ (build-gcc14/): library, mcl-perf and
#          every test; the unit tests run.
#   libcxx clang 19 with LLVM libc++ 19 (build-libcxx/), the standard library
#          Apple's toolchain ships, and with AddressSanitizer +
#          UndefinedBehaviorSanitizer + LeakSanitizer: this is the ASan run
#          of scripts/sanitize.sh asan (every unit and integration test, the
#          library and tests built as there, GoogleTest built with libc++
#          too), so that one build and one run cover both (mcl-perf and the
#          rest of the tree compile with libc++ in the include check's tree
#          and the macOS check). Then clang-tidy 19's misc-include-cleaner
#          over the whole tree, file by file (build-includes/, configured
#          only): every standard header a file uses is included by that
#          file (.clang-tidy-includes).
#   Both compilers build unity (batches of files as one; files with a
#   platform branch alone, cmake/unity.cmake): README's build and the
#   include check see every file on its own.
#   python `pip wheel .` with GCC 14 for Python 3.13, installed in a venv
#          beside Debian 13's NumPy 2 and PyTorch 2, and every Python test
#          run against it (scripts/check-pip.sh full).
#   includes only the include check (MCLBUILD_INCLUDE_CHECK_ONLY=REGEX: only
#          the files whose path matches, scripts/lib/missing-includes.sh).
#   prepare only makes the Debian 13 root (CI makes it in the background
#          while its first stages run: it mostly waits on the network).
#   scripts/check-trixie.sh [gcc|libcxx|includes|python|all|prepare]
#   (default all)
# MCLBUILD_CACHE_DIR: where the trixie root is kept (default /var/cache/mcl).
# MCLBUILD_CCACHE_DIR (CI sets it): ccache's caches, one per build
# (scripts/lib/ccache.sh), mounted into the root; the include check keeps
# what it found clean in MCLBUILD_CACHE_DIR/include-check.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in
  gcc | libcxx | includes | python | all | prepare) ;;
  *)
    echo "usage: $0 [gcc|libcxx|includes|python|all|prepare]" >&2
    exit 2
    ;;
esac
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then exec sudo -E "$0" "$@"; fi
  echo "check-trixie: needs root (debootstrap, chroot, mounts)" >&2
  exit 1
fi
source scripts/lib/as_root.sh
as_root_apt_install debootstrap

cache=${MCLBUILD_CACHE_DIR:-/var/cache/mcl}
chroot_dir=$cache/trixie
mirror=${MCLBUILD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(g++ clang libc++-dev libc++abi-dev cmake ninja-build pkg-config
  libsodium-dev libgtest-dev libgmock-dev googletest libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libhwloc-dev libibverbs-dev python3
  python3-dev python3-numpy pybind11-dev libdlpack-dev ca-certificates clang-tidy
  python3-torch libtorch-dev python3-pytest python3-venv python3-pip python3-setuptools
  python3-wheel python3-pybind11 binutils ccache libclang-rt-19-dev)
stamp="$chroot_dir/.mcl-packages"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "${packages[*]}" ]; then
  if [ ! -x "$chroot_dir/usr/bin/apt-get" ]; then
    echo "check-trixie: debootstrap trixie into $chroot_dir"
    rm -rf "$chroot_dir"
    debootstrap --variant=minbase trixie "$chroot_dir" "$mirror" >/dev/null
  fi
  chroot "$chroot_dir" apt-get update -qq
  chroot "$chroot_dir" env DEBIAN_FRONTEND=noninteractive apt-get install \
    -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  echo "${packages[*]}" >"$stamp"
fi
if [ "$what" = prepare ]; then
  echo "check-trixie: the Debian 13 root is ready in $chroot_dir"
  exit 0
fi

# The tree is bound at /mcl; shared memory and /proc as on the host.
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT
mkdir -p "$chroot_dir/mcl" "$chroot_dir/proc" "$chroot_dir/dev/shm"
mount --bind "$(pwd)" "$chroot_dir/mcl" && mounted+=("$chroot_dir/mcl")
mount -t proc proc "$chroot_dir/proc" && mounted+=("$chroot_dir/proc")
mount -t tmpfs -o size=8g tmpfs "$chroot_dir/dev/shm" &&
  mounted+=("$chroot_dir/dev/shm")
# The caches of ccache and of the include check, outside the root.
ccache_env=""
if [ -n "${MCLBUILD_CCACHE_DIR:-}" ] && [ "${MCLBUILD_CCACHE:-1}" != 0 ]; then
  mkdir -p "$MCLBUILD_CCACHE_DIR" "$chroot_dir/ccache"
  mount --bind "$MCLBUILD_CCACHE_DIR" "$chroot_dir/ccache" &&
    mounted+=("$chroot_dir/ccache")
  ccache_env="MCLBUILD_CCACHE_DIR=/ccache CCACHE_BASEDIR=/mcl"
fi
mkdir -p "$cache/include-check" "$chroot_dir/include-check-cache"
mount --bind "$cache/include-check" "$chroot_dir/include-check-cache" &&
  mounted+=("$chroot_dir/include-check-cache")
for dev in null zero urandom random; do
  [ -e "$chroot_dir/dev/$dev" ] || { touch "$chroot_dir/dev/$dev" &&
    mount --bind "/dev/$dev" "$chroot_dir/dev/$dev" &&
    mounted+=("$chroot_dir/dev/$dev"); }
done

in_trixie() {
  chroot "$chroot_dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 MCLBUILD_CCACHE="${MCLBUILD_CCACHE:-1}" $ccache_env \
    MCLBUILD_INCLUDE_CHECK_CACHE=/include-check-cache \
    bash -euo pipefail -c "cd /mcl && source scripts/lib/ccache.sh && $1"
}
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
# run_tests BUILD LABELS: CTest's summary, or the failures' output at the end.
run_tests() {
  if in_trixie "ctest --test-dir $1 -L '$2' -j $jobs --timeout 600 \
    --output-on-failure >$1/ctest.log 2>&1"; then
    grep -E 'tests passed|Total Test time' "$1/ctest.log"
  else
    grep -B2 -A40 -E '\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception' "$1/ctest.log" | tail -n 150
    tail -n 15 "$1/ctest.log"
    echo "check-trixie: tests failed in $1 (whole log: $1/ctest.log)" >&2
    exit 1
  fi
}
common="-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCL_WERROR=ON -DMCL_BUILD_TESTS=ON"

if [ "$what" = gcc ] || [ "$what" = all ]; then
  start=$SECONDS
  echo "== trixie: $(in_trixie 'g++ --version | head -1') =="
  # The Python module is built by the python stage, as pip builds it.
  # -O2 as users build (GCC's flow warnings depend on it), without debug
  # information: a third of the compile time, and nothing here debugs.
  in_trixie "use_ccache trixie-gcc14 &&
    cmake -S . -B build-gcc14 $common -DCMAKE_C_COMPILER=gcc \
    -DCMAKE_CXX_COMPILER=g++ -DMCL_BUILD_PYTHON=OFF -DCMAKE_UNITY_BUILD=ON \
    \${ccache_cmake[@]+\"\${ccache_cmake[@]}\"} \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO='-O2 -g0 -DNDEBUG' \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 -g0 -DNDEBUG' >/dev/null &&
    cmake --build build-gcc14 -j $jobs && ccache_summary trixie-gcc14"
  echo "== trixie GCC: built in $((SECONDS - start)) s =="
  run_tests build-gcc14 unit
  echo "== trixie GCC: built and unit-tested in $((SECONDS - start)) s =="
fi

# clang 19 with libc++: the libc++ build and the include check's tree. C++
# libraries must share the standard library of the code they link with:
# GoogleTest (its source ships in Debian) is built with libc++ into the
# build tree, once.
deps=/mcl/build-libcxx/deps
libcxx="-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS=-stdlib=libc++ -DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++ \
  -DCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++"
# -O1: the tests run in reasonable time, the build takes less.
libcxx_tree="$common $libcxx -DCMAKE_C_FLAGS_RELWITHDEBINFO='-O1 -g0' \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O1 -g0' \
  -DCMAKE_PREFIX_PATH=$deps -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON \
  -DMCL_BUILD_PYTHON=OFF -DMCL_BUILD_FUZZERS=ON \
  -DMCL_FUZZ_OBJECTS_ONLY=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON"
libcxx_deps() {
  in_trixie "[ -f $deps/.complete ] || {
    cmake -S /usr/src/googletest -B build-libcxx/gtest -G Ninja $libcxx \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$deps >/dev/null &&
    cmake --build build-libcxx/gtest -j $jobs >/dev/null &&
    cmake --install build-libcxx/gtest >/dev/null &&
    touch $deps/.complete; }"
}

if [ "$what" = libcxx ] || [ "$what" = all ]; then
  start=$SECONDS
  echo "== trixie: $(in_trixie 'clang --version | head -1') with libc++ and ASan =="
  libcxx_deps
  # The fuzz targets stay in the host's ASan tree (scripts/fuzz.sh).
  in_trixie "MCL_WERROR=1 MCLBUILD_SANITIZE_TREE=build-libcxx \
    MCLBUILD_SANITIZE_CCACHE=trixie-libcxx-asan MCLBUILD_SANITIZE_FUZZERS=0 \
    MCLBUILD_SANITIZE_CMAKE='$libcxx -DCMAKE_PREFIX_PATH=$deps \
      -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON' \
    scripts/sanitize.sh asan"
  # ldd's output is taken whole first: with pipefail, grep -q leaving at the
  # first match can kill ldd with SIGPIPE and fail the pipeline at random.
  in_trixie "libs=\$(ldd build-libcxx/tests/unit/mcl-unit-tests) &&
    grep -q 'libc++.so' <<<\"\$libs\" && ! grep -q 'libstdc++' <<<\"\$libs\"" || {
    echo "check-trixie: the libc++ build is not linked with libc++ alone" >&2
    exit 1
  }
  echo "== trixie libc++ with ASan: built and tested in $((SECONDS - start)) s =="
fi

if [ "$what" = libcxx ] || [ "$what" = all ] || [ "$what" = includes ]; then
  start=$SECONDS
  libcxx_deps
  in_trixie "MCLBUILD_INCLUDE_CHECK_ONLY='${MCLBUILD_INCLUDE_CHECK_ONLY:-}' \
    cmake -S . -B build-includes $libcxx_tree >/dev/null &&
    MCLBUILD_INCLUDE_CHECK_ONLY='${MCLBUILD_INCLUDE_CHECK_ONLY:-}' \
    scripts/lib/missing-includes.sh build-includes"
  echo "== includes: checked in $((SECONDS - start)) s =="
fi

if [ "$what" = python ] || [ "$what" = all ]; then
  start=$SECONDS
  in_trixie "scripts/check-pip.sh full"
  echo "== trixie Python: built, installed and tested in $((SECONDS - start)) s =="
fi
