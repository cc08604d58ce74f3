#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The real programs on real files: `k8s-agent inject` execs
# k8s-agent-inject from its own directory; stdin and FILE... give the same
# output; a second run changes no byte; bad YAML and unknown options exit
# 255 naming the problem; unknown kinds are warned about on stderr only;
# a host named "inject" with a command is still the ssh form.
# Usage: inject_cli_test.sh K8S_AGENT K8S_AGENT_INJECT REPO_DIR
set -euo pipefail
agent="$1" inject="$2" repo="$3"
examples="$repo/images/k8s/examples"
tmp="$(mktemp -d /tmp/k8s-inject-cli.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The two programs side by side, as installed (bin/).
cp "$agent" "$tmp/k8s-agent"
cp "$inject" "$tmp/k8s-agent-inject"

"$tmp/k8s-agent" inject <"$examples/mpijob-delivery.yaml" >"$tmp/stdin.yaml" 2>"$tmp/stdin.err" ||
  fail "k8s-agent inject < mpijob-delivery.yaml: $(cat "$tmp/stdin.err")"
"$tmp/k8s-agent" inject "$examples/mpijob-delivery.yaml" >"$tmp/file.yaml"
cmp "$tmp/stdin.yaml" "$tmp/file.yaml" || fail "stdin and FILE differ"
"$tmp/k8s-agent-inject" - <"$examples/mpijob-delivery.yaml" >"$tmp/direct.yaml"
cmp "$tmp/stdin.yaml" "$tmp/direct.yaml" || fail "k8s-agent inject and k8s-agent-inject differ"
grep -q 'OMPI_MCA_plm_rsh_agent' "$tmp/stdin.yaml" || fail "no agent setting in the output"
echo "ok: k8s-agent inject, stdin, FILE"

for f in "$examples"/*.yaml; do
  "$tmp/k8s-agent" inject --rbac --sshd "$f" >"$tmp/once.yaml" 2>/dev/null
  "$tmp/k8s-agent" inject --rbac --sshd "$tmp/once.yaml" >"$tmp/twice.yaml" 2>/dev/null
  cmp "$tmp/once.yaml" "$tmp/twice.yaml" || fail "$(basename "$f"): a second run changed the output"
done
echo "ok: every example, twice, byte-identical"

# Several files, in order, one stream.
"$tmp/k8s-agent" inject "$examples/delivery-job.yaml" "$examples/jobset.yaml" >"$tmp/two.yaml" 2>/dev/null
[[ "$(grep -c '^kind: ' "$tmp/two.yaml")" == 7 ]] || fail "two files: $(grep -c '^kind: ' "$tmp/two.yaml") objects, not 7"
echo "ok: several files"

printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n' >"$tmp/deploy.yaml"
"$tmp/k8s-agent" inject "$tmp/deploy.yaml" >"$tmp/deploy.out" 2>"$tmp/deploy.err"
cmp "$tmp/deploy.yaml" "$tmp/deploy.out" || fail "an unknown kind was changed"
grep -q 'document 1 (Deployment/web): kind Deployment' "$tmp/deploy.err" ||
  fail "no warning for the unknown kind: $(cat "$tmp/deploy.err")"
echo "ok: unknown kind passes through, warned on stderr"

printf 'kind: Service\nmetadata: {name: s}\n---\nkind: Job\nspec: [x\n' >"$tmp/bad.yaml"
set +e
"$tmp/k8s-agent" inject "$tmp/bad.yaml" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
set -e
[[ $rc == 255 ]] || fail "bad YAML exited $rc, not 255"
grep -q "bad.yaml: document 2: line " "$tmp/bad.err" || fail "bad YAML: $(cat "$tmp/bad.err")"
[[ ! -s "$tmp/bad.out" ]] || fail "bad YAML wrote output"
echo "ok: bad YAML: 255, $(cat "$tmp/bad.err")"

set +e
"$tmp/k8s-agent" inject --bogus </dev/null >/dev/null 2>"$tmp/opt.err"
rc=$?
set -e
if [[ $rc != 255 ]] || ! grep -q "unknown option --bogus" "$tmp/opt.err"; then
  fail "unknown option: $rc $(cat "$tmp/opt.err")"
fi
"$tmp/k8s-agent" inject --help >"$tmp/help.txt"
grep -q '^Usage: k8s-agent inject' "$tmp/help.txt" || fail "inject --help"
"$tmp/k8s-agent" --help >"$tmp/help.txt"
grep -q 'k8s-agent inject' "$tmp/help.txt" || fail "k8s-agent --help does not mention inject"
echo "ok: options"

# "inject" followed by a command word is a host named inject: the agent's
# own path (it fails finding a cluster, not running the injector).
set +e
env -i HOME="$tmp" KUBECONFIG="$tmp/none" "$tmp/k8s-agent" inject hostname >/dev/null 2>"$tmp/host.err"
set -e
if ! grep -q "inject: finding the Kubernetes API" "$tmp/host.err"; then
  fail "ssh form with host inject: $(cat "$tmp/host.err")"
fi
echo "ok: a host named inject with a command is the ssh form"

# Without k8s-agent-inject beside it: one line saying what to install.
rm "$tmp/k8s-agent-inject"
set +e
"$tmp/k8s-agent" inject </dev/null >/dev/null 2>"$tmp/missing.err"
rc=$?
set -e
if [[ $rc != 255 ]] || ! grep -q "install k8s-agent-inject beside k8s-agent" "$tmp/missing.err"; then
  fail "missing k8s-agent-inject: $rc $(cat "$tmp/missing.err")"
fi
echo "ok: missing k8s-agent-inject named"
