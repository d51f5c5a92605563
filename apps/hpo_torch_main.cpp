// hpo-torch: the command line with every built-in task (hpo/main.hpp), libtorch's included; `hpo`
// hands libtorch sweeps to it. Runs anything `hpo` runs, the same way.
#include "hpo/main.hpp"

int main(int argc, char** argv) { return hpo::Main(argc, argv, hpo::BuiltinTaskRegistry()); }
