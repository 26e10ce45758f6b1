# Sourced by scripts/setup.sh and scripts/test.sh: configures build/ the
# same way for both (they differ only in what they build).
#   configure_build [CMAKE ARGS...]
# MCL_WERROR=1 (CI sets it) makes warnings errors; in CI the Python
# bindings must build (elsewhere they are skipped, with a warning, when
# their dependencies are missing).
source "$(dirname "${BASH_SOURCE[0]}")/ccache.sh"
configure_build() {
  local generator=() werror=OFF python=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  if [ "${MCL_WERROR:-0}" = 1 ] || [ "${CI:-}" = true ]; then werror=ON; fi
  if [ "${CI:-}" = true ]; then python=(-DMCL_BUILD_PYTHON=ON); fi
  use_ccache host
  cmake -S . -B build ${generator[@]+"${generator[@]}"} \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCL_WERROR="$werror" \
    ${ccache_cmake[@]+"${ccache_cmake[@]}"} ${python[@]+"${python[@]}"} "$@"
}
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
