# sensode_add_test(NAME SOURCES ... [LIBS ...] [LABELS ...] [TIMEOUT s])
# A Qt Test executable run by CTest. Test data paths arrive as compile definitions so tests never
# depend on the working directory.
function(sensode_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE sensode_core Qt6::Test sensode_warnings ${T_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    SENSODE_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
    SENSODE_SHARED_DIR="${SENSODE_SHARED_DIR}"
    SENSODE_RESOURCES_DIR="${PROJECT_SOURCE_DIR}/resources"
    SENSODE_CLI_PATH="$<TARGET_FILE:sensode>")
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  # Native evaluators compiled by long-running tests are cached in the build tree, not in the
  # user's ~/.cache.
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;SENSODE_CACHE_DIR=${CMAKE_BINARY_DIR}/native-cache")
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
