# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The tests' private podman settings for this kind of machine, never part
# of what users run: sourced by the image tests, which export
# CONTAINERS_CONF to the file it writes.
#   - crun (Debian's default) refuses the hybrid cgroup v1/v2 layout these
#     machines have ("cgroups in hybrid mode not supported"): use runc.
#   - root here lacks CAP_SYS_RESOURCE, so runc cannot raise RLIMIT_NOFILE or
#     RLIMIT_NPROC above the hard limits ("error setting rlimit type 7"):
#     default to exactly the hard limits.

# Writes the file into DIR and exports CONTAINERS_CONF.
podman_test_conf() {
  local dir="$1" nofile nproc
  nofile="$(ulimit -Hn)"
  nproc="$(ulimit -Hu)"
  [[ "$nofile" == unlimited ]] && nofile=1048576
  # runc was seen failing at this machine's hard nproc (96365) but not at
  # 32768, which is more than any test container needs.
  [[ "$nproc" == unlimited || "$nproc" -gt 32768 ]] && nproc=32768
  mkdir -p "$dir"
  printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n[engine]\nruntime = "runc"\n' \
    "$nofile" "$nofile" "$nproc" "$nproc" >"$dir/containers.conf"
  export CONTAINERS_CONF="$dir/containers.conf"
}
