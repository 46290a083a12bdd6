# SPDX-License-Identifier: MIT
# The SBML Test Suite through the CLI, exactly as a user runs it, as one CTest test:
#
#   cmake -DCLI=path/to/sensode -DCASES=.../sbml-test-suite/cases -DMETHOD=cvodes
#         -DREPORT=suite-report-cvodes.tsv [-DJOBS=N] [-DUPDATE=ON] -P run_suite.cmake
#
# Runs `sensode test-suite CASES --method METHOD --report REPORT`, prints its closing line and
# compares the failed cases with the known-failure list next to this script
# (known_failures-METHOD.tsv when present, else known_failures.tsv; `case<TAB>reason`, a header
# line, '#' comments). The test fails when
#   - a case failed that the list does not name (a regression, or a new unknown failure), or
#   - a listed case did not fail (it passes or is skipped now: take it off the list, so the list
#     stays honest).
# -DUPDATE=ON rewrites the list from this run's failures instead of comparing.

cmake_minimum_required(VERSION 3.25)

foreach(var CLI CASES METHOD REPORT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_suite.cmake: -D${var}=... is required")
  endif()
endforeach()

get_filename_component(_here "${CMAKE_CURRENT_LIST_FILE}" DIRECTORY)
set(_known "${_here}/known_failures-${METHOD}.tsv")
if(NOT EXISTS "${_known}")
  set(_known "${_here}/known_failures.tsv")
endif()

set(_cmd "${CLI}" test-suite "${CASES}" --method "${METHOD}" --report "${REPORT}")
if(DEFINED JOBS AND NOT "${JOBS}" STREQUAL "")
  list(APPEND _cmd --jobs "${JOBS}")
endif()
execute_process(COMMAND ${_cmd}
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "sensode test-suite exited with status ${_rc}:\n${_err}")
endif()
string(REGEX MATCH "(^|\n)([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped\n?$" _closing "${_out}")
if(NOT _closing)
  message(FATAL_ERROR "sensode test-suite did not close with 'N passed, N failed, N skipped':\n"
                      "${_out}\n${_err}")
endif()
set(_passed ${CMAKE_MATCH_2})
set(_failed ${CMAKE_MATCH_3})
set(_skipped ${CMAKE_MATCH_4})
message(STATUS "${METHOD}: ${_passed} passed, ${_failed} failed, ${_skipped} skipped "
               "(report: ${REPORT})")

# Reads a TSV file into a list of lines. ';' and brackets are CMake list syntax, so they are
# replaced in the text first (only the first columns matter here).
function(_read_tsv_lines file out_var)
  file(READ "${file}" _text)
  string(REPLACE ";" "," _text "${_text}")
  string(REPLACE "[" "(" _text "${_text}")
  string(REPLACE "]" ")" _text "${_text}")
  string(REPLACE "\r" "" _text "${_text}")
  string(REPLACE "\n" ";" _lines "${_text}")
  set(${out_var} "${_lines}" PARENT_SCOPE)
endfunction()

# This run's status and reason per case.
_read_tsv_lines("${REPORT}" _report_lines)
set(_failed_cases "")
foreach(_line IN LISTS _report_lines)
  if(_line MATCHES "^([0-9]+)\t([a-z]+)\t?(.*)$")
    set(_status_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
    set(_reason_${CMAKE_MATCH_1} "${CMAKE_MATCH_3}")
    if(CMAKE_MATCH_2 STREQUAL "failed")
      list(APPEND _failed_cases "${CMAKE_MATCH_1}")
    endif()
  endif()
endforeach()

if(UPDATE)
  set(_text "case\treason\n")
  foreach(_case IN LISTS _failed_cases)
    string(APPEND _text "${_case}\t${_reason_${_case}}\n")
  endforeach()
  file(WRITE "${_known}" "${_text}")
  list(LENGTH _failed_cases _n)
  message(STATUS "wrote ${_n} known failures to ${_known}")
  return()
endif()

# The known failures.
set(_known_cases "")
if(EXISTS "${_known}")
  _read_tsv_lines("${_known}" _known_lines)
  foreach(_line IN LISTS _known_lines)
    if(_line MATCHES "^([0-9]+)(\t|$)")
      list(APPEND _known_cases "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endif()

set(_unexpected "")
foreach(_case IN LISTS _failed_cases)
  if(NOT _case IN_LIST _known_cases)
    list(APPEND _unexpected "${_case}")
  endif()
endforeach()
set(_stale "")
foreach(_case IN LISTS _known_cases)
  if(DEFINED _status_${_case} AND NOT _status_${_case} STREQUAL "failed")
    list(APPEND _stale "${_case}")
  endif()
endforeach()

list(LENGTH _known_cases _n_known)
list(LENGTH _unexpected _n_unexpected)
list(LENGTH _stale _n_stale)
message(STATUS "known failures listed: ${_n_known} (${_known}); "
               "unexpected failures: ${_n_unexpected}; listed but not failing: ${_n_stale}")

set(_problems "")
foreach(_case IN LISTS _unexpected)
  string(APPEND _problems "  ${_case} failed (not in the known-failure list): ${_reason_${_case}}\n")
endforeach()
foreach(_case IN LISTS _stale)
  string(APPEND _problems "  ${_case} is listed as a known failure but ${_status_${_case}}: "
                          "take it off ${_known}\n")
endforeach()
if(_problems)
  message(FATAL_ERROR "SBML Test Suite (${METHOD}) does not match the known failures:\n${_problems}")
endif()
message(STATUS "SBML Test Suite (${METHOD}) matches the known failures")
