# Locates LLVM/MLIR 19 and defines the interface target dlc_compiler_deps, the one way a target
# gets MLIR/LLVM headers and libraries. Included only when DLC_BUILD_COMPILER is ON.

if(NOT MLIR_DIR)
  find_program(LLVM_CONFIG_19 NAMES llvm-config-19 llvm-config
               HINTS /usr/lib/llvm-19/bin)
  if(NOT LLVM_CONFIG_19)
    message(FATAL_ERROR "llvm-config-19 not found: run scripts/setup.sh, or configure with "
                        "-DDLC_BUILD_COMPILER=OFF to build the runtime only")
  endif()
  execute_process(COMMAND ${LLVM_CONFIG_19} --prefix OUTPUT_VARIABLE LLVM_PREFIX
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(MLIR_DIR ${LLVM_PREFIX}/lib/cmake/mlir)
endif()
find_package(MLIR REQUIRED CONFIG PATHS ${MLIR_DIR} NO_DEFAULT_PATH)
if(NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "dlc needs LLVM/MLIR 19, found ${LLVM_PACKAGE_VERSION} in ${MLIR_DIR}")
endif()
message(STATUS "MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")

list(APPEND CMAKE_MODULE_PATH ${MLIR_CMAKE_DIR} ${LLVM_CMAKE_DIR})
include(AddLLVM)
include(TableGen)
include(AddMLIR)

# FileCheck, not and lit from the same LLVM installation.
set(LLVM_PREFIX_DIR ${LLVM_TOOLS_BINARY_DIR}/..)
get_filename_component(LLVM_PREFIX_DIR ${LLVM_PREFIX_DIR} ABSOLUTE)
set(DLC_LLVM_TOOLS_DIR ${LLVM_TOOLS_BINARY_DIR})
find_file(DLC_LIT_PY lit.py PATHS ${LLVM_PREFIX_DIR}/build/utils/lit NO_DEFAULT_PATH)

add_library(dlc_compiler_deps INTERFACE)
target_include_directories(dlc_compiler_deps SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
target_compile_definitions(dlc_compiler_deps INTERFACE ${LLVM_DEFINITIONS})
# Link the shared libMLIR/libLLVM: much faster links than the static component libraries.
target_link_libraries(dlc_compiler_deps INTERFACE MLIR LLVM)
# As LLVM itself: MLIR's generated code leaves parameters unused.
target_compile_options(dlc_compiler_deps INTERFACE -Wno-unused-parameter)
if(NOT LLVM_ENABLE_RTTI)
  target_compile_options(dlc_compiler_deps INTERFACE -fno-rtti)
endif()

# mlir_tablegen() reads the directory's include path; give it MLIR's and the repository root
# through EXTRA_INCLUDES instead of a directory-wide include_directories().
function(dlc_tablegen ofn)
  mlir_tablegen(${ofn} ${ARGN} EXTRA_INCLUDES ${MLIR_INCLUDE_DIRS} ${DLC_SOURCE_ROOT})
  set(TABLEGEN_OUTPUT ${TABLEGEN_OUTPUT} PARENT_SCOPE)
endfunction()

# dlc_compiler_library(name SOURCES... [DEPENDS tablegen-targets] [LINK libs]):
# a library on the compiler side of the build.
function(dlc_compiler_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES} ${ARG_UNPARSED_ARGUMENTS})
  target_include_directories(${name} PUBLIC ${DLC_SOURCE_ROOT} ${DLC_BINARY_ROOT})
  target_link_libraries(${name} PUBLIC dlc_compiler_deps ${ARG_LINK})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
endfunction()
