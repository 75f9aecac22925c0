# Decides DLC_PYTHON: whether python/ (the Python package) is built. It needs the compiler and
# nanobind; the interpreter is .venv's when there is one (Python_EXECUTABLE overrides), so that
# the module matches the Python the tests and `pip install` use.
set(DLC_PYTHON OFF)
if(DLC_BUILD_COMPILER AND NOT DLC_BUILD_PYTHON STREQUAL "OFF")
  if(NOT Python_EXECUTABLE AND EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
    set(Python_EXECUTABLE ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  endif()
  find_package(Python 3.10 COMPONENTS Interpreter Development.Module)
  if(Python_FOUND AND NOT nanobind_DIR)
    execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
                    OUTPUT_VARIABLE _dlc_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _dlc_nanobind_status ERROR_QUIET)
    if(_dlc_nanobind_status EQUAL 0)
      set(nanobind_DIR ${_dlc_nanobind_dir} CACHE PATH "nanobind's CMake package")
    endif()
  endif()
  if(Python_FOUND AND nanobind_DIR)
    set(DLC_PYTHON ON)
  elseif(DLC_BUILD_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "DLC_BUILD_PYTHON=ON needs Python >= 3.10 with its headers and nanobind "
                        "(pip install -r python/requirements-build.txt)")
  else()
    message(STATUS "Python package left out: no nanobind for ${Python_EXECUTABLE} "
                   "(scripts/setup.sh installs it)")
  endif()
endif()
