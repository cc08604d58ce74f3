# SPDX-License-Identifier: Apache-2.0
# Install rules for the MCA presets and docs, and the CPack .deb package.
# Included from the top-level CMakeLists.txt after the k8s-agent target is
# defined (launcher/ installs the binary into bin/).

include(GNUInstallDirs)

set(_k8s_presets
    ${PROJECT_SOURCE_DIR}/ompi-conf/openmpi-mca-params.conf
    ${PROJECT_SOURCE_DIR}/ompi-conf/prte-mca-params.conf)

# Always: the presets as reference copies, for users to install or diff.
install(FILES ${_k8s_presets} ${PROJECT_SOURCE_DIR}/ompi-conf/README.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/k8s-agent/ompi-conf)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/SECURITY.md
              ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Only when asked: the presets in Open MPI's sysconfdir, where mpirun reads
# them. An existing file there (Debian's openmpi-common ships one, and users
# edit it) is never replaced: the preset goes beside it as
# NAME.k8s-agent-new, and the install says so. Component "ompi-sysconf":
# with the option OFF it is still available on request through
#   cmake --install BUILD --component ompi-sysconf
# and it is never part of the .deb (a package must not write another
# package's conffiles; see CPACK_INSTALL_CMAKE_PROJECTS below).
option(K8S_AGENT_INSTALL_OMPI_CONF
       "Also install the MCA presets into Open MPI's sysconfdir" OFF)
set(K8S_AGENT_OMPI_SYSCONFDIR "/etc/openmpi" CACHE PATH
    "Open MPI's sysconfdir (Debian: /etc/openmpi)")
if(K8S_AGENT_INSTALL_OMPI_CONF)
  set(_k8s_sysconf_exclude "")
else()
  set(_k8s_sysconf_exclude EXCLUDE_FROM_ALL)
endif()
install(CODE "set(_k8s_presets \"${_k8s_presets}\")
set(_k8s_sysconfdir \"${K8S_AGENT_OMPI_SYSCONFDIR}\")"
        COMPONENT ompi-sysconf ${_k8s_sysconf_exclude})
install(CODE [[
  # file(INSTALL) prefixes DESTDIR itself; the checks need it spelled out.
  set(_dir "${_k8s_sysconfdir}")
  foreach(_src IN LISTS _k8s_presets)
    get_filename_component(_name "${_src}" NAME)
    set(_dst "$ENV{DESTDIR}${_dir}/${_name}")
    if(NOT EXISTS "${_dst}")
      file(INSTALL DESTINATION "${_dir}" TYPE FILE FILES "${_src}")
      continue()
    endif()
    file(SHA256 "${_src}" _want)
    file(SHA256 "${_dst}" _have)
    if(_want STREQUAL _have)
      message(STATUS "Up-to-date: ${_dst}")
      continue()
    endif()
    message(NOTICE
      "k8s-agent: keeping the existing ${_dst}; the k8s-agent preset is "
      "installed as ${_dst}.k8s-agent-new. Merge its settings into "
      "${_name} (or replace the file) to make k8s-agent the default agent.")
    file(INSTALL DESTINATION "${_dir}" TYPE FILE FILES "${_src}"
         RENAME "${_name}.k8s-agent-new")
  endforeach()
]] COMPONENT ompi-sysconf ${_k8s_sysconf_exclude})

# --- .deb: cpack -G DEB in the build directory.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME k8s-agent)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "k8s-agent")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Only the default component: never the sysconfdir presets.
set(CPACK_INSTALL_CMAKE_PROJECTS
    "${CMAKE_BINARY_DIR};${PROJECT_NAME};Unspecified;/")
set(CPACK_STRIP_FILES ON)
set(K8S_AGENT_DEB_MAINTAINER "k8s-agent maintainers <maintainers@k8s-agent.invalid>"
    CACHE STRING "Maintainer field of the .deb")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${K8S_AGENT_DEB_MAINTAINER}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"Open MPI remote launch agent for Kubernetes
 k8s-agent replaces ssh as Open MPI's plm_rsh_agent (and MPICH hydra's
 launcher) on Kubernetes. For each host mpirun starts a daemon on, it finds
 the pod through the pods API, waits (watching, per host) until the pod is
 Running and its sshd completes a handshake, then runs the command over SSH
 and returns its exit status. A pod that can never start (Failed,
 ImagePullBackOff, ...) fails the launch at once with the reason.
 .
 MCA presets for Open MPI 4 and 5 are in /usr/share/k8s-agent/ompi-conf.")
# Static but for glibc (plugin/third_party.cmake); nothing newer than
# GLIBC_2.34 (tests/portable). dpkg-shlibdeps, when present, agrees.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34)")
find_program(K8S_AGENT_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(K8S_AGENT_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
# mpirun is the usual caller but not the only one (MPICH, --hostfile mode).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin")
include(CPack)
