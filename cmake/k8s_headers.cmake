# SPDX-License-Identifier: Apache-2.0
# Per-layer include paths, so a target can include only what it links.
#
# Sources include by path from the top ("plugin/base/log.h"), yet no target
# sees the top of the tree: k8s_target_headers links each directory it is
# given alone into an include root of its own in the build tree
#   build/include/plugin.base/plugin/base -> <source>/plugin/base
# and gives the target that root. Through PUBLIC/INTERFACE the root travels
# with target_link_libraries, so k8s_kube (which links k8s_base) finds
# "plugin/base/..." while "plugin/ssh/..." is "No such file" there.
# tests/layering checks this for every layer. k8s_header_only_target,
# below, does the same for single headers of plain structs.
#
#   k8s_target_headers(TARGET PUBLIC|PRIVATE|INTERFACE DIR...)
# DIR is relative to the top of the source tree ("plugin/kube").
function(k8s_target_headers target scope)
  foreach(dir IN LISTS ARGN)
    if(NOT IS_DIRECTORY "${PROJECT_SOURCE_DIR}/${dir}")
      message(FATAL_ERROR "k8s_target_headers(${target}): no directory ${dir}")
    endif()
    string(REPLACE "/" "." name "${dir}")
    set(root "${CMAKE_BINARY_DIR}/include/${name}")
    get_filename_component(parent "${root}/${dir}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${dir}" "${root}/${dir}" SYMBOLIC)
    target_include_directories(${target} ${scope} "${root}")
  endforeach()
endfunction()

# Named headers alone as TARGET's include root, each linked into a root of
# the target's own
#   build/include/TARGET/plugin/kube/cluster_config.h -> <source>/...
# so a target that links TARGET can include those headers and no other file
# of their directory.
#   k8s_target_header_files(TARGET PUBLIC|INTERFACE FILE...)
# FILE is relative to the top of the source tree ("plugin/kube/x.h").
function(k8s_target_header_files target scope)
  set(root "${CMAKE_BINARY_DIR}/include/${target}")
  foreach(file IN LISTS ARGN)
    if(NOT EXISTS "${PROJECT_SOURCE_DIR}/${file}")
      message(FATAL_ERROR "k8s_target_header_files(${target}): no file ${file}")
    endif()
    get_filename_component(parent "${root}/${file}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${file}" "${root}/${file}" SYMBOLIC)
  endforeach()
  target_include_directories(${target} ${scope} "${root}")
endfunction()

# A header-only target of plain structs: k8s_target_header_files of an
# INTERFACE library (the launcher's option parser sees cluster_config.h,
# not kube_client.h). The headers may include only headers of the layers
# the target links.
#   k8s_header_only_target(TARGET FILE...)
function(k8s_header_only_target target)
  add_library(${target} INTERFACE)
  k8s_target_header_files(${target} INTERFACE ${ARGN})
endfunction()
