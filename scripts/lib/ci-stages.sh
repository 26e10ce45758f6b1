# Sourced by .ci/run: stages, each timed, and at the end (also when a stage
# fails) a table of every stage's time, the total and the three slowest.
#   stage TITLE COMMAND...            runs a stage, in the foreground
#   stage_start NAME TITLE COMMAND... starts one in the background (its
#                                     output to a log, shown when it ends)
#   stage_wait NAME                   waits for it; fails CI when it failed
ci_titles=()
ci_seconds=()
ci_started=$SECONDS
declare -A ci_pid ci_log ci_title ci_since

stage() {
  local title=$1 start=$SECONDS status=0
  shift
  echo "== $title =="
  "$@" || status=$?
  ci_titles+=("$title")
  ci_seconds+=($((SECONDS - start)))
  echo "== took $((SECONDS - start)) s: $title =="
  if [ "$status" -ne 0 ]; then
    echo "CI: failed (exit status $status): $title" >&2
    exit "$status"
  fi
}

stage_start() {
  local name=$1 title=$2
  shift 2
  ci_log[$name]=$(mktemp)
  ci_title[$name]=$title
  ci_since[$name]=$SECONDS
  echo "== started in the background: $title =="
  "$@" >"${ci_log[$name]}" 2>&1 &
  ci_pid[$name]=$!
}

stage_wait() {
  local name=$1 status=0
  wait "${ci_pid[$name]}" || status=$?
  echo "== ${ci_title[$name]} (in the background) =="
  cat "${ci_log[$name]}"
  ci_titles+=("${ci_title[$name]} (background)")
  ci_seconds+=($((SECONDS - ci_since[$name])))
  echo "== took $((SECONDS - ci_since[$name])) s, in the background: ${ci_title[$name]} =="
  if [ "$status" -ne 0 ]; then
    echo "CI: failed (exit status $status): ${ci_title[$name]}" >&2
    exit "$status"
  fi
}

ci_summary() {
  local i
  echo
  echo "== CI stages, in seconds =="
  for i in "${!ci_titles[@]}"; do
    printf '%6d  %s\n' "${ci_seconds[$i]}" "${ci_titles[$i]}"
  done
  printf '%6d  total (%d min %02d s)\n' $((SECONDS - ci_started)) \
    $(((SECONDS - ci_started) / 60)) $(((SECONDS - ci_started) % 60))
  echo "== the three slowest =="
  for i in "${!ci_titles[@]}"; do
    printf '%6d  %s\n' "${ci_seconds[$i]}" "${ci_titles[$i]}"
  done | sort -rn | head -n 3
}
trap ci_summary EXIT
