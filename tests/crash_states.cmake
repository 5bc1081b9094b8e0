# The crash-state checker (issue 37): a library of the generator, the oracle and the
# workloads (tests/crash_states/), its suite, and the crash_states tool with its long mode
# (tools/crash_states.cc; docs/reliability.md). The suite runs the short workloads
# exhaustively; .ci/run runs the tool's bounded CI mode.
file(GLOB crash_states_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/crash_states/*.cc)
list(FILTER crash_states_sources EXCLUDE REGEX "_test\\.cc$")
add_library(shale_crash_states OBJECT ${crash_states_sources})
target_include_directories(shale_crash_states PRIVATE ${PROJECT_SOURCE_DIR}/include
                           ${PROJECT_SOURCE_DIR})
target_compile_definitions(shale_crash_states PRIVATE ${SHALE_DEP_DEFS})
set(crash_states_objects $<TARGET_OBJECTS:shale_crash_states> $<TARGET_OBJECTS:shale_testutil>)
foreach(l ${layers_utilities})
  list(APPEND crash_states_objects $<TARGET_OBJECTS:${l}>)
endforeach()

add_executable(crash_states_test ${CMAKE_CURRENT_SOURCE_DIR}/crash_states/crash_states_test.cc
               ${crash_states_objects})
add_executable(crash_states ${PROJECT_SOURCE_DIR}/tools/crash_states.cc ${crash_states_objects})
foreach(t crash_states_test crash_states)
  target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${t} PRIVATE ${SHALE_DEP_DEFS})
  target_link_libraries(${t} PRIVATE GTest::gtest ${SHALE_DEP_LIBS} Threads::Threads)
endforeach()
target_link_libraries(crash_states_test PRIVATE GTest::gtest_main)
if(SHALE_TEST_PCH)
  target_precompile_headers(crash_states_test REUSE_FROM shale_test_pch)
endif()
# Its cases are the longest of all (up to 45 s under TSan) and come last by number: a high
# COST has ctest -j start them first, so that they do not run on alone at the end.
gtest_discover_tests(crash_states_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600 COST 1000)
target_compile_definitions(crash_states_test PRIVATE
                           CRASH_STATES_TESTDATA="${CMAKE_CURRENT_SOURCE_DIR}/testdata/crash_states")
