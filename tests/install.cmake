# The install test: a project outside the tree consumes the installed package.
if(NOT SHALE_SANITIZE)
add_test(NAME install_consumer
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/consumer/check.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
set_tests_properties(install_consumer PROPERTIES TIMEOUT 600)
endif()
