// hpo_with_faults: the `hpo` command line (apps/hpo_main.cpp: hpo::Main over the built-in tasks)
// with a fault injected into training, for the tests of failing trials (test_resilience.py,
// test_bad_input.py). HPO_INJECT_FAULT=KIND:TRIAL:EPOCH:RANK (KIND exception or oom) makes group
// rank RANK of trial TRIAL's first attempt throw at the first step of epoch EPOCH
// (tests/support/fault_injector.hpp); unset or empty, it runs as `hpo`. A value that does not
// parse is bad input: "hpo: error: ..." and exit code 2, as from `hpo`.
// HPO_STOP_AFTER_FINALIZE=RANK stops world rank RANK (SIGSTOP to itself) once the sweep has
// returned and MPI_Finalize with it: a process frozen while it exits (test_resilience.py).
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "cli/main_with_hooks.hpp"
#include "hpo/main.hpp"
#include "support/fault_injector.hpp"

int main(int argc, char** argv) {
  const char* text = std::getenv("HPO_INJECT_FAULT");
  std::unique_ptr<hpo::FaultInjector> injector;
  if (text != nullptr && *text != '\0') {
    hpo::Fault fault;
    const hpo::Status parsed = hpo::FaultInjector::Parse(text, &fault);
    if (!parsed.ok()) {
      std::cerr << "hpo: error: " << parsed.message() << std::endl;
      return static_cast<int>(parsed.exit_code());
    }
    injector = std::make_unique<hpo::FaultInjector>(fault);
  }
  const int code =
      hpo::MainWithTrainingHooks(argc, argv, hpo::BuiltinTaskRegistry(), injector.get());
  const char* stop_rank = std::getenv("HPO_STOP_AFTER_FINALIZE");
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (stop_rank != nullptr && rank != nullptr && std::string(stop_rank) == rank) raise(SIGSTOP);
  return code;
}
