#!/usr/bin/env bash
# Installs the build into a temporary prefix and checks a program links
# against it through find_package(mcl) and through pkg-config; builds
# examples/c and examples/cpp against it both ways and runs each with 2
# ranks; checks the library's exports and SONAME.
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

# The examples, as a user builds them: CMake's find_package(mcl), and a
# bare compiler command with pkg-config; each run as a job of 2 ranks.
run_two_ranks() {
  local program=$1 port secret pids=() status=0
  port=$((20000 + RANDOM % 12000))
  secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  for rank in 0 1; do
    LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64" MCL_RANK=$rank \
      MCL_WORLD_SIZE=2 MCL_ROOT="127.0.0.1:$port" MCL_SECRET="$secret" \
      MCL_TIMEOUT=30 timeout 60 "$program" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  if [ "$status" != 0 ]; then
    echo "$program failed with 2 ranks" >&2
    exit 1
  fi
}
for lang in c cpp; do
  flags=(-DCMAKE_C_FLAGS="-Wall -Wextra -Werror")
  [ "$lang" = cpp ] && flags=(-DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror")
  cmake -S "examples/$lang" -B "$work/example-$lang" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release "${flags[@]}" \
    >/dev/null
  cmake --build "$work/example-$lang" >/dev/null
  echo "examples/$lang, built with find_package(mcl):"
  run_two_ranks "$work/example-$lang/allreduce"
done
cc -Wall -Wextra -Werror examples/c/allreduce.c -o "$work/allreduce-c-pc" \
  $(pkg-config --cflags --libs mcl)
echo "examples/c, built with pkg-config:"
run_two_ranks "$work/allreduce-c-pc"
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror examples/cpp/allreduce.cpp \
  -o "$work/allreduce-cpp-pc" $(pkg-config --cflags --libs mcl)
echo "examples/cpp, built with pkg-config:"
run_two_ranks "$work/allreduce-cpp-pc"

# Only mcl* symbols are exported, and the library carries its ABI version.
lib=$(ls "$prefix"/lib*/libmcl.so.* | head -n1)
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" != "libmcl.so.$(sed -n 's/^project(mcl VERSION \([0-9]*\).*/\1/p' CMakeLists.txt)" ]; then
  echo "libmcl's SONAME is '$soname'" >&2
  exit 1
fi
echo "SONAME $soname"
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^mcl' || true)
if [ -n "$others" ]; then
  echo "libmcl exports symbols outside mcl*:" >&2
  echo "$others" >&2
  exit 1
fi
# MLX's library: installed beside libmcl, which it finds there by itself
# (no LD_LIBRARY_PATH: MLX's users set MLX_MPI_LIBNAME alone), exporting
# Open MPI's names that MLX loads and nothing else.
mlx=$(ls "$prefix"/lib*/libmcl_mpi.so)
if ldd "$mlx" | grep -q 'libmcl.so.* => not found'; then
  echo "libmcl_mpi does not find libmcl beside it" >&2
  exit 1
fi
foreign=$(nm -D --defined-only "$mlx" | awk '{print $3}' |
  grep -Ev '^(MPI_|ompi_mpi_)' || true)
if [ -n "$foreign" ]; then
  echo "libmcl_mpi exports symbols MLX does not load:" >&2
  echo "$foreign" >&2
  exit 1
fi
echo "libmcl_mpi: $(nm -D --defined-only "$mlx" | wc -l) symbols, libmcl found beside it"
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
try:
    import torch
    import torch.distributed as dist
except ImportError:
    print("no PyTorch here: mcl.torch not tried")
else:
    import tempfile, os
    import mcl.torch
    # The store is in a directory only this user can enter (mkdtemp: 0700).
    mcl.torch.allow_secret_in_store()
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("mcl", rank=0, world_size=1,
                                init_method="file://" + os.path.join(tmp, "s"))
        t = torch.arange(4.0)
        dist.all_reduce(t)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0], t
        dist.destroy_process_group()
    print("mcl.torch: the installed backend runs torch.distributed")
PY
elif grep -q '^MCL_BUILD_PYTHON:STRING=ON' build/CMakeCache.txt; then
  echo "the Python package was not installed" >&2
  exit 1
fi
# nccl-tests' names for mcl-perf, installed as links: each runs its
# benchmark as nccl-tests' program of that name would.
if [ -x "$prefix/bin/mcl-perf" ]; then
  for name in all_reduce_perf all_gather_perf broadcast_perf reduce_perf \
      reduce_scatter_perf alltoall_perf sendrecv_perf; do
    out=$(LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64" "$prefix/bin/$name" \
      -np 2 -b 1K -e 1K -n 2 -w 1 -g 1 -t 1)
    grep -q "Out of bounds values : 0 OK" <<<"$out" ||
      { echo "$name did not run its benchmark:" >&2; echo "$out" >&2; exit 1; }
  done
  echo "nccl-tests' program names run their benchmarks"
fi
echo "install OK"
