#!/usr/bin/env bash
# Lists the standard headers that a source uses without including them
# (clang-tidy's misc-include-cleaner, .clang-tidy-includes), for every
# source of a build's compile_commands.json; exit status 1 when there is any.
# Only missing includes: clang-tidy 19 cannot be told to skip the unused
# ones, and an include unused on this platform may serve another's branch.
# MCLBUILD_INCLUDE_CHECK_ONLY: a regular expression: only the sources and
# headers whose path matches it are checked (a developer's quick look at the
# files of a change; CI checks them all).
# MCLBUILD_INCLUDE_CHECK_CACHE: a directory where each file found clean is
# remembered under a key of everything its verdict depends on (clang-tidy's
# version and configuration, the file's command and text, the headers of the
# tree it includes, the system's installed packages): a later run checks
# only what changed. A missing or unreadable entry only means the file is
# checked.
#   scripts/lib/missing-includes.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$1
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
# Headers are checked as main files too (the check looks at the main file
# only), each with the flags of a source beside it: a compilation database
# of its own in BUILD/include-check.
python3 - "$build" <<'PY'
import hashlib, json, os, shlex, sys
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
# The result cache: keys of the files found clean before are skipped.
cache = os.environ.get("MCLBUILD_INCLUDE_CHECK_CACHE", "")
def digest(*parts):
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode())
        h.update(b"\0")
    return h.hexdigest()
keys = {}
if cache:
    import re, subprocess
    tidy = subprocess.run(["clang-tidy", "--version"], capture_output=True).stdout
    packages = subprocess.run(["dpkg-query", "-W"], capture_output=True).stdout
    common = digest(tidy, open(".clang-tidy-includes", "rb").read(), packages)
    # A file's verdict depends on its own text and on every header of the
    # tree it includes, directly or not: the key holds those headers (found
    # by following #include lines, whatever #if they sit under), so that a
    # change to one header rechecks only the files that include it. A file
    # with an #include this cannot follow (a macro) keys on every header.
    root = os.getcwd()
    include_line = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(.*)$', re.M)
    named = re.compile(r'^(?:"([^"]+)"|<([^>]+)>)')
    text = {}
    def read(path):
        if path not in text:
            text[path] = open(path, "rb").read()
        return text[path]
    def search_dirs(args):
        dirs, take = [], False
        for a in args:
            if take:
                dirs.append(a)
                take = False
            elif a in ("-I", "-isystem", "-iquote"):
                take = True
            elif a.startswith("-I"):
                dirs.append(a[2:])
            elif a.startswith(("-isystem", "-iquote")):
                dirs.append(a[8 if a.startswith("-isystem") else 7:])
        return [os.path.realpath(d) for d in dirs
                if os.path.realpath(d).startswith(root + os.sep)]
    every_header = None
    def closure(path, dirs):
        seen, todo = set(), [path]
        while todo:
            current = todo.pop()
            for line in include_line.findall(read(current).decode(errors="replace")):
                m = named.match(line.strip())
                if not m:
                    return None
                name, quoted = m.group(1) or m.group(2), m.group(1) is not None
                for d in ([os.path.dirname(current)] if quoted else []) + dirs:
                    candidate = os.path.realpath(os.path.join(d, name))
                    if os.path.isfile(candidate):
                        if candidate.startswith(root + os.sep) and candidate not in seen:
                            seen.add(candidate)
                            todo.append(candidate)
                        break
        return sorted(seen)
    for c in commands + headers:
        args = c["arguments"] if "arguments" in c else shlex.split(c["command"])
        included = closure(c["file"], search_dirs(args))
        if included is None:
            if every_header is None:
                every_header = sorted(
                    os.path.join(d, n)
                    for top in ("src", "include", "perf", "tests", "bindings", "deps")
                    for d, _, names in os.walk(os.path.join(root, top))
                    for n in names if n.endswith((".h", ".hpp")))
            included = every_header
        keys[c["file"]] = digest(common, c["file"], " ".join(args), read(c["file"]),
                                 *[h.encode() + read(h) for h in included])
only = os.environ.get("MCLBUILD_INCLUDE_CHECK_ONLY", "")
def unchecked(files):
    return [f for f in files
            if not (cache and os.path.exists(os.path.join(cache, keys[f])))
            and (not only or __import__("re").search(only, f))]
os.makedirs(os.path.join(build, "include-check"), exist_ok=True)
json.dump(headers, open(os.path.join(build, "include-check", "compile_commands.json"), "w"))
sources = sorted({c["file"] for c in commands})
with open(os.path.join(build, "include-check-files.txt"), "w") as f:
    f.write("".join(n + "\n" for n in unchecked(sources)))
with open(os.path.join(build, "include-check-headers.txt"), "w") as f:
    f.write("".join(n + "\n" for n in unchecked([h["file"] for h in headers])))
with open(os.path.join(build, "include-check-keys.json"), "w") as f:
    json.dump(keys, f)
print(f"missing-includes: {len(sources) + len(headers)} sources and headers,"
      f" {len(sources) + len(headers) - len(unchecked(sources)) - len(unchecked([h['file'] for h in headers]))}"
      " known clean from an earlier run")
PY
tidy() {  # tidy DATABASE_DIR FILE_LIST
  [ -s "$2" ] || return 0
  xargs -P "$jobs" -n 8 clang-tidy --quiet --config-file=.clang-tidy-includes \
    -p "$1" <"$2" 2>/dev/null | grep -A2 'no header providing' || true
}
{
  tidy "$build" "$build/include-check-files.txt"
  tidy "$build/include-check" "$build/include-check-headers.txt"
} >"$build/missing-includes.txt"
count=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' \
  "$build/include-check-keys.json")
# Remember the files checked now and found clean (none is named in a finding).
if [ -n "${MCLBUILD_INCLUDE_CHECK_CACHE:-}" ]; then
  python3 - "$build" "$MCLBUILD_INCLUDE_CHECK_CACHE" <<'PY' || true
import json, os, sys
build, cache = sys.argv[1], sys.argv[2]
keys = json.load(open(os.path.join(build, "include-check-keys.json")))
findings = open(os.path.join(build, "missing-includes.txt")).read()
os.makedirs(cache, exist_ok=True)
for name in ("include-check-files.txt", "include-check-headers.txt"):
    for f in open(os.path.join(build, name)).read().split():
        if f + ":" not in findings:
            open(os.path.join(cache, keys[f]), "w").close()
PY
fi
if [ -s "$build/missing-includes.txt" ]; then
  cat "$build/missing-includes.txt"
  echo "missing-includes: standard headers used but not included (above):" \
    "include each in the file that uses it" >&2
  exit 1
fi
echo "missing-includes: $count sources and headers include every standard" \
  "header they use"
