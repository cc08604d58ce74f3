#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Lints the Dockerfiles without an engine: every COPY source is in the
# context scripts/images.sh stages, no image compiles anything (k8s-agent
# is built once on the host), worker and launcher share their first layers,
# each image holds what its brief says (uid 1000, sshd on 2222, k8s-agent,
# presets; the delivery image only the agent, the copier and the presets),
# and the scripts parse (bash -n, shellcheck when installed). The images
# are built and run for real by tests/images/.
# Usage: dockerfile_lint_test.sh [REPO_DIR]
set -euo pipefail

repo="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
status=0
for script in "$repo"/images/*.sh "$repo"/scripts/images.sh "$repo"/scripts/debian-image.sh; do
  bash -n "$script" || { echo "FAIL: $script does not parse"; status=1; }
done
for script in "$repo"/images/*-entrypoint.sh; do
  [[ -x "$script" ]] || { echo "FAIL: $script is not executable"; status=1; }
done
if command -v shellcheck >/dev/null; then
  (cd "$repo" && shellcheck -x images/*.sh scripts/images.sh scripts/debian-image.sh) || { echo "FAIL: shellcheck images/*.sh"; status=1; }
else
  echo "note: shellcheck not installed; skipped"
fi

/usr/bin/python3 - "$repo" <<'EOF' || status=1
import fnmatch, glob, json, os, re, shlex, sys

repo = sys.argv[1]
failures = []

def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)

def instructions(path):
    """(INSTRUCTION, rest) pairs with continuation lines joined."""
    out, cur = [], ""
    for raw in open(path):
        line = raw.rstrip("\n")
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if cur and line.lstrip().startswith("#"):
            continue  # Comment lines inside a continued instruction.
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        cur += line
        word, _, rest = cur.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        cur = ""
    return out

def stages(instrs):
    """Splits into stages: list of dicts {name, base, instrs}."""
    args, result = {}, []
    for word, rest in instrs:
        if word == "ARG" and not result:
            k, _, v = rest.partition("=")
            args[k] = v
        elif word == "FROM":
            parts = rest.split()
            base = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), ""), parts[0])
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else None
            result.append({"name": name, "base": base, "instrs": []})
        elif result:
            result[-1]["instrs"].append((word, rest))
    return result

def copy_parts(rest):
    words = shlex.split(rest)
    flags = [w for w in words if w.startswith("--")]
    paths = [w for w in words if not w.startswith("--")]
    return flags, paths[:-1], paths[-1]

def ignored(path, patterns):
    return any(fnmatch.fnmatch(path.rstrip("/"), p) or path.startswith(p.rstrip("/") + "/")
               for p in patterns)

# The build context is what scripts/images.sh stages: k8s-agent,
# k8s-agent-deliver and k8s-agent-sshd built on the host, the portable sshd
# (scripts/sshd_build.sh), the presets and the entrypoints.
images_sh = open(os.path.join(repo, "scripts", "images.sh")).read()
sources = {"openmpi-mca-params.conf": "ompi-conf", "prte-mca-params.conf": "ompi-conf",
           "ssh-setup.sh": "images", "launcher-entrypoint.sh": "images", "ompi-env.sh": "images"}
context = {"k8s-agent", "k8s-agent-deliver", "k8s-agent-sshd", "sshd", "sshd-session", "sshd-auth",
           "sbom.spdx.json", "licenses"} | set(sources)
check("scripts/lib/sbom.py" in images_sh, "images.sh writes the SBOM and the licences")
for f, d in sources.items():
    check(os.path.exists(os.path.join(repo, d, f)) and f"$repo/{d}/{f}" in images_sh,
          f"images.sh stages {d}/{f}")
check('"$strip" -o "$ctx/k8s-agent" "$a"' in images_sh and
      '"$strip" -o "$ctx/k8s-agent-deliver" "$d"' in images_sh and
      '"$strip" -o "$ctx/k8s-agent-sshd" "$e"' in images_sh and
      'scripts/sshd_build.sh" ensure "$sshd_arch"' in images_sh, "images.sh stages the binaries and the portable sshd")
check("--pull=never" in images_sh, "images.sh never pulls")

def parsed(name):
    path = os.path.join(repo, "images", f"{name}.Dockerfile")
    where = f"{name}.Dockerfile"
    check(os.path.exists(path), f"{where} exists")
    if not os.path.exists(path):
        return where, None
    check(open(path).readline().startswith("# SPDX-License-Identifier:"), f"{where} starts with SPDX")
    st = stages(instructions(path))
    check(len(st) == 1, f"{where}: one stage (k8s-agent is built on the host, not in the image)")
    s = st[-1]
    check(all(w != "ADD" for w, _ in s["instrs"]), f"{where}: COPY only, no ADD")
    dests = {}
    for word, rest in s["instrs"]:
        if word != "COPY":
            continue
        flags, srcs, dest = copy_parts(rest)
        check(not flags, f"{where}: COPY {rest} takes no --from")
        for src in srcs:
            check(src in context, f"{where}: COPY source {src} is in the staged context")
            dests[src] = dest + src if dest.endswith("/") else dest
    return where, (s, dests)

first_layers = {}
for name in ("worker", "launcher"):
    where, p = parsed(name)
    if p is None:
        continue
    runtime, dests = p
    check("bookworm" in runtime["base"] and runtime["base"].startswith("debian"),
          f"{where}: FROM {runtime['base']} is Debian bookworm by default")
    runs = [r for w, r in runtime["instrs"] if w == "RUN"]
    allruns = " ".join(runs)
    check(not re.search(r"\b(cmake|g\+\+|make)\b", allruns), f"{where}: compiles nothing")
    check("libyaml-cpp" not in allruns and "${AGENT_PACKAGES}" in allruns,
          f"{where}: no pinned agent libraries, only AGENT_PACKAGES from images.sh")
    check(re.search(r"(^|\s)openmpi-bin(\s|$)", allruns) is not None, f"{where}: installs openmpi-bin")
    check(re.search(r"useradd\b.*--uid 1000\b.*\bmpiuser\b", allruns) is not None,
          f"{where}: creates mpiuser with uid 1000")
    first_layers[name] = [(w, r) for w, r in runtime["instrs"] if w in ("ARG", "RUN")][:3]
    users = [r for w, r in runtime["instrs"] if w == "USER"]
    check(users and users[-1].split(":")[0] == "1000", f"{where}: runs as USER 1000 (numeric)")
    check(dests.get("k8s-agent") == "/usr/local/bin/k8s-agent", f"{where}: k8s-agent at /usr/local/bin/k8s-agent")
    for preset in ("openmpi-mca-params.conf", "prte-mca-params.conf"):
        check(dests.get(preset) == f"/etc/openmpi/{preset}", f"{where}: {preset} in /etc/openmpi")
    entry = [r for w, r in runtime["instrs"] if w == "ENTRYPOINT"]
    check(len(entry) == 1, f"{where}: one ENTRYPOINT")
    if entry:
        argv = json.loads(entry[0])
        if name == "worker":
            # The worker side is k8s-agent-sshd, with no shell entrypoint of its own.
            check(dests.get("k8s-agent-sshd") == argv[0] and len(argv) == 1,
                  f"{where}: ENTRYPOINT runs k8s-agent-sshd (options as the pod's args)")
            check("ssh-setup.sh" not in dests, f"{where}: no shell ssh setup")
        else:
            script = f"{name}-entrypoint.sh"
            check(dests.get(script) == argv[0], f"{where}: ENTRYPOINT runs {script}")
            for f in ("ssh-setup.sh", "ompi-env.sh"):
                check(dests.get(f, "").rsplit("/", 1)[0] == argv[0].rsplit("/", 1)[0],
                      f"{where}: {f} beside the entrypoint")
    env = " ".join(r for w, r in runtime["instrs"] if w == "ENV")
    check("PATH=" in env and "/usr/local/bin" in env, f"{where}: PATH includes /usr/local/bin")
    if name == "worker":
        check("openssh-server" in allruns, f"{where}: installs openssh-server")
        check(any(w == "EXPOSE" and "2222" in r.split() for w, r in runtime["instrs"]),
              f"{where}: EXPOSE 2222")
if len(first_layers) == 2:
    check(first_layers["worker"] == first_layers["launcher"],
          "worker and launcher share their first layers (one apt-get for both)")

where, p = parsed("k8s-agent")
if p is not None:
    delivery, dests = p
    check(delivery["base"] == "scratch", f"{where}: FROM scratch (nothing but the payload)")
    check(not any(w == "RUN" for w, _ in delivery["instrs"]), f"{where}: no RUN")
    check(sorted(dests) == ["k8s-agent", "k8s-agent-deliver", "k8s-agent-sshd", "licenses",
                            "ompi-env.sh", "openmpi-mca-params.conf", "prte-mca-params.conf",
                            "sbom.spdx.json", "sshd", "sshd-auth", "sshd-session"]
          and all(d == "/" + s for s, d in dests.items()),
          f"{where}: the agent, the sshd side, the copier, the presets, ompi-env.sh and the notices at the image root")
    entry = [json.loads(r) for w, r in delivery["instrs"] if w == "ENTRYPOINT"]
    check(entry == [["/k8s-agent-deliver"]], f"{where}: ENTRYPOINT is the copier")
    users = [r for w, r in delivery["instrs"] if w == "USER"]
    check(users and users[-1].split(":")[0].isdigit() and users[-1].split(":")[0] != "0",
          f"{where}: numeric non-root USER")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("PASS")
EOF
exit "$status"
