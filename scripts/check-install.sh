#!/usr/bin/env bash
# Installs the build into a temporary prefix and checks a program links
# against it through find_package(mcl) and through pkg-config.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install build --prefix "$prefix" >/dev/null

cat > "$work/main.c" <<'C'
#include <mcl/mcl.h>
#include <stdio.h>
int main(void) {
  int v = 0;
  if (mclGetVersion(&v) != mclSuccess || v != MCL_VERSION_CODE) return 1;
  printf("mcl %d linked\n", v);
  return 0;
}
C
cat > "$work/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(mcl REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE mcl::mcl)
CM
cmake -S "$work" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/build" >/dev/null
LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64" "$work/build/consumer"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib64/pkgconfig"
cc "$work/main.c" -o "$work/consumer-pc" $(pkg-config --cflags --libs mcl)
LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64" "$work/consumer-pc"

# Only mcl* symbols are exported.
lib=$(ls "$prefix"/lib*/libmcl.so.* | head -n1)
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^mcl' || true)
if [ -n "$others" ]; then
  echo "libmcl exports symbols outside mcl*:" >&2
  echo "$others" >&2
  exit 1
fi
# The Python package, where the install put it, imports and runs a
# one-rank all-reduce (when the build has the bindings).
python=$(sed -n 's/^MCL_PYTHON:FILEPATH=//p' build/CMakeCache.txt)
site=$(sed -n 's/^MCL_PYTHON_INSTALL_DIR:STRING=//p' build/CMakeCache.txt)
if [ -n "$python" ] && [ -n "$site" ] && [ -d "$prefix/$site/mcl" ]; then
  PYTHONPATH="$prefix/$site" "$python" - <<'PY'
import numpy, mcl
comm = mcl.init(0, 1, mcl.UniqueId())
assert (comm.all_reduce(numpy.arange(4.0)) == numpy.arange(4.0)).all()
comm.close()
print("python package", mcl.__version__, "imports from", mcl.__file__)
PY
elif grep -q '^MCL_BUILD_PYTHON:STRING=ON' build/CMakeCache.txt; then
  echo "the Python package was not installed" >&2
  exit 1
fi
echo "install OK"
