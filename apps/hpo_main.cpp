// hpo: the command line with the built-in tasks (hpo/main.hpp).
#include "hpo/main.hpp"

int main(int argc, char** argv) { return hpo::Main(argc, argv, hpo::BuiltinTaskRegistry()); }
