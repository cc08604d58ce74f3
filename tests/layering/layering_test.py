#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""usage: layering_test.py SOURCE_DIR COMPILE_COMMANDS_JSON

Checks that each layer can include only the layers it links. For each row of
RULES it takes the compile command of a source file in that directory from the
compile database (so the target's real include path), compiles a one-line
probe `#include "DIR/HEADER.h"` with -fsyntax-only for a header of every
allowed and every forbidden directory, and expects the allowed ones to compile
and the forbidden ones to fail with "No such file or directory" for that very
header. A header of each directory is picked at run time, so files may be
added, renamed or moved between layers without editing this test.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

PLUGIN = ["plugin/base", "plugin/kube", "plugin/ssh", "plugin/agent",
          "plugin/report", "launcher"]

# directory of a target's sources -> the directories it may include; every
# other one of PLUGIN (and, for tests, of TEST_ONLY) must not be found.
RULES = {
    "plugin/base": ["plugin/base"],
    "plugin/kube": ["plugin/base", "plugin/kube"],
    "plugin/ssh": ["plugin/base", "plugin/ssh"],
    "plugin/report": ["plugin/base", "plugin/report"],
    "plugin/agent": ["plugin/base", "plugin/kube", "plugin/ssh",
                     "plugin/agent"],
    "images/deliver": ["plugin/base"],
    "tests/base": ["plugin/base", "tests/fakes"],
    "tests/ssh": ["plugin/base", "plugin/ssh", "tests/fakes"],
}
TEST_ONLY = ["tests/fakes", "tests/integration/ssh", "tests/report"]


def header_of(source_dir, directory):
    """A header of `directory`, as an include spelling ("plugin/ssh/x.h")."""
    names = sorted(n for n in os.listdir(os.path.join(source_dir, directory))
                   if n.endswith(".h"))
    if not names:
        sys.exit(f"layering: no header in {directory}")
    return f"{directory}/{names[0]}"


def probe_command(entry, probe):
    """The entry's compile command, compiling `probe` for syntax only."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(
        entry["command"])
    if os.path.basename(args[0]) == "ccache":
        args = args[1:]
    out = [args[0]]
    skip = False
    for arg in args[1:]:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-c", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if arg in ("-MD", "-MMD") or arg == entry["file"]:
            continue
        out.append(arg)
    return out + ["-fsyntax-only", probe]


def main():
    source_dir, database = sys.argv[1], sys.argv[2]
    with open(database) as f:
        entries = json.load(f)
    failures = []
    checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        for directory, allowed in RULES.items():
            prefix = os.path.join(source_dir, directory) + os.sep
            entry = next((e for e in sorted(entries, key=lambda e: e["file"])
                          if e["file"].startswith(prefix)), None)
            if entry is None:
                failures.append(f"{directory}: no source of it in {database}")
                continue
            others = PLUGIN + (TEST_ONLY if directory.startswith("tests/")
                               else [])
            for other in others:
                header = header_of(source_dir, other)
                probe = os.path.join(tmp, "probe.cc")
                with open(probe, "w") as f:
                    f.write(f'#include "{header}"\n')
                run = subprocess.run(probe_command(entry, probe),
                                     cwd=entry["directory"],
                                     capture_output=True, text=True)
                checks += 1
                where = f"{os.path.basename(entry['file'])} ({directory})"
                if other in allowed and run.returncode != 0:
                    failures.append(f"{where} cannot include {header}, a "
                                    f"layer it links:\n{run.stderr}")
                elif other not in allowed:
                    missing = f"{header}: No such file or directory"
                    if run.returncode == 0:
                        failures.append(f"{where} includes {header}, a layer "
                                        "it does not link: the include path "
                                        "reaches past its layers (is there a "
                                        "tree-wide include_directories?)")
                    elif missing not in run.stderr:
                        failures.append(f"{where}: {header} failed, but not as "
                                        f"a missing file:\n{run.stderr}")
    for failure in failures:
        print(f"layering: {failure}", file=sys.stderr)
    print(f"layering: {checks} includes probed, {len(failures)} wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
