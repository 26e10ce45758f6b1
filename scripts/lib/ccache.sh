# Sourced by the scripts that configure a build: ccache in front of its
# compilers, when ccache is there (scripts/install-deps.sh installs it).
#   use_ccache NAME    sets the array ccache_cmake (CMake's compiler
#                      launchers; empty without ccache or with MCLBUILD_CCACHE=0)
# MCLBUILD_CCACHE_DIR (CI sets it): each build NAME gets a cache of its own
# there, so builds with other compilers or flags never evict each other,
# and paths under the source tree are hashed relative to it, so that a new
# clone in another directory finds what the last one compiled. Without it
# ccache's own settings apply (~/.cache/ccache). A cache that ccache cannot
# read is emptied: a cache only ever costs time.
use_ccache() {
  local name=$1
  ccache_cmake=()
  [ "${MCLBUILD_CCACHE:-1}" = 0 ] && return 0
  command -v ccache >/dev/null || return 0
  if [ -n "${MCLBUILD_CCACHE_DIR:-}" ]; then
    export CCACHE_DIR=$MCLBUILD_CCACHE_DIR/$name
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)}
    export CCACHE_NOHASHDIR=1
    export CCACHE_MAXSIZE=${MCLBUILD_CCACHE_SIZE:-4G}
    mkdir -p "$CCACHE_DIR"
    if ! ccache --show-stats >/dev/null 2>&1; then
      echo "ccache: $CCACHE_DIR could not be read; emptied" >&2
      rm -rf "$CCACHE_DIR" && mkdir -p "$CCACHE_DIR"
    fi
    ccache --zero-stats >/dev/null 2>&1 || true
  fi
  ccache_cmake=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
}

# ccache_summary NAME: one line, how many compilations the cache answered.
ccache_summary() {
  [ ${#ccache_cmake[@]} -gt 0 ] || return 0
  local stats
  stats=$(ccache --print-stats 2>/dev/null) || return 0
  awk -v name="$1" -F'\t' '
    $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hit += $2 }
    $1 == "cache_miss" { miss += $2 }
    END { printf "ccache (%s): %d of %d compilations from the cache\n", name, hit, hit + miss }' <<<"$stats"
}
