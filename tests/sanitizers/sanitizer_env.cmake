# Read by ctest in the -DHPO_SANITIZE=ON build (see CMakeLists.txt here): the sanitizers' runtime
# options for every test ctest starts. Options already in the environment come last and win.
# fast_unwind_on_malloc=0: Open MPI and libtorch have no frame pointers, and leaks from Open MPI
# components (dlclosed at MPI_Finalize) are matched by lsan.supp only through the full stack.
# malloc_context_size=16 keeps that unwinding affordable in torch-heavy tests.
set(ENV{ASAN_OPTIONS} "fast_unwind_on_malloc=0:malloc_context_size=16:$ENV{ASAN_OPTIONS}")
set(ENV{LSAN_OPTIONS}
    "suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp:print_suppressions=0:$ENV{LSAN_OPTIONS}")
set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1:$ENV{UBSAN_OPTIONS}")
