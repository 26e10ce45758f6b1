#!/usr/bin/env bash
# Side by side: mcl-perf allreduce over mcl's TCP transport and Gloo's ring
# all-reduce over Gloo's TCP transport (Debian libgloo-dev), both on loopback
# with NP local ranks (default 2), same sizes, interleaved ROUNDS times, and
# the median of each. Needs g++, libgloo-dev and a build of mcl-perf. Every
# Gloo rank runs under `timeout GLOO_TIMEOUT` (seconds, default 120).
#   NP=2 PERF_ARGS="--bind none" perf/baselines/compare-gloo.sh [ROUNDS] [MAXBYTES]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
max=${2:-33554432}
np=${NP:-2}
limit=${GLOO_TIMEOUT:-120}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
g++ -O2 -std=c++17 perf/baselines/gloo_allreduce.cpp \
  -o "$work/gloo_allreduce" -lgloo -pthread
for r in $(seq "$rounds"); do
  build/bin/mcl-perf allreduce -np "$np" -b 8 -e "$max" -f "${FACTOR:-4}" -c 0 \
    --transport tcp ${PERF_ARGS:-} |
    awk '$1 ~ /^[0-9]+$/ {print $1, $6}' > "$work/mcl.$r"
  store="$work/store.$r"
  mkdir "$store"
  pids=()
  for rank in $(seq 0 $((np - 1))); do
    out=/dev/null
    [ "$rank" -eq 0 ] && out="$work/gloo.$r"
    timeout "$limit" "$work/gloo_allreduce" "$rank" "$np" "$store" \
      8 "$max" "${FACTOR:-4}" 20 5 > "$out" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do
    if ! wait "$p"; then
      echo "compare-gloo.sh: a gloo_allreduce rank failed or timed out" \
        "(round $r)" >&2
      exit 1
    fi
  done
  pids=()
done
python3 perf/baselines/median_table.py "$work" "$rounds" "$np" gloo
