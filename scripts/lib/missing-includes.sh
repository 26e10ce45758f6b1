#!/usr/bin/env bash
# Lists the standard headers that a source uses without including them
# (clang-tidy's misc-include-cleaner, .clang-tidy-includes), for every
# source of a build's compile_commands.json; exit status 1 when there is any.
# Only missing includes: clang-tidy 19 cannot be told to skip the unused
# ones, and an include unused on this platform may serve another's branch.
#   scripts/lib/missing-includes.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$1
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
# Headers are checked as main files too (the check looks at the main file
# only), each with the flags of a source beside it: a compilation database
# of its own in BUILD/include-check.
python3 - "$build" <<'PY'
import json, os, shlex, sys
build = sys.argv[1]
commands = [c for c in json.load(open(os.path.join(build, "compile_commands.json")))
            if "/deps/" not in c["file"]]
by_dir = {}
for c in commands:
    by_dir.setdefault(os.path.dirname(c["file"]), c)
# Every header of the tree but the bindings' (they need Python's headers);
# one in a folder without a compiled source takes a library source's flags.
default = next(c for c in commands if "/src/core/" in c["file"])
header_dirs = set()
for top in ("src", "include", "perf", "tests"):
    for d, _, names in os.walk(os.path.join(os.getcwd(), top)):
        if "/tests/macos" not in d and any(n.endswith((".h", ".hpp")) for n in names):
            header_dirs.add(d)
headers = []
for d in sorted(header_dirs):
    c = by_dir.get(d, default)
    args = c["arguments"] if "arguments" in c else shlex.split(c["command"])
    keep, skip = [], False
    for a in args[:-1]:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT", "-c"):
            skip = a != "-c"
        elif not a.startswith("-MD") and a != c["file"]:
            keep.append(a)
    for name in sorted(os.listdir(d)):
        if name.endswith((".h", ".hpp")):
            h = os.path.join(d, name)
            headers.append({"directory": c["directory"], "file": h,
                            "arguments": keep + ["-x", "c++-header", h]})
os.makedirs(os.path.join(build, "include-check"), exist_ok=True)
json.dump(headers, open(os.path.join(build, "include-check", "compile_commands.json"), "w"))
with open(os.path.join(build, "include-check-files.txt"), "w") as f:
    f.write("\n".join(sorted({c["file"] for c in commands})) + "\n")
with open(os.path.join(build, "include-check-headers.txt"), "w") as f:
    f.write("\n".join(h["file"] for h in headers) + "\n")
PY
tidy() {  # tidy DATABASE_DIR FILE_LIST
  xargs -P "$jobs" -n 8 clang-tidy --quiet --config-file=.clang-tidy-includes \
    -p "$1" <"$2" 2>/dev/null | grep -A2 'no header providing' || true
}
{
  tidy "$build" "$build/include-check-files.txt"
  tidy "$build/include-check" "$build/include-check-headers.txt"
} >"$build/missing-includes.txt"
count=$(cat "$build/include-check-files.txt" "$build/include-check-headers.txt" | wc -l)
if [ -s "$build/missing-includes.txt" ]; then
  cat "$build/missing-includes.txt"
  echo "missing-includes: standard headers used but not included (above):" \
    "include each in the file that uses it" >&2
  exit 1
fi
echo "missing-includes: $count sources and headers include every standard" \
  "header they use"
