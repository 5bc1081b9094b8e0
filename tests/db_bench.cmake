# db_bench's own checks: every supported benchmark on a tiny --num prints parseable result
# and histogram lines; unknown flags fail; unused flags warn; unsupported benchmarks refuse.
if(TARGET db_bench AND NOT SHALE_SANITIZE)
  add_test(NAME db_bench_smoke
    COMMAND ${PROJECT_SOURCE_DIR}/tools/db_bench_test.sh $<TARGET_FILE:db_bench>)
  set_tests_properties(db_bench_smoke PROPERTIES TIMEOUT 600)
endif()
