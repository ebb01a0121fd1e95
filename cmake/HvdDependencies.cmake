# Finds the optional dependencies and sets HVD_HAVE_<PART> for each part.
#
# HVD_REQUIRE_ALL=ON (what scripts/setup.sh, and so the README's commands, use): every part
# and tool the README promises must be found, or configuring fails naming the missing
# package. AUTO parts become ON; only NCCL (it needs CUDA, which Debian does not ship) and
# TensorFlow (pip's, not Debian's) stay optional; the "hvdsim parts" line says whether they are built.
option(HVD_REQUIRE_ALL "Fail when a promised part (MPI, SimGrid, GUI, their tools) cannot be built" OFF)
find_package(Threads REQUIRED)

# hvd_missing_tool(<what and how to install>): a tool of a part is missing. Fatal under
# HVD_REQUIRE_ALL, a warning otherwise (the tool is then not built).
function(hvd_missing_tool what)
  if(HVD_REQUIRE_ALL)
    message(FATAL_ERROR "HVD_REQUIRE_ALL: ${what}")
  else()
    message(WARNING "${what}")
  endif()
endfunction()
find_package(nlohmann_json 3.10 REQUIRED)
find_package(PkgConfig REQUIRED)

function(hvd_resolve_part part found reason)
  set(want "${HVD_WITH_${part}}")
  if(HVD_REQUIRE_ALL AND want STREQUAL "AUTO" AND NOT part MATCHES "^(NCCL|TENSORFLOW)$")
    set(want ON)
  endif()
  if(want STREQUAL "OFF")
    set(HVD_HAVE_${part} OFF PARENT_SCOPE)
  elseif(${found})
    set(HVD_HAVE_${part} ON PARENT_SCOPE)
  elseif(want STREQUAL "ON")
    message(FATAL_ERROR "hvdsim: the ${part} part cannot be built: ${reason}")
  else()
    message(STATUS "hvdsim: ${part} part disabled: ${reason}")
    set(HVD_HAVE_${part} OFF PARENT_SCOPE)
  endif()
endfunction()

if(NOT HVD_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX QUIET)
endif()
hvd_resolve_part(MPI MPI_CXX_FOUND "no MPI C++ library was found (apt-get install libopenmpi-dev)")

if(NOT HVD_WITH_SIMGRID STREQUAL "OFF")
  pkg_check_modules(SIMGRID QUIET IMPORTED_TARGET simgrid>=3.32)
endif()
hvd_resolve_part(SIMGRID SIMGRID_FOUND "SimGrid >= 3.32 was not found (apt-get install libsimgrid-dev)")

if(NOT HVD_WITH_GUI STREQUAL "OFF")
  find_package(Qt6 QUIET COMPONENTS Widgets Charts Svg)
endif()
if(Qt6_FOUND AND TARGET Qt6::Charts)
  set(_hvd_qt_ok TRUE)
else()
  set(_hvd_qt_ok FALSE)
endif()
hvd_resolve_part(GUI _hvd_qt_ok "Qt6 Widgets/Charts/Svg were not found (apt-get install qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev: Qt6Charts needs Qt6OpenGL)")

set(_hvd_nccl_ok FALSE)
if(NOT HVD_WITH_NCCL STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(CUDAToolkit_FOUND AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY AND HVD_HAVE_MPI)
    set(_hvd_nccl_ok TRUE)
  endif()
endif()
hvd_resolve_part(NCCL _hvd_nccl_ok "CUDA toolkit with NCCL (and the MPI part) was not found")

# The Python package hvd: its extension hvd._core needs the interpreter's headers and
# pybind11. scripts/setup.sh passes Python_EXECUTABLE (the venv of python/requirements.txt);
# without it FindPython takes the first python3 on PATH.
set(_hvd_python_ok FALSE)
set(_hvd_python_why "")
if(NOT HVD_WITH_PYTHON STREQUAL "OFF")
  find_package(Python 3.8 QUIET COMPONENTS Interpreter Development.Module)
  if(NOT Python_FOUND)
    set(_hvd_python_why "no Python 3 interpreter with headers (apt-get install python3-dev)")
  else()
    execute_process(COMMAND ${Python_EXECUTABLE} -c "import pybind11; print(pybind11.get_cmake_dir())"
                    OUTPUT_VARIABLE _hvd_pybind11_dir ERROR_QUIET RESULT_VARIABLE _hvd_py_rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _hvd_py_rc EQUAL 0)
      set(_hvd_pybind11_dir "")
    endif()
    find_package(pybind11 CONFIG QUIET HINTS ${_hvd_pybind11_dir})
    if(pybind11_FOUND)
      set(_hvd_python_ok TRUE)
    else()
      set(_hvd_python_why "pybind11 was not found for ${Python_EXECUTABLE} (pip install pybind11, or apt-get install pybind11-dev)")
    endif()
  endif()
endif()
hvd_resolve_part(PYTHON _hvd_python_ok "${_hvd_python_why}")

# hvd_python_query(<out> <rc> <code>): runs <code> in the target interpreter and returns its
# stdout. Under `pip install .` pip runs the build with PYTHONPATH pointing at an isolated
# build environment that hides the target environment's packages; a query that fails there
# is asked again without it, so that the frameworks installed where hvd goes are found.
function(hvd_python_query out rc code)
  execute_process(COMMAND ${Python_EXECUTABLE} -c "${code}" OUTPUT_VARIABLE o ERROR_QUIET
                  RESULT_VARIABLE r OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT r EQUAL 0 AND DEFINED ENV{PYTHONPATH})
    execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH --unset=PYTHONNOUSERSITE
                            ${Python_EXECUTABLE} -c "${code}"
                    OUTPUT_VARIABLE o ERROR_QUIET RESULT_VARIABLE r OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  set(${out} "${o}" PARENT_SCOPE)
  set(${rc} "${r}" PARENT_SCOPE)
endfunction()

# The framework bindings, built for the frameworks the interpreter can import. As Horovod's
# HOROVOD_WITH_<FW>=1 / HOROVOD_WITHOUT_<FW>=1 do, the environment can require or refuse one
# (HVD_WITH_<FW>=ON/OFF in the cache says the same).
function(hvd_framework_part part module)
  if(DEFINED ENV{HOROVOD_WITHOUT_${part}} AND "$ENV{HOROVOD_WITHOUT_${part}}" STREQUAL "1")
    set(HVD_WITH_${part} OFF)
  elseif(DEFINED ENV{HOROVOD_WITH_${part}} AND "$ENV{HOROVOD_WITH_${part}}" STREQUAL "1")
    set(HVD_WITH_${part} ON)
  endif()
  if(NOT HVD_HAVE_PYTHON)
    set(HVD_WITH_${part} OFF)
  endif()
  set(_fw_ok FALSE)
  set(version "")
  if(HVD_HAVE_PYTHON AND NOT HVD_WITH_${part} STREQUAL "OFF")
    hvd_python_query(version rc "import ${module}; print(${module}.__version__)")
    if(rc EQUAL 0)
      set(_fw_ok TRUE)
    endif()
  endif()
  hvd_resolve_part(${part} _fw_ok "${Python_EXECUTABLE} cannot import ${module} (pip install -r python/requirements.txt)")
  set(HVD_HAVE_${part} ${HVD_HAVE_${part}} PARENT_SCOPE)
  set(HVD_${part}_VERSION "${version}" PARENT_SCOPE)
endfunction()
set(HVD_WITH_PYTORCH AUTO CACHE STRING "Build hvd.torch (ON/OFF/AUTO; env HOROVOD_WITH_PYTORCH / HOROVOD_WITHOUT_PYTORCH)")
hvd_framework_part(PYTORCH torch)

# hvd.tensorflow's op library is compiled against the TensorFlow of the same interpreter,
# with its own compile and link flags (tf.sysconfig).
hvd_framework_part(TENSORFLOW tensorflow)
if(HVD_HAVE_TENSORFLOW)
  set(HVD_TF_VERSION "${HVD_TENSORFLOW_VERSION}")
  hvd_python_query(_hvd_tf_out _hvd_tf_rc
    "import os; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'; import tensorflow as tf; print(';'.join(tf.sysconfig.get_compile_flags())); print(';'.join(tf.sysconfig.get_link_flags()))")
  string(REPLACE "\n" ";" _hvd_tf_flags "${_hvd_tf_out}")
  set(HVD_TF_COMPILE_FLAGS)
  set(HVD_TF_LINK_FLAGS)
  foreach(f ${_hvd_tf_flags})
    if(f MATCHES "^-(I|D|-std)")
      list(APPEND HVD_TF_COMPILE_FLAGS "${f}")
    elseif(f MATCHES "^-(L|l)")
      list(APPEND HVD_TF_LINK_FLAGS "${f}")
    endif()
  endforeach()
endif()
