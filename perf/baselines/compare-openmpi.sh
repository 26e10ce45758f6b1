#!/usr/bin/env bash
# Side by side: mcl-perf allreduce and OpenMPI's MPI_Allreduce (Debian
# openmpi-bin) with NP local ranks (default 2), same sizes, interleaved
# ROUNDS times, and the median of each. Needs mpicc (libopenmpi-dev) and a
# build of mcl-perf.
#   NP=4 PERF_ARGS="--transport tcp" perf/baselines/compare-openmpi.sh [ROUNDS] [MAXBYTES] [shm|tcp]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
max=${2:-33554432}
btl=${3:-shm}
np=${NP:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -O2 perf/baselines/mpi_allreduce.c -o "$work/mpi_allreduce"
case $btl in
  shm) mca=(--mca btl self,vader) ;;
  tcp) mca=(--mca btl self,tcp --mca btl_tcp_if_include lo) ;;
esac
for r in $(seq "$rounds"); do
  # Checked (-c 1): the table of the first round is printed in full below.
  build/bin/mcl-perf allreduce -np "$np" -b 8 -e "$max" -f "${FACTOR:-4}" -c 1 \
    ${PERF_ARGS:-} | tee "$work/table.$r" |
    awk '$1 ~ /^[0-9]+$/ {print $1, $6}' > "$work/mcl.$r"
  mpirun --allow-run-as-root --oversubscribe -np "$np" "${mca[@]}" \
    "$work/mpi_allreduce" 8 "$max" "${FACTOR:-4}" 20 5 > "$work/mpi.$r"
done
echo "== mcl-perf, round 1 =="
grep -v '^$' "$work/table.1"
echo "== medians of $rounds interleaved rounds, mcl-perf vs OpenMPI =="
python3 perf/baselines/median_table.py "$work" "$rounds" "$np" mpi
