# hvd_label_discovered_tests(<target> <labels>): gives every test that gtest_discover_tests
# finds in <target> the LABELS list <labels> (e.g. "nccl;gpu").
#
# gtest_discover_tests(... PROPERTIES LABELS "a;b") does not work: the list is flattened on
# its way to the discovery script, which then writes `LABELS a b`, i.e. LABELS=a and a
# property named "b". This writes a small ctest include file, run after the discovery one
# of the same directory, that sets the labels on the discovered list (<target>_TESTS).
# Call it after gtest_discover_tests(<target> ...) in the same directory.
function(hvd_label_discovered_tests target labels)
  set(file "${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake")
  file(WRITE "${file}"
       "if(${target}_TESTS)\n"
       "  set_tests_properties(\${${target}_TESTS} PROPERTIES LABELS \"${labels}\")\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${file}")
endfunction()
