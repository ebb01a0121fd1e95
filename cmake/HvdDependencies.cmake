# Finds the optional dependencies and sets HVD_HAVE_<PART> for each part.
#
# HVD_REQUIRE_ALL=ON (what scripts/setup.sh, and so the README's commands, use): every part
# and tool the README promises must be found, or configuring fails naming the missing
# package. AUTO parts become ON; only NCCL stays optional (it needs CUDA, which Debian does
# not ship) and says in one line whether it is built.
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
  if(HVD_REQUIRE_ALL AND want STREQUAL "AUTO" AND NOT part STREQUAL "NCCL")
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
