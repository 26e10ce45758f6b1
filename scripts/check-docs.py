#!/usr/bin/env python3
"""Checks README.md, docs/*.md and the folders' guides: links and commands.

Links: every relative Markdown link ([text](path), [text](path#anchor),
![alt](path), [ref]: path) must name a file or folder of the repository,
and an anchor must match a heading of the target Markdown file (GitHub's
slugs: lowercase, punctuation but - and _ dropped, spaces to -; a repeated
heading gets -1, -2, ...). http(s) and mailto links are not fetched.

Commands: every command in README.md's ```sh / ```bash blocks must resolve:
lines are joined at backslashes, split at &&, ||, ;, | and &; comments,
variable assignments and (in a block that shows "$ " prompts) output lines
are skipped; $(...) is checked as a command of its own. The program must be
an executable file of the repository, a build output whose CMake target
exists (build/bin/NAME: add_executable(NAME ...)), a command of the
allow-list below, or mcl-perf (or one of nccl-tests' names for it), whose
command line the built mcl-perf must accept (MCLPERF_PARSE_ONLY=1: it
parses the flags and runs nothing).

  /usr/bin/python3 scripts/check-docs.py [--root DIR] [--mcl-perf PATH]

--mcl-perf defaults to $MCL_PERF, else build/bin/mcl-perf.

Prints every failure as file:line: message and exits 1; on success prints
one line: "check-docs: N links, M commands checked". Standard library only.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import urllib.parse

# Commands a reader is expected to have (or to get from their system).
ALLOWED_COMMANDS = {
    ".", "apt-get", "bash", "brew", "c++", "cat", "cd", "cmake", "ctest",
    "dot", "echo", "env", "export", "git", "ibv_devices", "ipconfig",
    "mkdir", "mpirun", "networksetup", "openssl", "pip", "pip3",
    "pkg-config", "python", "python3", "rdma_ctl", "sh", "source", "srun",
    "sudo", "torchrun", "wait",
}
# Commands that run the command after them (their own options first).
WRAPPERS = {"sudo", "env", "exec", "nohup", "time", "command"}
SEPARATORS = {"&&", "||", ";", "|", "&", ";;", "|&"}
SHELL_LANGS = {"sh", "bash", "shell"}
VERBOSE = False  # -v: print what is checked
# nccl-tests' program names, which mcl-perf answers to (perf/CMakeLists.txt).
NCCL_TESTS_NAMES = {"all_reduce_perf", "all_gather_perf", "broadcast_perf",
                    "reduce_perf", "reduce_scatter_perf", "alltoall_perf",
                    "sendrecv_perf"}

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_LINK = re.compile(
    r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class Failures:
    def __init__(self):
        self.items = []

    def add(self, path, line, message):
        self.items.append((path, line, message))


# ---------------------------------------------------------------- Markdown

def markdown_lines(text):
    """Yields (line number, line, fence info or None) for every line; the
    info is the fenced block's language for lines inside a block."""
    fence = None  # (char, length, lang) of the open block
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = (m.group(2)[0], len(m.group(2)), m.group(3).lower())
                yield number, line, ("open", fence[2])
                continue
            yield number, line, None
        else:
            if (m and m.group(2)[0] == fence[0] and len(m.group(2)) >= fence[1]
                    and not m.group(3)):
                yield number, line, ("close", fence[2])
                fence = None
                continue
            yield number, line, ("in", fence[2])


def strip_code_spans(line):
    """Replaces inline code spans with a placeholder of the same length
    (links inside code are not links)."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "`":
            j = i
            while j < len(line) and line[j] == "`":
                j += 1
            ticks = line[i:j]
            end = line.find(ticks, j)
            if end < 0:
                out.append(line[i:j])
                i = j
                continue
            out.append("x" * (end + len(ticks) - i))
            i = end + len(ticks)
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def github_slug(heading):
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors_of(path):
    if path not in _anchor_cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen, anchors = {}, set()
        for _, line, fence in markdown_lines(text):
            if fence is not None:
                continue
            for name in HTML_ANCHOR.findall(line):
                anchors.add(name)
            m = HEADING.match(line)
            if not m:
                continue
            slug = github_slug(m.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else "%s-%d" % (slug, count))
        _anchor_cache[path] = anchors
    return _anchor_cache[path]


def check_link(root, doc, number, target, failures):
    """Checks one link of doc (a path relative to root); returns whether it
    was a relative link (and so was checked)."""
    if not target or SCHEME.match(target):
        return False
    path, _, anchor = target.partition("#")
    path = urllib.parse.unquote(path)
    where = os.path.dirname(os.path.join(root, doc))
    resolved = os.path.normpath(os.path.join(where, path)) if path else \
        os.path.join(root, doc)
    shown = os.path.relpath(resolved, root)
    if VERBOSE:
        print("%s:%d: link: %s" % (doc, number, target))
    if path.startswith("/") or shown.startswith(".."):
        failures.add(doc, number, "link %s leaves the repository" % target)
        return True
    if not os.path.exists(resolved):
        failures.add(doc, number, "link %s: no such file or folder %s"
                     % (target, shown))
        return True
    if not anchor:
        return True
    if resolved.endswith(".md") and os.path.isfile(resolved):
        if anchor not in anchors_of(resolved):
            failures.add(doc, number,
                         "link %s: %s has no heading with anchor #%s"
                         % (target, shown, anchor))
    elif not re.fullmatch(r"L\d+(-L\d+)?", anchor):
        failures.add(doc, number, "link %s: #%s is not a line of %s (only "
                     "Markdown files have heading anchors)"
                     % (target, anchor, shown))
    return True


def check_links(root, doc, failures):
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        text = f.read()
    count = 0
    for number, line, fence in markdown_lines(text):
        if fence is not None:
            continue
        plain = strip_code_spans(line)
        targets = [m.group(2) for m in INLINE_LINK.finditer(plain)]
        m = REF_DEF.match(plain)
        if m:
            targets.append(m.group(1))
        for target in targets:
            count += check_link(root, doc, number, target, failures)
    return count


# ---------------------------------------------------------------- mcl-perf

class McPerf:
    """What mcl-perf accepts: the built program itself, run with
    MCLPERF_PARSE_ONLY=1 (it parses the flags, exits 0 or, for a flag or
    value it refuses, 2 with the reason, and runs nothing)."""

    def __init__(self, program):
        self.program = program

    def check(self, args, name="mcl-perf"):
        """Returns the problems with one mcl-perf command line (args after
        the program; name: the name it is started under)."""
        # A shell variable or $(...) stands for a value the reader fills in:
        # 1 is a valid count, size, rank or file name.
        args = ["1" if "$" in a or "SUBSTITUTION" in a else a for a in args]
        env = dict(os.environ, MCLPERF_PARSE_ONLY="1")
        run = subprocess.run([name] + args, env=env, executable=self.program,
                             capture_output=True, text=True, timeout=30)
        if run.returncode == 0:
            return []
        reason = run.stderr.strip().splitlines()
        return ["%s refuses it: %s" % (name, reason[0] if reason else
                                       "exit status %d" % run.returncode)]


# ---------------------------------------------------------------- commands

def cmake_targets(root):
    targets = {}
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs
                   if not d.startswith(("build", ".")) and d != "node_modules"]
        if "CMakeLists.txt" not in files:
            continue
        path = os.path.join(top, "CMakeLists.txt")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name in re.findall(
                r"add_(?:executable|custom_target)\(\s*([\w.+-]+)", text):
            targets.setdefault(name, os.path.relpath(path, root))
    return targets


def command_lines(text):
    """Yields (line number, command text) for README's shell blocks."""
    block, lang = None, None
    for number, line, fence in markdown_lines(text):
        if fence is None:
            continue
        kind, lang = fence
        if kind == "open":
            block = []
        elif kind == "in":
            block.append((number, line))
        elif kind == "close":
            if lang in SHELL_LANGS:
                yield from block_commands(block)
            block = None


def block_commands(block):
    prompts = any(line.lstrip().startswith("$ ") for _, line in block)
    pending, start = "", None
    for number, line in block:
        text = line.strip()
        if not pending:
            if not text or text.startswith("#"):
                continue
            if prompts:
                if not text.startswith("$ "):
                    continue  # output
                text = text[2:]
            start = number
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        yield start, pending + text
        pending = ""
    if pending:
        yield start, pending


def extract_substitutions(text):
    """Replaces $(...) and `...` with a word; returns (text, inner texts)."""
    out, inner, i, quote = [], [], 0, None
    while i < len(text):
        ch = text[i]
        if quote == "'":
            out.append(ch)
            if ch == "'":
                quote = None
            i += 1
            continue
        if ch == "'" and quote is None:
            quote = "'"
        elif ch == '"':
            quote = None if quote == '"' else '"'
        if text.startswith("$(", i):
            depth, j = 1, i + 2
            while j < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
            inner.append(text[i + 2:j - 1])
            out.append("SUBSTITUTION")
            i = j
            continue
        if ch == "`":
            j = text.find("`", i + 1)
            if j > 0:
                inner.append(text[i + 1:j])
                out.append("SUBSTITUTION")
                i = j + 1
                continue
        out.append(ch)
        i += 1
    return "".join(out), inner


def simple_commands(text):
    """Splits a command line into simple commands (lists of words)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, words, skip_next = [], [], False
    for token in lexer:
        if token in SEPARATORS:
            commands.append(words)
            words = []
        elif token and all(c in "();<>|&" for c in token):
            skip_next = "<" in token or ">" in token  # a redirection's target
        elif skip_next:
            skip_next = False
        else:
            words.append(token)
    commands.append(words)
    return [c for c in commands if c]


class CommandChecker:
    def __init__(self, root, mcl_perf):
        self.root = root
        self.targets = cmake_targets(root)
        self.mcl_perf = McPerf(mcl_perf)
        self.count = 0

    def check_line(self, doc, number, text, failures, only_mcl_perf=False):
        text, inner = extract_substitutions(text)
        for sub in inner:
            self.check_line(doc, number, sub, failures, only_mcl_perf)
        try:
            commands = simple_commands(text)
        except ValueError as e:
            failures.add(doc, number, "cannot parse '%s': %s" % (text, e))
            return
        for words in commands:
            self.check_command(doc, number, words, failures, only_mcl_perf)

    def check_command(self, doc, number, words, failures, only_mcl_perf):
        while words and ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words:
            return  # variable assignments only
        if only_mcl_perf and not self.runs_mcl_perf(words):
            return
        self.count += 1
        if VERBOSE:
            print("%s:%d: command: %s" % (doc, number, " ".join(words)))
        for problem in self.problems(words):
            failures.add(doc, number, "%s (in: %s)" % (problem, " ".join(words)))

    def runs_mcl_perf(self, words):
        program, args = words[0], words[1:]
        if program in WRAPPERS:
            while args and (args[0].startswith("-") or
                            (program == "env" and ASSIGNMENT.match(args[0]))):
                args = args[1:]
            return bool(args) and self.runs_mcl_perf(args)
        name = os.path.basename(program)
        return name == "mcl-perf" or name in NCCL_TESTS_NAMES

    def problems(self, words):
        program, args = words[0], words[1:]
        if program in WRAPPERS:
            while args and (args[0].startswith("-") or
                            (program == "env" and ASSIGNMENT.match(args[0]))):
                args = args[1:]
            return self.problems(args) if args else []
        name = os.path.basename(program)
        if name == "mcl-perf" or name in NCCL_TESTS_NAMES:
            # nccl-tests' names are links the mcl-perf target makes.
            problems = [] if program == name else self.program_problems(
                os.path.join(os.path.dirname(program), "mcl-perf"))
            return problems + self.mcl_perf.check(args, name)
        problems = self.program_problems(program)
        if not problems and re.fullmatch(r"python[\d.]*",
                                         os.path.basename(program)):
            if args and args[0].endswith(".py") and not os.path.isfile(
                    os.path.join(self.root, args[0])):
                problems.append("no such script %s" % args[0])
        return problems

    def program_problems(self, program):
        if "/" not in program:
            if program in ALLOWED_COMMANDS:
                return []
            return ["'%s' is neither a repository path nor an allowed "
                    "system command" % program]
        if program.startswith("/"):
            if os.path.basename(program) in ALLOWED_COMMANDS:
                return []
            return ["%s: an absolute path whose command is not allowed"
                    % program]
        rel = os.path.normpath(program)
        if rel.startswith(("..", "~", "$")):
            return ["%s is not a path in the repository" % program]
        parts = rel.split(os.sep)
        if parts[0] == "build":
            if len(parts) == 3 and parts[1] == "bin":
                if parts[2] in self.targets:
                    return []
                return ["%s: no CMake target '%s' builds it"
                        % (program, parts[2])]
            return ["%s: not a build output (build/bin/TARGET)" % program]
        path = os.path.join(self.root, rel)
        if not os.path.isfile(path):
            return ["%s: no such file in the repository" % program]
        if not os.access(path, os.X_OK):
            return ["%s is not executable" % program]
        return []


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))),
        help="the repository (default: this script's)")
    parser.add_argument("--mcl-perf", default=os.environ.get("MCL_PERF"),
                        help="the built mcl-perf (default $MCL_PERF, else "
                        "build/bin/mcl-perf)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also print every link and command checked")
    options = parser.parse_args()
    root = os.path.abspath(options.root)
    global VERBOSE
    VERBOSE = options.verbose

    docs = ["README.md"]
    docs_dir = os.path.join(root, "docs")
    if os.path.isdir(docs_dir):
        docs += sorted(os.path.join("docs", name)
                       for name in os.listdir(docs_dir) if name.endswith(".md"))
    # The folders' own guides.
    docs += [p for p in ("perf/README.md", "tests/cluster/README.md")
             if os.path.isfile(os.path.join(root, p))]

    failures = Failures()
    links = sum(check_links(root, doc, failures) for doc in docs)

    mcl_perf = options.mcl_perf or os.path.join(root, "build/bin/mcl-perf")
    if not os.access(mcl_perf, os.X_OK):
        print("check-docs: no mcl-perf at %s to check the documented command "
              "lines with: build it first (./scripts/setup.sh) or name it "
              "with --mcl-perf" % mcl_perf, file=sys.stderr)
        return 1
    checker = CommandChecker(root, os.path.abspath(mcl_perf))
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for number, text in command_lines(readme):
        checker.check_line("README.md", number, text, failures)
    # In docs/, the command lines of mcl-perf (the others show set-ups of
    # machines this one does not have).
    for doc in docs[1:]:
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        for number, line in command_lines(text):
            checker.check_line(doc, number, line, failures, only_mcl_perf=True)

    for path, line, message in failures.items:
        print("%s:%d: %s" % (path, line, message))
    if failures.items:
        print("check-docs: %d problem%s (%d links, %d commands checked)"
              % (len(failures.items), "" if len(failures.items) == 1 else "s",
                 links, checker.count))
        return 1
    print("check-docs: %d links, %d commands checked" % (links, checker.count))
    return 0


if __name__ == "__main__":
    sys.exit(main())
