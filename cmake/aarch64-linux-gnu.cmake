# SPDX-License-Identifier: Apache-2.0
# Cross-compiling for linux-aarch64 on an x86_64 Debian machine with Debian's
# cross toolchain (g++-aarch64-linux-gnu: GCC 12, glibc 2.36 under
# /usr/aarch64-linux-gnu). Used by the "aarch64" preset (CMakePresets.json)
# and by scripts/third_party.sh for libssh2. The static OpenSSL, nghttp2 and
# yaml-cpp come from the arm64 prefix third_party.sh unpacks (never from the
# host's /usr/lib/x86_64-linux-gnu): plugin/third_party.cmake searches only
# there when cross-compiling.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# binutils of the target (the host's strip/nm/objdump read x86 only).
set(CMAKE_AR aarch64-linux-gnu-ar)
set(CMAKE_RANLIB aarch64-linux-gnu-ranlib)
set(CMAKE_STRIP aarch64-linux-gnu-strip)
# try_run and the tests' emulator: qemu-user with the cross glibc.
find_program(K8S_QEMU_AARCH64 qemu-aarch64-static)
if(K8S_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR
      ${K8S_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
# Programs are the host's; libraries and headers the target's only (the
# cross compiler finds its own glibc and libstdc++ by itself), so a library
# of the host is never found by mistake. Packages both: nlohmann/json is
# headers only, the same for every architecture.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
