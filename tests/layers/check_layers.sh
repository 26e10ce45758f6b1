#!/usr/bin/env bash
# The layers hold: compiled as src/CMakeLists.txt compiles each layer (its
# view of src/ in build/src/layers/<layer>), a header of the layer itself
# and of every layer below is found, and a header of any layer above is
# not. Run by CTest as `layers`.
#   check_layers.sh <c++ compiler> <source dir> <build dir>
set -euo pipefail
cxx=$1 source=$2 build=$3
layers=(platform base topology transports algorithms core)
declare -A header=(
  [platform]=platform/socket.h [base]=base/error.h
  [topology]=topology/cluster.h [transports]=transports/device.h
  [algorithms]=algorithms/context.h [core]=core/comm.h)
failures=0
for i in "${!layers[@]}"; do
  layer=${layers[$i]}
  view=$build/src/layers/$layer
  for j in "${!layers[@]}"; do
    other=${layers[$j]}
    if printf '#include "%s"\n' "${header[$other]}" |
      "$cxx" -std=c++20 -E -x c++ -I "$source/include" -I "$view" - \
        >/dev/null 2>&1; then
      found=yes
    else
      found=no
    fi
    want=$([ "$j" -le "$i" ] && echo yes || echo no)
    if [ "$found" != "$want" ]; then
      echo "FAIL: $layer sees ${header[$other]}: $found (expected $want)"
      failures=$((failures + 1))
    fi
  done
done
[ "$failures" -eq 0 ] && echo "layers OK: each sees itself and the layers below, none above"
exit "$failures"
