#!/usr/bin/env bash
# Runs Zig's clang as a compiler and linker for arm64 macOS (see
# ../arm64-macos-zig.cmake). Usage: zig-driver.sh c|c++|ar|ranlib ARGS...
#
# Compiling goes through `zig clang` with the target spelled out
# (arm64-apple-macos<deployment target>) and every system directory named:
# Zig's macOS 13 libc headers, its LLVM libc++ 16 headers and the shims of
# tests/macos/shim, nothing from the build machine's /usr/include. Unlike
# `zig c++`, this keeps libc++'s Apple availability annotations, so a call
# that needs a newer macOS than the deployment target is an error, as with
# Apple's clang. Linking goes through `zig c++`/`zig cc`, whose linker carries
# libSystem stubs and builds libc++ for the target.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
zig=${MCLBUILD_ZIG:?MCLBUILD_ZIG must name the zig executable}
zlib=$("$zig" env | sed -n 's/.*"lib_dir": "\(.*\)".*/\1/p')
shims="$here/../../../tests/macos/shim"
# MCLBUILD_MACOS_SDK_VERBS=0: an SDK older than 26.2, without the verbs header.
verbs_shim=()
if [ "${MCLBUILD_MACOS_SDK_VERBS:-1}" != 0 ]; then
  verbs_shim=(-isystem "$here/../../../tests/macos/shim-verbs")
fi
tool=$1
shift
case "$tool" in
  ar | ranlib) exec "$zig" "$tool" "$@" ;;
esac

target=${MCLBUILD_MACOS_TARGET:-14.4}
compile=0
for a in "$@"; do
  case "$a" in -c | -E | -S | -fsyntax-only | -M | -MM) compile=1 ;; esac
done

if [ "$compile" = 1 ]; then
  sys=(-nostdinc -isystem "$zlib/include"
    -isystem "$zlib/libc/include/aarch64-macos.13-none"
    -isystem "$zlib/libc/include/any-macos.13-any"
    -isystem "$zlib/libc/include/any-macos-any"
    -isystem "$shims" ${verbs_shim[@]+"${verbs_shim[@]}"})
  if [ "$tool" = c++ ]; then
    sys=(-nostdinc++ -isystem "$zlib/libcxx/include"
      -isystem "$zlib/libcxxabi/include" "${sys[@]}"
      -D_LIBCPP_ABI_VERSION=1 -D_LIBCPP_ABI_NAMESPACE=__1)
    exec "$zig" clang --driver-mode=g++ --target="arm64-apple-macos$target" \
      "${sys[@]}" "$@"
  fi
  exec "$zig" clang --target="arm64-apple-macos$target" "${sys[@]}" "$@"
fi

# Linking: Zig's libSystem stubs and libc headers (it builds libc++ for the
# target from them) are macOS 13's, so the link targets 13.0, and the
# symbols that macOS 14.4 added and mcl calls come from a text stub of
# libSystem beside the header shim (libSystem-os_sync.tbd). Zig sets the
# minimum version itself: drop the driver's spelling of it. Zig's linker has
# no -exported_symbols_list: the library's exports are checked after the
# link instead (check-macos.sh, against src/exports.macos).
args=()
skip=0
for a in "$@"; do
  if [ "$skip" -gt 0 ]; then skip=$((skip - 1)) && continue; fi
  case "$a" in
    # -v/-Wl,-v: CMake asks the linker for its version; Zig's has none.
    -mmacosx-version-min=* | --target=* | -arch | arm64 | -v | -Wl,-v) ;;
    -Wl,-exported_symbols_list,*) ;;
    -exported_symbols_list) skip=2 && unset 'args[${#args[@]}-1]' ;;
    *) args+=("$a") ;;
  esac
done
exec "$zig" "$tool" -target aarch64-macos.13.0 ${args[@]+"${args[@]}"} \
  "$shims/libSystem-os_sync.tbd"
