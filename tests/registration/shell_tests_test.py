#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""usage: shell_tests_test.py CTEST BUILD_DIR

Every test of BUILD_DIR whose command runs a script (bash, sh or python3,
named as the program or by the script's #! line) has SKIP_RETURN_CODE 77 and
was registered by k8s_shell_test (cmake/k8s_shell_test.cmake). Scripts skip
with exit 77; a test without the code reports such a skip as a failure. Reads
`CTEST --test-dir BUILD_DIR --show-only=json-v1`: the tests as ctest runs
them, with the CMake call stack that registered each.
"""
import json
import os
import re
import subprocess
import sys

INTERPRETER = re.compile(r"(bash|sh|python3(\.[0-9]+)?)$")
HELPER = "k8s_shell_test"


def interpreter_of(argv):
    """The interpreter argv runs: its program, or the #! line's, through
    env; None for anything else (a compiled test)."""
    program = argv[0] if argv else ""
    name = os.path.basename(program)
    if name == "env":
        rest = [a for a in argv[1:] if not a.startswith("-") and "=" not in a]
        return interpreter_of(rest)
    if INTERPRETER.match(name):
        return name
    try:
        with open(program, "rb") as f:
            first = f.readline(256)
    except OSError:  # Not built yet, or a program on PATH.
        return None
    if not first.startswith(b"#!"):
        return None
    return interpreter_of(first[2:].decode(errors="replace").split())


def call_stack(graph, node):
    """(command, file, line) of each frame, innermost first."""
    frames = []
    while node is not None:
        entry = graph["nodes"][node]
        if "command" in entry:
            frames.append((graph["commands"][entry["command"]],
                           graph["files"][entry["file"]], entry.get("line")))
        node = entry.get("parent")
    return frames


def main():
    ctest, build = sys.argv[1:3]
    listing = subprocess.run(
        [ctest, "--test-dir", build, "--show-only=json-v1"], check=True,
        capture_output=True, text=True).stdout
    doc = json.loads(listing)
    graph = doc["backtraceGraph"]
    scripts = 0
    failures = []
    for test in doc["tests"]:
        interpreter = interpreter_of(test.get("command") or [])
        if interpreter is None:
            continue
        scripts += 1
        properties = {p["name"]: p["value"]
                      for p in test.get("properties", [])}
        frames = call_stack(graph, test.get("backtrace"))
        # The caller's line, not the helper's own add_test.
        outside = [f for f in frames
                   if not f[1].endswith("/cmake/k8s_shell_test.cmake")]
        where = f"{outside[0][1]}:{outside[0][2]}" if outside else "?"
        if properties.get("SKIP_RETURN_CODE") != 77:
            failures.append(f"{test['name']} runs {interpreter} without "
                            f"SKIP_RETURN_CODE 77 ({where})")
        if HELPER not in (command for command, _, _ in frames):
            failures.append(f"{test['name']} runs {interpreter} but is not "
                            f"registered by {HELPER} ({where})")
    if scripts == 0:
        failures.append(f"no test of {build} runs a script: the listing or "
                        "this check is broken")
    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        print(f"register script tests with {HELPER} "
              "(cmake/k8s_shell_test.cmake)")
        return 1
    print(f"ok: {scripts} script tests, each registered by {HELPER} with "
          "SKIP_RETURN_CODE 77")
    return 0


if __name__ == "__main__":
    sys.exit(main())
