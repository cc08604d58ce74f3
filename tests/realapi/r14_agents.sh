#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# realapi r14, inside the launcher pod: N `k8s-agent --wait-only` at once, one per JobSet host; each one's
# exit status goes to OUT/agents.rc as "INDEX RC".
#   r14_agents.sh AGENT KNOWN_HOSTS OUT N
agent=$1 kh=$2 out=$3 n=$4 i=0
while [ "$i" -lt "$n" ]; do
  (
    "$agent" --wait-only --timeout 120s --trace "$out/trace.jsonl" -o "UserKnownHostsFile=$kh" \
      "js-node-0-$i.js" </dev/null 2>>"$out/agents.err"
    echo "$i $?" >>"$out/agents.rc"
  ) &
  i=$((i + 1))
done
wait
