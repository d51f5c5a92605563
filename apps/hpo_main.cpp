// hpo: the command line users start, loading no libtorch (cli/torch_hand_over.hpp). It runs
// command sweeps, render, report, status and --version itself and hands a sweep of a built-in
// libtorch task to hpo-torch (apps/hpo_torch_main.cpp) before MPI starts.
#include "cli/torch_hand_over.hpp"

int main(int argc, char** argv) { return hpo::TorchFreeMain(argc, argv); }
