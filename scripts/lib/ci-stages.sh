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
  # The subshell's SECONDS goes on from this shell's: at its end it says
  # when it finished, so its own time is told apart from the wait for it.
  {
    local status=0
    "$@" || status=$?
    echo "$SECONDS" >"${ci_log[$name]}.end"
    exit "$status"
  } >"${ci_log[$name]}" 2>&1 &
  ci_pid[$name]=$!
}

stage_wait() {
  local name=$1 status=0 waited=$SECONDS ended took
  wait "${ci_pid[$name]}" || status=$?
  waited=$((SECONDS - waited))
  echo "== ${ci_title[$name]} (in the background) =="
  cat "${ci_log[$name]}"
  ended=$(cat "${ci_log[$name]}.end" 2>/dev/null || echo "$SECONDS")
  took=$((ended - ci_since[$name]))
  # The total counts only the wait (waited); the stage's own time is shown.
  ci_titles+=("${ci_title[$name]} (in the background: $took s of its own)")
  ci_seconds+=("$waited")
  echo "== took $took s, in the background; waited for: $waited s: ${ci_title[$name]} =="
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
