# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The Debian mirror the one-time builds fetch from (scripts/third_party.sh, scripts/sshd_build.sh,
# scripts/debian-image.sh, tests/bed/ompi5_root.sh, tests/bed/minbase_root.sh,
# tests/realapi/apiserver_build.sh). Sourced; the caller defines log().
#
# No archive host is written in the repository: by default the builds use the mirror this machine's own apt
# uses, read from its sources when a build needs it, so a machine behind a local mirror or proxy needs no
# setting. One variable overrides it everywhere:
#   K8S_AGENT_DEBIAN_MIRROR           the main archive (http://HOST/debian)
#   K8S_AGENT_DEBIAN_SECURITY_MIRROR  the security archive (default: the sources' *-security URI, else the
#                                     main mirror with "-security" appended to its path)
#   K8S_AGENT_APT_ETC                 the apt directory whose sources are read (default /etc/apt)

# apt_mirror_find main|security: prints the first matching URI of a `deb` entry in the apt sources, in apt's
# order (sources.list, then sources.list.d/*.list and *.sources by name), one-line and deb822 formats alike;
# nothing when none matches. Only http(s) URIs count: cdrom:, file: and the like are no mirror for
# debootstrap. "security" is a URI ending in -security. "main" is Debian's main archive: not a security
# entry, a URI whose last path part says debian, a Debian suite, component main, and no Signed-By other
# than Debian's keyring, so that third-party repositories (which name their own paths, suites, components
# or keys: some use "stable main") are passed over.
apt_mirror_find() {
  local etc="${K8S_AGENT_APT_ETC:-/etc/apt}" f files=()
  for f in "$etc/sources.list" "$etc"/sources.list.d/*; do
    if [[ -f "$f" && ("$f" == *.list || "$f" == *.sources) ]]; then files+=("$f"); fi
  done
  ((${#files[@]})) || return 0
  awk -v want="$1" '
    function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
    # Debian suites and codenames (the -updates/-backports parts of the same archive too).
    function debian_suite(s) {
      sub(/-(updates|backports|proposed-updates)$/, "", s)
      return s ~ /^(stable|testing|unstable|sid|experimental|oldstable|oldoldstable|jessie|stretch|buster|bullseye|bookworm|trixie|forky|duke)$/
    }
    function consider(types, uris, suites, comps, signed, enabled,   u, s, n, i, path) {
      if (found || enabled == "no" || (" " types " ") !~ /[ \t]deb[ \t]/) return
      n = split(uris, u, " ")
      split(suites, s, " ")
      for (i = 1; i <= n; i++) {
        if (u[i] !~ /^https?:\/\//) continue
        path = u[i]
        sub(/\/+$/, "", path)
        if (want == "security") {
          if (path !~ /-security$/) continue
        } else {
          if (path ~ /-security$/ || s[1] ~ /(-security|\/updates)$/) continue
          if (path !~ /debian[^\/]*$/) continue
          if (!debian_suite(s[1]) || (" " comps " ") !~ /[ \t]main[ \t]/) continue
          if (signed != "" && signed !~ /debian-archive-keyring/) continue
        }
        print path
        found = 1
        return
      }
    }
    function flush() {
      if (stanza)
        consider(trim(f["types"]), f["uris"], f["suites"], f["components"], trim(f["signed-by"]), trim(f["enabled"]))
      split("", f)
      stanza = 0
      last = ""
    }
    FNR == 1 { flush() }
    # deb822: stanzas of "Field: value" separated by blank lines; indented lines continue the field above.
    FILENAME ~ /\.sources$/ {
      if ($0 ~ /^#/) next
      if ($0 ~ /^[ \t]*$/) { flush(); next }
      if ($0 ~ /^[ \t]/) { if (last != "") f[last] = f[last] " " $0; next }
      i = index($0, ":")
      if (i == 0) next
      last = tolower(substr($0, 1, i - 1))
      f[last] = substr($0, i + 1)
      stanza = 1
      next
    }
    # One-line: deb [opt=value ...] URI SUITE COMPONENT...
    {
      sub(/#.*/, "")
      if ($1 != "deb") next
      line = $0
      opts = ""
      if (match(line, /\[[^\]]*\]/)) {
        opts = substr(line, RSTART + 1, RLENGTH - 2)
        line = substr(line, 1, RSTART - 1) " " substr(line, RSTART + RLENGTH)
      }
      n = split(line, w, " ")
      comps = ""
      for (i = 4; i <= n; i++) comps = comps " " w[i]
      signed = ""
      if (match(opts, /signed-by=[^ \t]*/)) signed = substr(opts, RSTART + 10, RLENGTH - 10)
      consider("deb", w[2], w[3], comps, signed, "")
    }
    END { flush() }
  ' "${files[@]}"
}

# apt_mirror: prints the Debian mirror's base URL (no trailing slash), or says what to set and fails.
apt_mirror() {
  local m="${K8S_AGENT_DEBIAN_MIRROR:-}"
  [[ -n "$m" ]] || m="$(apt_mirror_find main)"
  if [[ -z "$m" ]]; then
    log "no Debian mirror known: the apt sources in ${K8S_AGENT_APT_ETC:-/etc/apt} name no 'deb' entry of" \
      "Debian's main archive; set K8S_AGENT_DEBIAN_MIRROR to one this machine reaches (http://HOST/debian)"
    return 1
  fi
  printf '%s\n' "${m%/}"
}

# apt_mirror_security: prints the Debian security mirror's base URL, or says what to set and fails.
apt_mirror_security() {
  local m="${K8S_AGENT_DEBIAN_SECURITY_MIRROR:-}"
  [[ -n "$m" ]] || m="$(apt_mirror_find security)"
  if [[ -z "$m" ]]; then
    # Mirrors that carry the security archive serve it beside the main one (.../debian-security).
    m="$(apt_mirror)" || {
      log "(the security mirror is then that path + -security; K8S_AGENT_DEBIAN_SECURITY_MIRROR sets another)"
      return 1
    }
    m="$m-security"
  fi
  printf '%s\n' "${m%/}"
}
