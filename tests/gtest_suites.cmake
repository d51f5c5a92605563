# Writes CTEST_FILE, a ctest include file with one test per GoogleTest suite of TEST_EXECUTABLE
# (named after the suite, run as `TEST_EXECUTABLE --gtest_filter=SUITE.*`), labelled LABELS, with
# ENVIRONMENT. A suite whose every test skips reports as skipped. Run after each build of the
# executable (tests/CMakeLists.txt):
#
#   cmake -D TEST_EXECUTABLE=... -D CTEST_FILE=... -D LABELS=... -D ENVIRONMENT=... -P gtest_suites.cmake
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests OUTPUT_VARIABLE listing
                RESULT_VARIABLE result TIMEOUT 120)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${result}):\n${listing}")
endif()
string(REPLACE ";" "," listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
foreach(line IN LISTS lines)
  # A suite's line starts at the margin and ends its name with '.' (then, for typed and
  # parameterized suites, a comment); the tests' lines under it are indented.
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND script
           "add_test([==[${suite}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
           "set_tests_properties([==[${suite}]==] PROPERTIES LABELS [==[${LABELS}]==]"
           " ENVIRONMENT [==[${ENVIRONMENT}]==]"
           " SKIP_REGULAR_EXPRESSION [==[\\[  PASSED  \\] 0 tests]==])\n")
  endif()
endforeach()
file(WRITE "${CTEST_FILE}" "${script}")
