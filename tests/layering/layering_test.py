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

HEADERS adds named headers to a row: the plain-struct headers a target gets
from a header-only target (allowed, though their directory is not) and
headers of that same directory it must not reach (forbidden). SOURCES names
the source files whose compile commands a row uses (each probed) where its
directory holds more than one target.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

PLUGIN = ["plugin/base", "plugin/kube", "plugin/ssh", "plugin/agent",
          "plugin/report", "plugin/sshd", "plugin/inject", "launcher"]

# directory of a target's sources -> the directories it may include; every
# other one of PLUGIN (and, for tests, of TEST_ONLY) must not be found.
RULES = {
    "plugin/base": ["plugin/base"],
    "plugin/kube": ["plugin/base", "plugin/kube"],
    "plugin/ssh": ["plugin/base", "plugin/ssh"],
    "plugin/report": ["plugin/base", "plugin/report"],
    "plugin/sshd": ["plugin/base", "plugin/sshd"],
    "plugin/inject": ["plugin/base", "plugin/inject"],
    "plugin/agent": ["plugin/base", "plugin/kube", "plugin/ssh",
                     "plugin/agent"],
    "images/deliver": ["plugin/base"],
    # The option parser (k8s_options); main.cc (k8s-agent) links all.
    "launcher": ["plugin/base", "plugin/ssh", "launcher"],
    # k8s-agent-sshd's options (k8s_sshd_options), which its main links:
    # the sshd layer and their own header, no other launcher header.
    "launcher:sshd": ["plugin/base", "plugin/sshd"],
    "tests/base": ["plugin/base", "tests/fakes"],
    "tests/ssh": ["plugin/base", "plugin/ssh", "tests/fakes"],
}
# directory -> (headers it may include, headers it must not find)
HEADERS = {
    "launcher": (["plugin/kube/cluster_config.h",
                  "plugin/agent/fatal_reasons.h", "plugin/ssh/ssh_config.h"],
                 ["plugin/kube/kube_client.h", "plugin/agent/host_waiter.h",
                  "plugin/kube/pod_watcher.h", "plugin/agent/agent.h",
                  "plugin/kube/curl_transport.h", "plugin/ssh/tcp_connect.h",
                  "plugin/ssh/ssh_client.h", "plugin/ssh/key_file.h"]),
    "launcher:sshd": (["launcher/sshd_options.h"],
                      ["launcher/option_table.h", "launcher/options.h"]),
}
# Every source of the option parser (k8s_options), each probed: any of them
# could be where a transport header slips in.
SOURCES = {"launcher": ["launcher/long_options.cc", "launcher/options.cc",
                        "launcher/ssh_flags.cc", "launcher/ssh_settings.cc",
                        "launcher/tree_settings.cc", "launcher/usage.cc"],
           "launcher:sshd": ["launcher/sshd_options.cc"]}
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


def probe(entry, header, may, directory, tmp):
    """Compiles `#include "header"` with `entry`'s flags; what is wrong, if
    anything: `may` says whether the include must compile or must fail as a
    missing file."""
    path = os.path.join(tmp, "probe.cc")
    with open(path, "w") as f:
        f.write(f'#include "{header}"\n')
    run = subprocess.run(probe_command(entry, path), cwd=entry["directory"],
                         capture_output=True, text=True)
    where = f"{os.path.basename(entry['file'])} ({directory})"
    if may:
        if run.returncode != 0:
            return (f"{where} cannot include {header}, which it links:\n"
                    f"{run.stderr}")
        return None
    if run.returncode == 0:
        return (f"{where} includes {header}, which it does not link: the "
                "include path reaches past its layers (is there a tree-wide "
                "include_directories, or a whole directory where one header "
                "was meant?)")
    if f"{header}: No such file or directory" not in run.stderr:
        return f"{where}: {header} failed, but not as a missing file:\n{run.stderr}"
    return None


def main():
    source_dir, database = sys.argv[1], sys.argv[2]
    with open(database) as f:
        entries = json.load(f)
    failures = []
    checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        for directory, allowed in RULES.items():
            prefixes = [os.path.join(source_dir, directory) + os.sep]
            if directory in SOURCES:
                prefixes = [os.path.join(source_dir, f)
                            for f in SOURCES[directory]]
            others = PLUGIN + (TEST_ONLY if directory.startswith("tests/")
                               else [])
            probes = [(header_of(source_dir, other), other in allowed)
                      for other in others]
            extra_allowed, extra_forbidden = HEADERS.get(directory, ([], []))
            probes += [(h, True) for h in extra_allowed]
            probes += [(h, False) for h in extra_forbidden]
            for prefix in prefixes:
                entry = next((e for e in sorted(entries,
                                                key=lambda e: e["file"])
                              if e["file"].startswith(prefix)), None)
                if entry is None:
                    failures.append(f"{directory}: no {prefix} in {database}")
                    continue
                for header, may in probes:
                    if not os.path.isfile(os.path.join(source_dir, header)):
                        failures.append(f"{directory}: no {header} to probe")
                        continue
                    checks += 1
                    failure = probe(entry, header, may, directory, tmp)
                    if failure:
                        failures.append(failure)
    for failure in failures:
        print(f"layering: {failure}", file=sys.stderr)
    print(f"layering: {checks} includes probed, {len(failures)} wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
