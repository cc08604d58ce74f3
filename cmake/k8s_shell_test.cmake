# SPDX-License-Identifier: Apache-2.0
# The one way to register a test that runs a script (bash, sh, python3):
# every tier's scenarios, and the script checks of the unit label.
#
# A script says "skipped" by exiting 77 (tests/lib/testlib.sh's skip) where
# the machine cannot run it: not root, a tool or a cache missing. ctest
# counts that as a failure unless the test has SKIP_RETURN_CODE 77. When
# each registration set it by hand, some forgot, and their tests failed as
# non-root instead of skipping; so it is set here only, and the unit
# test registration.shell_tests (tests/registration) fails on a script
# test registered any other way.

# k8s_shell_test(NAME name COMMAND program arg... LABELS label...
#                TIMEOUT seconds [RUN_SERIAL] [ENVIRONMENT VAR=value...]
#                [FIXTURES_SETUP f...] [FIXTURES_REQUIRED f...]
#                [FIXTURES_CLEANUP f...] [REQUIRED_FILES file...])
# NAME, COMMAND, LABELS and TIMEOUT are required: a test without a bound
# runs for ctest's default 1500 s when it hangs. The command runs in the
# calling directory's build dir, as add_test's does. Arguments are CMake
# list items: one that is empty or holds a ';' cannot be passed.
function(k8s_shell_test)
  cmake_parse_arguments(arg "RUN_SERIAL" "NAME;TIMEOUT"
    "COMMAND;LABELS;ENVIRONMENT;FIXTURES_SETUP;FIXTURES_REQUIRED;FIXTURES_CLEANUP;REQUIRED_FILES"
    ${ARGN})
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "k8s_shell_test(${arg_NAME}): unknown arguments "
            "${arg_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required NAME COMMAND LABELS TIMEOUT)
    if(NOT arg_${required})
      message(FATAL_ERROR "k8s_shell_test(${arg_NAME}): no ${required}")
    endif()
  endforeach()
  add_test(NAME ${arg_NAME} COMMAND ${arg_COMMAND})
  set_tests_properties(${arg_NAME} PROPERTIES
    SKIP_RETURN_CODE 77 LABELS "${arg_LABELS}" TIMEOUT ${arg_TIMEOUT})
  if(arg_RUN_SERIAL)
    set_tests_properties(${arg_NAME} PROPERTIES RUN_SERIAL TRUE)
  endif()
  foreach(property ENVIRONMENT FIXTURES_SETUP FIXTURES_REQUIRED
          FIXTURES_CLEANUP REQUIRED_FILES)
    if(arg_${property})
      set_tests_properties(${arg_NAME} PROPERTIES
        ${property} "${arg_${property}}")
    endif()
  endforeach()
endfunction()

# k8s_shell_scenarios(PREFIX prefix COMMAND program arg...
#                     SCENARIOS scenario[:seconds]... [TIMEOUT seconds]
#                     LABELS label... [k8s_shell_test's other arguments])
# One k8s_shell_test per scenario: test PREFIXscenario runs
# COMMAND... scenario, with the scenario's own timeout where it gives one
# (a tier's table of name:seconds) and TIMEOUT otherwise.
function(k8s_shell_scenarios)
  set(lists LABELS ENVIRONMENT FIXTURES_SETUP FIXTURES_REQUIRED
      FIXTURES_CLEANUP REQUIRED_FILES)
  cmake_parse_arguments(arg "RUN_SERIAL" "PREFIX;TIMEOUT"
    "COMMAND;SCENARIOS;${lists}" ${ARGN})
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "k8s_shell_scenarios(${arg_PREFIX}): unknown "
            "arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(common "")
  if(arg_RUN_SERIAL)
    list(APPEND common RUN_SERIAL)
  endif()
  foreach(property IN LISTS lists)
    if(arg_${property})
      list(APPEND common ${property} ${arg_${property}})
    endif()
  endforeach()
  foreach(entry IN LISTS arg_SCENARIOS)
    string(REPLACE ":" ";" parts "${entry}")
    list(GET parts 0 scenario)
    list(LENGTH parts fields)
    if(fields GREATER 1)
      list(GET parts 1 timeout)
    else()
      set(timeout ${arg_TIMEOUT})
    endif()
    k8s_shell_test(NAME ${arg_PREFIX}${scenario}
                   COMMAND ${arg_COMMAND} ${scenario}
                   TIMEOUT ${timeout} ${common})
  endforeach()
endfunction()
