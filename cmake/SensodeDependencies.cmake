# Third-party libraries, all from Debian 12 packages (scripts/install-deps.sh installs them).
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
# libSBML's own CMake config drags in imported targets for its compression libraries; the
# library and header are all we need.
find_path(LIBSBML_INCLUDE_DIR sbml/SBMLTypes.h REQUIRED)
find_library(LIBSBML_LIB sbml REQUIRED)
add_library(sensode_libsbml INTERFACE)
target_include_directories(sensode_libsbml SYSTEM INTERFACE ${LIBSBML_INCLUDE_DIR})
target_link_libraries(sensode_libsbml INTERFACE ${LIBSBML_LIB})

# SUNDIALS: the optimised build of Debian's own source that scripts/install-sundials.sh puts in
# SENSODE_SUNDIALS_PREFIX comes first (Debian's libsundials-dev is compiled without
# optimisation); libsundials-dev is the fallback. The prefix is searched first by every
# find_path/find_library below (CMAKE_PREFIX_PATH), so other SUNDIALS_* libraries found later
# come from the same build; results cached from before the prefix existed are dropped.
set(SENSODE_SUNDIALS_PREFIX "/opt/sensode/sundials" CACHE PATH
    "Optimised SUNDIALS (scripts/install-sundials.sh); used when present")
if(EXISTS "${SENSODE_SUNDIALS_PREFIX}/include/cvodes/cvodes.h")
  list(PREPEND CMAKE_PREFIX_PATH "${SENSODE_SUNDIALS_PREFIX}")
  get_cmake_property(_sensode_cache_vars CACHE_VARIABLES)
  foreach(_var IN LISTS _sensode_cache_vars)
    if(_var MATCHES "^SUNDIALS_(.*_)?(LIB|INCLUDE_DIR)$"
       AND NOT "${${_var}}" MATCHES "^${SENSODE_SUNDIALS_PREFIX}")
      unset(${_var} CACHE)
    endif()
  endforeach()
  message(STATUS "SUNDIALS: optimised build in ${SENSODE_SUNDIALS_PREFIX}")
else()
  message(STATUS "SUNDIALS: system libsundials-dev, built without optimisation "
                 "(scripts/install-sundials.sh builds an optimised one)")
endif()
# Debian's libsundials-dev ships no usable CMake package config for every component, so the
# libraries are found directly.
find_path(SUNDIALS_INCLUDE_DIR cvodes/cvodes.h REQUIRED)
find_library(SUNDIALS_CVODES_LIB sundials_cvodes REQUIRED)
find_library(SUNDIALS_IDAS_LIB sundials_idas REQUIRED)  # algebraic rules, fast reactions
find_library(SUNDIALS_NVECSERIAL_LIB sundials_nvecserial REQUIRED)
find_library(SUNDIALS_SUNLINSOLKLU_LIB sundials_sunlinsolklu REQUIRED)
find_library(SUNDIALS_SUNLINSOLDENSE_LIB sundials_sunlinsoldense REQUIRED)
find_library(SUNDIALS_SUNMATRIXSPARSE_LIB sundials_sunmatrixsparse REQUIRED)
find_library(SUNDIALS_SUNMATRIXDENSE_LIB sundials_sunmatrixdense REQUIRED)
find_library(KLU_LIB klu REQUIRED)
find_path(KLU_INCLUDE_DIR klu.h PATH_SUFFIXES suitesparse REQUIRED)
add_library(sensode_sundials INTERFACE)
target_include_directories(sensode_sundials SYSTEM INTERFACE ${SUNDIALS_INCLUDE_DIR}
  ${KLU_INCLUDE_DIR})
target_link_libraries(sensode_sundials INTERFACE
  ${SUNDIALS_CVODES_LIB} ${SUNDIALS_IDAS_LIB} ${SUNDIALS_SUNLINSOLKLU_LIB} ${SUNDIALS_SUNLINSOLDENSE_LIB}
  ${SUNDIALS_SUNMATRIXSPARSE_LIB} ${SUNDIALS_SUNMATRIXDENSE_LIB} ${SUNDIALS_NVECSERIAL_LIB}
  ${KLU_LIB})

# PEtab problem files (core/petab/yaml_file.cpp). Debian's libyaml-cpp-dev 0.7 exports the
# target `yaml-cpp`.
find_package(yaml-cpp 0.6 REQUIRED)

# Parameter estimation (core/estimation): NLopt's bounded L-BFGS (libnlopt-dev's CMake config
# exports NLopt::nlopt). The least-squares optimiser is Sensode's own, on Eigen
# (docs/estimation.md says why).
find_package(NLopt REQUIRED)

if(SENSODE_BUILD_GUI OR SENSODE_BUILD_TESTS)
  find_package(Qt6 REQUIRED COMPONENTS Core Gui Widgets Test Charts Svg)
endif()

# libtcc (libtcc-dev): the native evaluators' quick tier compiles C in memory in milliseconds
# (core/symbolic/tcc_jit.h). Optional: without it models evaluate on the tape interpreter until
# the background cc -O2 is done.
find_path(LIBTCC_INCLUDE_DIR libtcc.h)
find_library(LIBTCC_LIB NAMES libtcc.a tcc)
add_library(sensode_libtcc INTERFACE)
if(LIBTCC_INCLUDE_DIR AND LIBTCC_LIB)
  target_include_directories(sensode_libtcc SYSTEM INTERFACE ${LIBTCC_INCLUDE_DIR})
  target_link_libraries(sensode_libtcc INTERFACE ${LIBTCC_LIB} ${CMAKE_DL_LIBS})
  target_compile_definitions(sensode_libtcc INTERFACE SENSODE_HAVE_LIBTCC)
  # Debian ships libtcc only as a static archive of position-independent-executable code, whose
  # PC-relative references to its own globals cannot be preempted in a shared object: hidden
  # (--exclude-libs), they bind inside the plugin modules that link the core.
  target_link_options(sensode_libtcc INTERFACE "LINKER:--exclude-libs,libtcc.a")
else()
  message(STATUS "libtcc not found (apt-get install libtcc-dev): native code only after cc -O2")
endif()
