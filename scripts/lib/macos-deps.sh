#!/usr/bin/env bash
# Builds the dependencies of mcl for arm64 macOS with the Zig toolchain
# (cmake/toolchains/arm64-macos-zig.cmake) into CACHE/macos-deps-<key> and
# prints that prefix; a prefix that is complete is reused. GoogleTest from
# the source Debian's libgtest-dev ships, Google Benchmark, libsodium and
# hwloc from Debian's source packages (static libraries), nlohmann/json's
# and CLI11's headers. Used by scripts/check-macos.sh; MCLBUILD_ZIG names zig.
#   scripts/lib/macos-deps.sh CACHE TOOLCHAIN_FILE
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
source scripts/lib/as_root.sh
cache=$1
toolchain=$2
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
exec 3>&1 1>&2  # progress to stderr, the prefix alone to stdout

# Keyed by the toolchain's files and the source versions: a change to either
# builds them again.
key=$( (cat "$toolchain" cmake/toolchains/zig-macos/* "$0";
  "$MCLBUILD_ZIG" version) | sha256sum | cut -c1-12)
deps=$cache/macos-deps-$key
# Complete, and where it was built: pkg-config's files name their prefix
# (or its lib and include folders), so a cache directory that was moved
# must be built again, not used. (No grep -q: its early exit could end the
# first grep by SIGPIPE, which pipefail reads as a mismatch found.)
usable() {
  [ -f "$deps/.complete" ] || return 1
  local pc
  for pc in "$deps"/lib/pkgconfig/*.pc; do
    if grep -oE "[^[:space:]=]*/macos-deps-$key" "$pc" |
      grep -vxF "$deps" >/dev/null; then
      return 1
    fi
  done
}
if ! usable; then
  echo "check-macos: building the dependencies for macOS into $deps"
  command -v ninja >/dev/null && generator=(-G Ninja) || generator=()
  src=$(mktemp -d)
  rm -rf "$deps" && mkdir -p "$deps"
  # Each step's output goes to a log, shown only when the step fails (the
  # configure scripts' probes print errors that are no failure).
  log=$src/build.log
  quiet() {
    "$@" >>"$log" 2>&1 || {
      tail -n 40 "$log" >&2
      echo "macos-deps: failed: $*" >&2
      exit 1
    }
  }
  # Debian's source packages, without touching the system's apt sources.
  apt_dir=$src/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  echo "deb-src http://deb.debian.org/debian bookworm main" >"$apt_dir/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root -qq)
  quiet apt-get "${apt_opts[@]}" update
  (cd "$src" && quiet apt-get "${apt_opts[@]}" source --download-only \
    libsodium benchmark hwloc &&
    for t in ./*.orig.tar.*; do tar xf "$t"; done)
  sodium_src=$(echo "$src"/libsodium-*/)
  benchmark_src=$(echo "$src"/benchmark-*/)
  hwloc_src=$(echo "$src"/hwloc-*/)

  cmake_deps=(-DCMAKE_TOOLCHAIN_FILE="$toolchain" -DMCL_MACOS_DEPS="$deps"
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$deps"
    -DCMAKE_INSTALL_LIBDIR=lib "${generator[@]}")
  # GoogleTest: Debian's libgtest-dev carries its source.
  [ -d /usr/src/googletest ] || as_root_apt_install googletest
  quiet cmake -S /usr/src/googletest -B "$src/gtest" "${cmake_deps[@]}"
  quiet cmake --build "$src/gtest" -j "$jobs"
  quiet cmake --install "$src/gtest"
  quiet cmake -S "$benchmark_src" -B "$src/benchmark" "${cmake_deps[@]}" \
    -DBENCHMARK_ENABLE_TESTING=OFF -DBENCHMARK_ENABLE_WERROR=OFF
  quiet cmake --build "$src/benchmark" -j "$jobs"
  quiet cmake --install "$src/benchmark"
  # C libraries (autotools), static: libmcl.dylib takes what it uses.
  configure=(--host=aarch64-apple-darwin --prefix="$deps" --disable-shared
    --enable-static CC="$root/cmake/toolchains/zig-macos/cc"
    AR="$root/cmake/toolchains/zig-macos/ar"
    RANLIB="$root/cmake/toolchains/zig-macos/ranlib" CFLAGS=-O2)
  # Debian's libsodium source is the git tree: configure comes from autogen.
  as_root_apt_install autoconf automake libtool
  (cd "$sodium_src" && quiet ./autogen.sh -s &&
    quiet ./configure "${configure[@]}" && quiet make -j "$jobs" &&
    quiet make install)
  (cd "$hwloc_src" && quiet ./configure "${configure[@]}" --disable-libxml2 \
    --disable-cairo --disable-pci --disable-opencl --disable-cuda \
    --disable-nvml --disable-rsmi --disable-levelzero --disable-gl \
    --disable-libudev --disable-plugin-dlopen --disable-io &&
    quiet make -j "$jobs" && quiet make install)
  # nlohmann/json and CLI11: header-only, the same on every platform.
  as_root_apt_install libcli11-dev
  mkdir -p "$deps/include" "$deps/share/cmake"
  cp -r /usr/include/nlohmann /usr/include/CLI "$deps/include/"
  cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 \
    "$deps/share/cmake/"
  rm -rf "$src"
  touch "$deps/.complete"
fi
echo "$deps" >&3
