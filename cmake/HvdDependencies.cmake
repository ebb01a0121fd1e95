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

# The Python package (hvd, hvd.torch): pybind11 and PyTorch of the interpreter that runs it.
# Debian's python3-torch and python3-pybind11 belong to the system interpreter, which need
# not be the first python3 on PATH (pyenv, venvs): use it unless Python_EXECUTABLE is given.
set(_hvd_python_ok FALSE)
set(_hvd_python_why "")
if(NOT HVD_WITH_PYTHON STREQUAL "OFF")
  if(NOT DEFINED Python_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python interpreter of the hvd package")
  endif()
  find_package(Python 3.8 QUIET COMPONENTS Interpreter Development.Module)
  if(NOT Python_FOUND)
    set(_hvd_python_why "no Python 3 interpreter with headers (apt-get install python3-dev)")
  else()
    execute_process(COMMAND ${Python_EXECUTABLE} -c "import torch, pybind11; print(pybind11.get_cmake_dir())"
                    OUTPUT_VARIABLE _hvd_pybind11_dir ERROR_QUIET RESULT_VARIABLE _hvd_py_rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _hvd_py_rc EQUAL 0)
      set(_hvd_python_why "${Python_EXECUTABLE} cannot import torch and pybind11 (apt-get install python3-torch python3-pybind11 pybind11-dev)")
    else()
      find_package(pybind11 CONFIG QUIET HINTS ${_hvd_pybind11_dir})
      if(pybind11_FOUND)
        set(_hvd_python_ok TRUE)
      else()
        set(_hvd_python_why "pybind11's CMake package was not found (apt-get install pybind11-dev)")
      endif()
    endif()
  endif()
endif()
hvd_resolve_part(PYTHON _hvd_python_ok "${_hvd_python_why}")

# hvd.tensorflow's op library: TensorFlow of the same interpreter, built with its own compile
# and link flags (tf.sysconfig). Horovod's switches work too: HOROVOD_WITH_TENSORFLOW=1 makes
# it required, HOROVOD_WITHOUT_TENSORFLOW=1 leaves it out (when HVD_WITH_TENSORFLOW is AUTO).
if(HVD_WITH_TENSORFLOW STREQUAL "AUTO")
  if("$ENV{HOROVOD_WITHOUT_TENSORFLOW}" STREQUAL "1")
    set(HVD_WITH_TENSORFLOW OFF)
  elseif("$ENV{HOROVOD_WITH_TENSORFLOW}" STREQUAL "1")
    set(HVD_WITH_TENSORFLOW ON)
  endif()
endif()
set(_hvd_tf_ok FALSE)
set(_hvd_tf_why "")
if(NOT HVD_WITH_TENSORFLOW STREQUAL "OFF")
  if(NOT HVD_HAVE_PYTHON)
    set(_hvd_tf_why "it needs the Python part (hvd._core holds the runtime its ops use)")
  else()
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env TF_CPP_MIN_LOG_LEVEL=3 ${Python_EXECUTABLE} -c
              "import tensorflow as tf; print(tf.__version__); print(';'.join(tf.sysconfig.get_compile_flags())); print(';'.join(tf.sysconfig.get_link_flags()))"
      OUTPUT_VARIABLE _hvd_tf_out ERROR_QUIET RESULT_VARIABLE _hvd_tf_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_hvd_tf_rc EQUAL 0)
      string(REPLACE "\n" ";" _hvd_tf_lines "${_hvd_tf_out}")
      list(GET _hvd_tf_lines 0 HVD_TF_VERSION)
      list(SUBLIST _hvd_tf_lines 1 -1 _hvd_tf_flags)
      set(HVD_TF_COMPILE_FLAGS)
      set(HVD_TF_LINK_FLAGS)
      foreach(f ${_hvd_tf_flags})
        if(f MATCHES "^-(I|D|-std)")
          list(APPEND HVD_TF_COMPILE_FLAGS "${f}")
        elseif(f MATCHES "^-(L|l)")
          list(APPEND HVD_TF_LINK_FLAGS "${f}")
        endif()
      endforeach()
      set(_hvd_tf_ok TRUE)
    else()
      set(_hvd_tf_why "${Python_EXECUTABLE} cannot import tensorflow (pip install tensorflow)")
    endif()
  endif()
endif()
hvd_resolve_part(TENSORFLOW _hvd_tf_ok "${_hvd_tf_why}")
