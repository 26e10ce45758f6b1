#!/usr/bin/env python3
"""Names every function of the given sources longer than LIMIT lines (from
its opening brace to its closing one): core keeps its functions short enough
to read at once (docs/architecture.md). The sources are clang-formatted; a
function is a brace that follows a parameter list, lambdas and blocks
counting toward the function around them.
  function_lengths.py LIMIT FILE..."""
import re
import sys


def blank_out(text):
    """Comments, strings and characters blanked, lines kept."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text,
                  flags=re.S)
    text = re.sub(r'R"(\w*)\((.*?)\)\1"',
                  lambda m: '""' + "\n" * m.group(0).count("\n"), text,
                  flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


CONTROL = re.compile(r"\b(if|for|while|switch|catch)\s*\([^;{}]*\)\s*$")
AFTER_PARAMETERS = re.compile(
    r"\)\s*(const|noexcept|override|final|mutable|\s|->\s*[\w:<>,\s*&]+)*$")


def long_functions(path, limit):
    text = blank_out(open(path, encoding="utf-8").read())
    open_blocks = []  # (is a function, line, signature)
    line = 1
    for at, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "{":
            before = text[max(0, at - 300):at].rstrip()
            function = (bool(AFTER_PARAMETERS.search(before)) and
                        not CONTROL.search(before) and
                        not any(f for f, _, _ in open_blocks))
            open_blocks.append((function, line, before.split("\n")[-1].strip()))
        elif ch == "}" and open_blocks:
            function, start, signature = open_blocks.pop()
            if function and line - start + 1 > limit:
                yield start, line - start + 1, signature


def main():
    limit = int(sys.argv[1])
    found = 0
    for path in sys.argv[2:]:
        for start, lines, signature in long_functions(path, limit):
            print(f"FAIL: {path}:{start}: a function of {lines} lines (core "
                  f"keeps them to {limit}: split it by what it does): "
                  f"{signature[:80]}")
            found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
