#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Checks that binaries linking only the option parser carry no libcurl or
# libssh2 code (the parser and its fuzzer must not link the transports).
# Usage: no_transport_symbols.sh CONTROL BINARY...
# CONTROL (k8s-agent) must show both libraries: proof that the pattern
# still finds them, so a pass below means something.
set -u
pattern=' [TtWw] (curl_|Curl_|libssh2_|_libssh2_)'
control=$1
shift
defined() { nm "$1" 2>/dev/null | grep -E "$pattern"; }
for lib in curl_ libssh2_; do
  if ! defined "$control" | grep -q " $lib"; then
    echo "FAIL: no $lib* symbol found in the control $control: check the pattern" >&2
    exit 1
  fi
done
rc=0
for bin in "$@"; do
  # nm must read the binary: an unreadable one would show no symbols.
  if ! nm "$bin" > /dev/null 2>&1; then
    echo "FAIL: nm cannot read $bin" >&2
    rc=1
    continue
  fi
  found=$(defined "$bin" | head -5)
  if [ -n "$found" ]; then
    echo "FAIL: $bin links libcurl or libssh2 code, e.g.:" >&2
    echo "$found" >&2
    rc=1
  else
    echo "ok: $bin: no libcurl or libssh2 symbols"
  fi
done
exit $rc
