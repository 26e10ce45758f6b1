#!/usr/bin/env bash
# The layers hold (docs/architecture.md), on the build and on the sources:
# - compiled as src/CMakeLists.txt compiles each layer and each folder of
#   core (its view of src/ in build/src/layers/<unit>), a header of the unit
#   itself and of every unit below is found, and one of any unit above is
#   not;
# - a concrete transport's header (transports/shm|tcp|rdma/) is found from
#   the transports layer and core/registry alone: anywhere else it stops
#   the build with a message saying where such code belongs;
# - every include of every source under src/ keeps those rules, and the
#   Python bindings include nothing of src/ (they see include/mcl/ alone),
#   each breach named with its file and line and where the code belongs;
# - no function of core is over 80 lines (function_lengths.py).
# Run by CTest as `layers`.
#   check_layers.sh <c++ compiler> <source dir> <build dir>
set -euo pipefail
cxx=$1 source=$2 build=$3
# Lowest first, as src/CMakeLists.txt builds them: a unit sees those before
# it.
units=(platform base topology transports algorithms core/registry core/params
  core/bootstrap core/liveness core/comm core/run core/init core/api)
declare -A header=(
  [platform]=platform/socket.h [base]=base/error.h
  [topology]=topology/cluster.h [transports]=transports/device.h
  [algorithms]=algorithms/context.h
  [core/registry]=core/registry/transport_registry.h
  [core/params]=core/params/params.h [core/bootstrap]=core/bootstrap/unique_id.h
  [core/liveness]=core/liveness/peer_watch.h [core/comm]=core/comm/comm.h
  [core/run]=core/run/execute.h [core/init]=core/init/comm_init.h
  [core/api]=core/api/api_guard.h)
concrete_probe=transports/shm/shm_device.h
concealed="only core/registry/ may include a concrete transport's header"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
view_of() { echo "$build/src/layers/${1//\//-}"; }
# preprocess VIEW HEADER: prints the compiler's messages; status 0 if found.
preprocess() {
  printf '#include "%s"\n' "$2" |
    "$cxx" -std=c++20 -E -x c++ -I "$source/include" -I "$1" - 2>&1 >/dev/null
}
position() {
  local i
  for i in "${!units[@]}"; do [ "${units[$i]}" = "$1" ] && echo "$i" && return; done
  echo -1
}
sees_concrete() { [ "$1" = transports ] || [ "$1" = core/registry ]; }

# 1. The build's views.
for i in "${!units[@]}"; do
  unit=${units[$i]}
  view=$(view_of "$unit")
  if [ ! -d "$view" ]; then
    fail "no view of $unit in $view: src/CMakeLists.txt and this list differ"
    continue
  fi
  for j in "${!units[@]}"; do
    other=${units[$j]}
    found=$(preprocess "$view" "${header[$other]}" >/dev/null && echo yes || echo no)
    want=$([ "$j" -le "$i" ] && echo yes || echo no)
    [ "$found" = "$want" ] ||
      fail "$unit sees ${header[$other]}: $found (expected $want)"
  done
  [ "$i" -lt "$(position transports)" ] && continue
  if messages=$(preprocess "$view" "$concrete_probe"); then
    sees_concrete "$unit" || fail "$unit sees $concrete_probe"
  elif sees_concrete "$unit"; then
    fail "$unit does not see $concrete_probe: $messages"
  elif ! grep -q "$concealed" <<<"$messages"; then
    fail "$unit: including $concrete_probe fails without saying where such code belongs: $messages"
  fi
done

# 2. The sources' includes. A file's unit: its layer, or core's folder.
unit_of() {
  case "$1" in
    core/*/*) echo "${1%%/*}/$(cut -d/ -f2 <<<"$1")" ;;
    *) echo "${1%%/*}" ;;
  esac
}
while IFS= read -r file; do
  relative=${file#"$source/src/"}
  mine=$(unit_of "$relative")
  me=$(position "$mine")
  if [ "$me" -lt 0 ]; then
    fail "src/$relative is in no layer or folder of core (src/CMakeLists.txt)"
    continue
  fi
  while IFS=: read -r line included; do
    target=$(unit_of "$included")
    there=$(position "$target")
    [ "$there" -lt 0 ] && continue # mcl/mcl.h, a library's header
    if [ "$there" -gt "$me" ]; then
      fail "src/$relative:$line includes $included: $mine may include only" \
        "its own and lower units (${units[*]:0:me+1})"
    elif [[ "$included" =~ ^transports/(shm|tcp|rdma)/ ]] &&
      ! sees_concrete "$mine"; then
      fail "src/$relative:$line includes $included: $concealed; what" \
        "$mine needs from it goes behind transport::Device" \
        "(transports/device.h) or a hook of its TransportEntry" \
        "(core/registry/transport_registry.h)"
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
    sed -E 's/^([0-9]+):.*"([^"]+)".*/\1:\2/')
done < <(find "$source/src" -name '*.cpp' -o -name '*.h' | sort)

# 3. The Python bindings: include/mcl/ and their own headers alone.
while IFS= read -r hit; do
  fail "${hit#"$source/"}: the bindings see include/mcl/ alone (mcl.h's" \
    "C API); what they need from inside goes into that API first"
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(platform|base|topology|transports|algorithms|core)/' \
  "$source/bindings" --include='*.cpp' --include='*.h' || true)

# 4. Core's functions: none over 80 lines.
if ! python3 "$(dirname "$0")/function_lengths.py" 80 \
  $(find "$source/src/core" -name '*.cpp' -o -name '*.h' | sort); then
  failures=$((failures + 1))
fi

if [ "$failures" -eq 0 ]; then
  echo "layers OK: each layer and folder of core sees itself and those below," \
    "none above; only core/registry/ names a concrete transport; the" \
    "bindings see include/mcl/ alone; no function of core is over 80 lines"
fi
exit "$((failures > 0))"
