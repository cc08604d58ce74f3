# SPDX-License-Identifier: Apache-2.0
# The libraries of the one shipped binary, all static: libssh2 and libcurl
# built from Debian 13's source packages by scripts/third_party.sh (cached
# outside the tree), OpenSSL from the pinned Debian 12 libssl-dev it
# unpacked into the same prefix (never the host's, whose version is the
# last upgrade's), nghttp2 and yaml-cpp from Debian 12's -dev packages.
# Only glibc stays shared, so the binary runs on any distribution with
# glibc >= 2.34 (tests/portable checks ldd and the symbol versions).
# Defines K8S::libssh2, K8S::libcurl and K8S::yaml-cpp.
#
# Cross-compiling for aarch64 (cmake/aarch64-linux-gnu.cmake, the "aarch64"
# preset): the arm64 prefix of third_party.sh holds OpenSSL, nghttp2 and
# yaml-cpp too (the arm64 builds of the same -dev packages, unpacked there),
# and only that prefix is searched for them.

if(CMAKE_CROSSCOMPILING)
  if(NOT CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
    message(FATAL_ERROR "cross-compiling for ${CMAKE_SYSTEM_PROCESSOR}: "
            "only aarch64 is supported (cmake/aarch64-linux-gnu.cmake)")
  endif()
  set(K8S_THIRD_PARTY_ARCH aarch64)
else()
  set(K8S_THIRD_PARTY_ARCH "")
endif()
execute_process(
  COMMAND "${PROJECT_SOURCE_DIR}/scripts/third_party.sh" ensure
          ${K8S_THIRD_PARTY_ARCH}
  OUTPUT_VARIABLE K8S_THIRD_PARTY_PREFIX
  OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _k8s_tp_rc)
if(NOT _k8s_tp_rc EQUAL 0)
  message(FATAL_ERROR "scripts/third_party.sh ensure failed (exit "
          "${_k8s_tp_rc}); its message above says why")
endif()
message(STATUS "third-party libraries: ${K8S_THIRD_PARTY_PREFIX}")
# A changed recipe gives a new prefix: configure again when the script does.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             "${PROJECT_SOURCE_DIR}/scripts/third_party.sh"
             "${PROJECT_SOURCE_DIR}/scripts/lib/cache.sh"
             "${PROJECT_SOURCE_DIR}/scripts/lib/bookworm_debs.sh")
if(CMAKE_CROSSCOMPILING)
  # The toolchain file is part of the arm64 prefix's key.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               "${PROJECT_SOURCE_DIR}/cmake/aarch64-linux-gnu.cmake")
endif()

# A static archive from Debian 12, by its file name so the .so beside it is
# never picked: from the prefix when `pinned` (OpenSSL always, everything
# when cross-compiling), with the prefix's headers (the host's /usr/include
# has the host package's, of another version), else the host's.
function(k8s_static_library target file package pinned)
  if(pinned OR CMAKE_CROSSCOMPILING)
    find_library(_k8s_lib_${target} NAMES "${file}" NO_CACHE
                 PATHS "${K8S_THIRD_PARTY_PREFIX}/lib" NO_DEFAULT_PATH
                 NO_CMAKE_FIND_ROOT_PATH)
  else()
    find_library(_k8s_lib_${target} NAMES "${file}" NO_CACHE)
  endif()
  k8s_require(_k8s_lib_${target} "${file}" "${package}")
  add_library(${target} STATIC IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${_k8s_lib_${target}}")
  if(pinned OR CMAKE_CROSSCOMPILING)
    set_target_properties(${target} PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${K8S_THIRD_PARTY_PREFIX}/include")
  endif()
endfunction()

find_package(Threads REQUIRED)
k8s_static_library(K8S::crypto libcrypto.a libssl-dev ON)
set_target_properties(K8S::crypto PROPERTIES
  INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS}")
k8s_static_library(K8S::ssl libssl.a libssl-dev ON)
set_target_properties(K8S::ssl PROPERTIES INTERFACE_LINK_LIBRARIES K8S::crypto)
k8s_static_library(K8S::nghttp2 libnghttp2.a libnghttp2-dev OFF)
k8s_static_library(K8S::yaml-cpp libyaml-cpp.a libyaml-cpp-dev OFF)
# yaml-cpp reports no version at run time: --version gives the one of the
# Debian package whose archive is linked ("0.7.0+dfsg-8+b1").
# Cross: the arm64 package's, from the prefix's share/debs.txt.
if(CMAKE_CROSSCOMPILING)
  file(STRINGS "${K8S_THIRD_PARTY_PREFIX}/share/debs.txt" _k8s_yaml_line
       REGEX "^libyaml-cpp-dev ")
  string(REGEX REPLACE "^libyaml-cpp-dev ([^ ]+) .*" "\\1" _k8s_yaml_version
         "${_k8s_yaml_line}")
  set(_k8s_rc 0)
else()
  execute_process(COMMAND dpkg-query -W -f=\${Version} libyaml-cpp-dev
                  OUTPUT_VARIABLE _k8s_yaml_version RESULT_VARIABLE _k8s_rc
                  ERROR_QUIET)
endif()
if(NOT _k8s_rc EQUAL 0 OR _k8s_yaml_version STREQUAL "")
  set(_k8s_yaml_version "unknown")
endif()
set_target_properties(K8S::yaml-cpp PROPERTIES INTERFACE_COMPILE_DEFINITIONS
  "K8S_YAML_CPP_DEB_VERSION=\"${_k8s_yaml_version}\"")

add_library(K8S::libssh2 STATIC IMPORTED GLOBAL)
set_target_properties(K8S::libssh2 PROPERTIES
  IMPORTED_LOCATION "${K8S_THIRD_PARTY_PREFIX}/lib/libssh2.a"
  INTERFACE_INCLUDE_DIRECTORIES "${K8S_THIRD_PARTY_PREFIX}/include"
  INTERFACE_LINK_LIBRARIES K8S::crypto)

add_library(K8S::libcurl STATIC IMPORTED GLOBAL)
set_target_properties(K8S::libcurl PROPERTIES
  IMPORTED_LOCATION "${K8S_THIRD_PARTY_PREFIX}/lib/libcurl.a"
  INTERFACE_INCLUDE_DIRECTORIES "${K8S_THIRD_PARTY_PREFIX}/include"
  INTERFACE_COMPILE_DEFINITIONS CURL_STATICLIB
  INTERFACE_LINK_LIBRARIES "K8S::nghttp2;K8S::ssl;K8S::crypto")

# libstdc++ and libgcc static too, with the two glibc >= 2.35 functions
# they call defined in plugin/base/glibc_compat.cc (forced in with -u, as
# nothing of ours references them). Not under the sanitizers: their
# runtimes are shared and replace operator new/delete, which a static
# libstdc++ would shadow (that build is never shipped).
if(NOT K8S_AGENT_SANITIZE AND NOT K8S_AGENT_FUZZ)
  set(K8S_AGENT_STATIC_RUNTIME ON)
  add_link_options(-static-libstdc++ -static-libgcc
                   LINKER:-u,_dl_find_object LINKER:-u,arc4random)
else()
  set(K8S_AGENT_STATIC_RUNTIME OFF)
endif()
