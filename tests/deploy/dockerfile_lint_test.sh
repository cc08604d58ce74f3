#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Lints the Dockerfiles without a Docker engine: every COPY source exists
# in the repository (the build context) and is not dockerignored, the build
# stage copies everything the top-level CMakeLists.txt needs and installs
# every -dev package it requires, the runtime stages hold what the brief of
# each image says (uid 1000, sshd on 2222, k8s-agent, presets), and the
# entrypoint scripts parse (bash -n, shellcheck when installed).
# Usage: dockerfile_lint_test.sh [REPO_DIR]
set -euo pipefail

repo="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
status=0
for script in "$repo"/images/*.sh; do
  bash -n "$script" || { echo "FAIL: $script does not parse"; status=1; }
done
for script in "$repo"/images/*-entrypoint.sh; do
  [[ -x "$script" ]] || { echo "FAIL: $script is not executable"; status=1; }
done
if command -v shellcheck >/dev/null; then
  (cd "$repo" && shellcheck -x images/*.sh) || { echo "FAIL: shellcheck images/*.sh"; status=1; }
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

top = open(os.path.join(repo, "CMakeLists.txt")).read()
outside_tests = top.split("if(BUILD_TESTING)")[0]
needed_dirs = set(re.findall(r"add_subdirectory\((\w+)\)", outside_tests))
needed_dirs |= {m.split("/")[0] for m in re.findall(r"include\((\w+/[^)\s]+\.cmake)\)", top)}
dev_packages = set()
for pkgs in re.findall(r'k8s_require\([^)]*"([^"]+)"\)', outside_tests):
    dev_packages |= set(pkgs.split())
# The static third-party libraries: what scripts/third_party.sh builds against
# (plugin/third_party.cmake runs it, so the build stage needs it too).
third_party = open(os.path.join(repo, "scripts", "third_party.sh")).read()
dev_packages |= set(re.search(r'TP_DEV_PACKAGES="([^"]+)"', third_party).group(1).split())
dev_packages.add("dpkg-dev")

for name in ("worker", "launcher"):
    path = os.path.join(repo, "images", f"{name}.Dockerfile")
    where = f"{name}.Dockerfile"
    check(os.path.exists(path), f"{where} exists")
    if not os.path.exists(path):
        continue
    check(open(path).readline().startswith("# SPDX-License-Identifier:"), f"{where} starts with SPDX")
    ignore_file = path + ".dockerignore"
    patterns = [l.strip() for l in open(ignore_file) if l.strip() and not l.startswith("#")] \
        if os.path.exists(ignore_file) else []
    st = stages(instructions(path))
    check(len(st) == 2, f"{where}: build and runtime stages")
    for s in st:
        check("bookworm" in s["base"] and s["base"].startswith("debian"),
              f"{where}: FROM {s['base']} is Debian bookworm")
    check(all(w != "ADD" for s in st for w, _ in s["instrs"]), f"{where}: COPY only, no ADD")
    names = [s["name"] for s in st if s["name"]]
    copied_dirs, runtime_dests = set(), {}
    for i, s in enumerate(st):
        for word, rest in s["instrs"]:
            if word != "COPY":
                continue
            flags, srcs, dest = copy_parts(rest)
            src_stage = [f.split("=", 1)[1] for f in flags if f.startswith("--from=")]
            if src_stage:
                check(src_stage[0] in names[:i + 1], f"{where}: COPY --from={src_stage[0]} names an earlier stage")
                for src in srcs:
                    runtime_dests[src] = dest
                continue
            for src in srcs:
                matches = glob.glob(os.path.join(repo, src))
                check(bool(matches), f"{where}: COPY source {src} exists")
                check(not ignored(src, patterns), f"{where}: COPY source {src} is not dockerignored")
                copied_dirs.add(src.rstrip("/").split("/")[0])
                if i == len(st) - 1:
                    for m in matches:
                        base = os.path.basename(m)
                        runtime_dests[src] = dest + (base if dest.endswith("/") else "")
    build, runtime = st[0], st[-1]
    check(any(w == "COPY" and r.split()[0] == "scripts/third_party.sh" for w, r in build["instrs"]),
          f"{where}: build stage copies scripts/third_party.sh")
    check(needed_dirs <= copied_dirs, f"{where}: build stage copies {sorted(needed_dirs)}")
    build_runs = " ".join(r for w, r in build["instrs"] if w == "RUN")
    for pkg in sorted(dev_packages):
        check(re.search(rf"(^|\s){re.escape(pkg)}(\s|$)", build_runs) is not None,
              f"{where}: build stage installs {pkg}")
    check("-DBUILD_TESTING=OFF" in build_runs and "--target k8s-agent" in build_runs,
          f"{where}: build stage builds only k8s-agent")
    runs = " ".join(r for w, r in runtime["instrs"] if w == "RUN")
    check(re.search(r"(^|\s)openmpi-bin(\s|$)", runs) is not None,
          f"{where}: runtime installs openmpi-bin")
    # The binary is static but for glibc: no library package at run time.
    for pkg in ("libcurl4", "libssh2-1", "libyaml-cpp0.7"):
        check(re.search(rf"(^|\s){re.escape(pkg)}(\s|$)", runs) is None,
              f"{where}: runtime does not install {pkg}")
    check(re.search(r"useradd\b.*--uid 1000\b.*\bmpiuser\b", runs) is not None,
          f"{where}: creates mpiuser with uid 1000")
    users = [r for w, r in runtime["instrs"] if w == "USER"]
    check(users and users[-1].split(":")[0] == "1000", f"{where}: runs as USER 1000 (numeric)")
    check(runtime_dests.get("/src/build/launcher/k8s-agent") == "/usr/local/bin/k8s-agent",
          f"{where}: k8s-agent at /usr/local/bin/k8s-agent")
    for preset in ("openmpi-mca-params.conf", "prte-mca-params.conf"):
        check(runtime_dests.get(f"ompi-conf/{preset}") == f"/etc/openmpi/{preset}",
              f"{where}: {preset} in /etc/openmpi")
    entry = [r for w, r in runtime["instrs"] if w == "ENTRYPOINT"]
    check(len(entry) == 1, f"{where}: one ENTRYPOINT")
    if entry:
        argv = json.loads(entry[0])
        script = f"images/{name}-entrypoint.sh"
        check(runtime_dests.get(script) == argv[0], f"{where}: ENTRYPOINT runs {script}")
        check(runtime_dests.get("images/ssh-setup.sh", "").rsplit("/", 1)[0] == argv[0].rsplit("/", 1)[0],
              f"{where}: ssh-setup.sh beside the entrypoint")
    env = " ".join(r for w, r in runtime["instrs"] if w == "ENV")
    check("PATH=" in env and "/usr/local/bin" in env, f"{where}: PATH includes /usr/local/bin")
    if name == "worker":
        check("openssh-server" in runs, f"{where}: installs openssh-server")
        check(any(w == "EXPOSE" and "2222" in r.split() for w, r in runtime["instrs"]),
              f"{where}: EXPOSE 2222")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("PASS")
EOF
exit "$status"
