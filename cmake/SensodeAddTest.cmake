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
  # The test code itself at -O1 in Release: the unit tests' files were a third of the build's CPU
  # time (tst_steady_state.cpp: 26 s at -O3, 21 s at -O1, 13 s of it parsing), and the numerics
  # they check live in sensode_core, which keeps -O3. Same floating-point results either way (no
  # -ffast-math; Eigen vectorises by its own intrinsics at every level).
  target_compile_options(${name} PRIVATE $<$<CONFIG:Release>:-O1>)
  # In the sanitizer build, the test code itself without UBSan's checks (ASan stays): they cost
  # 40 % of a test file's compile (tst_sensitivities.cpp: 36 s of CPU with address,undefined,
  # 22 s with address only) and check the test's own arithmetic, not the core's, which keeps
  # every sanitizer of SENSODE_SANITIZE.
  if(SENSODE_SANITIZE MATCHES "undefined")
    target_compile_options(${name} PRIVATE -fno-sanitize=undefined)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  # Native evaluators compiled by long-running tests are cached in the build tree, not in the
  # user's ~/.cache; cc -O2 compiles end with the test process instead of going on after it
  # (docs/native-cache.md) and taking a core from the next tests (tst_native_cache tests that).
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;SENSODE_CACHE_DIR=${CMAKE_BINARY_DIR}/native-cache;SENSODE_NATIVE_DETACH=0")
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
