# Read by ctest in the -DHPO_SANITIZE=ON build (see CMakeLists.txt here): the sanitizers' runtime
# options for every test ctest starts. Options already in the environment come last and win.
# Each binary also reads asan-<binary>.opts from this folder when there is one:
# * asan-hpo_mpi_tests.opts: fast_unwind_on_malloc=0. Open MPI has no frame pointers, and its
#   components are dlclosed at MPI_Finalize, so their leaks are matched by lsan.supp only through
#   the full stack down to libmpi/libopen-rte/libopen-pal.
# * asan-hpo.opts: detect_leaks=0. The Python tests start `hpo` under mpirun dozens of times, and
#   full-stack unwinding of every malloc (libtorch's start-up alone) makes each start about 3x
#   slower, past the tests' timeouts. ASan and UBSan still check every run; the code hpo runs is
#   leak-checked by the unit tests and hpo_mpi_tests.
# Included once per test folder; set the options once.
if(NOT DEFINED ENV{HPO_SANITIZER_OPTIONS_SET})
  set(ENV{HPO_SANITIZER_OPTIONS_SET} 1)
  set(ENV{ASAN_OPTIONS}
      "include_if_exists=${CMAKE_CURRENT_LIST_DIR}/asan-%b.opts:$ENV{ASAN_OPTIONS}")
  set(ENV{LSAN_OPTIONS}
      "suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp:print_suppressions=0:$ENV{LSAN_OPTIONS}")
  set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1:$ENV{UBSAN_OPTIONS}")
endif()
