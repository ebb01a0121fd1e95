# HVD_FUZZ=ON: a libFuzzer build (clang only), in a build directory of its own:
#   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DHVD_FUZZ=ON
#   ninja -C build-fuzz scenario_fuzzer trace_fuzzer timeline_fuzzer
# Everything is compiled with coverage instrumentation for libFuzzer and with AddressSanitizer
# and UndefinedBehaviorSanitizer (any finding aborts: a crash to libFuzzer), so the loaders
# inside the libraries (hvd_workloads, hvdsim_lib) are explored and checked, not only the
# fuzz entry points. hvd_add_fuzzer(<target> <sources>... LIBRARIES <libs>...) adds one
# fuzzer; its seed corpus and dictionary are documented in docs/simulator.md ("Fuzzing").
if(NOT HVD_FUZZ)
  function(hvd_add_fuzzer)
  endfunction()
  return()
endif()

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR
    "HVD_FUZZ=ON needs clang (libFuzzer, -fsanitize=fuzzer), but the C++ compiler is "
    "${CMAKE_CXX_COMPILER_ID} (${CMAKE_CXX_COMPILER}). Configure a separate build directory: "
    "cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DHVD_FUZZ=ON")
endif()

set(HVD_SANITIZERS address,undefined)
add_compile_options(-fsanitize=fuzzer-no-link,${HVD_SANITIZERS} -fno-sanitize-recover=all
                    -fno-omit-frame-pointer -g)
add_link_options(-fsanitize=${HVD_SANITIZERS})

function(hvd_add_fuzzer target)
  cmake_parse_arguments(F "" "" "LIBRARIES" ${ARGN})
  add_executable(${target} ${F_UNPARSED_ARGUMENTS})
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${target} PRIVATE ${F_LIBRARIES})
endfunction()
message(STATUS "hvdsim: libFuzzer build (HVD_FUZZ=ON): scenario_fuzzer, trace_fuzzer, timeline_fuzzer")
