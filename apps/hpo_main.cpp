// hpo: the command line. Parses arguments, calls the library, maps Status to the documented exit
// codes (0 done, 1 failure, 2 bad input, 3 interrupted but saved).
#include <boost/program_options.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "hpo/mpi/communicator.hpp"
#include "hpo/report.hpp"
#include "hpo/study_file.hpp"
#include "hpo/sweep.hpp"

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "usage: hpo <command> [options]\n"
    "\n"
    "commands:\n"
    "  sweep   run a hyperparameter sweep (under mpirun or srun)\n"
    "  report  print a study's leaderboard\n"
    "\n"
    "Run 'hpo <command> --help' for a command's options.\n"
    "Exit codes: 0 done, 1 failure, 2 bad input (config, arguments, data, study file),\n"
    "3 interrupted but saved (resume it).\n";

int ExitWith(const hpo::Status& status, bool print) {
  if (!status.ok() && print) {
    const char* kind = status.code() == hpo::Status::Code::kInterrupted ? "interrupted" : "error";
    std::cerr << "hpo: " << kind << ": " << status.message() << std::endl;
  }
  return static_cast<int>(status.exit_code());
}

// Parses `args` against `options` (+ positional); BadInput with Boost's message on error.
hpo::Status ParseArguments(const std::vector<std::string>& args,
                           const po::options_description& options,
                           const po::positional_options_description& positional,
                           po::variables_map* values) {
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), *values);
    po::notify(*values);
  } catch (const po::error& error) {
    return hpo::Status::BadInput(std::string(error.what()) + " (see --help)");
  }
  return hpo::Status::Ok();
}

int RunSweepCommand(int argc, char** argv, const std::vector<std::string>& args) {
  hpo::SweepOptions sweep;
  po::options_description options(
      "usage: mpirun -np N hpo sweep --config FILE [--output DIR] [--data DIR] [--resume]\n\n"
      "Runs a whole sweep in one MPI job: rank 0 samples trials and writes OUTPUT/study.h5;\n"
      "groups of ranks_per_trial ranks train one trial at a time (data parallel).\n\noptions");
  options.add_options()("help,h", "show this help")(
      "config,c", po::value<std::string>(&sweep.config_path)->required(), "the sweep's YAML file")(
      "output,o", po::value<std::string>(&sweep.output_override),
      "output folder (replaces the config's `output`)")(
      "data", po::value<std::string>(&sweep.data_override),
      "data folder on this rank (replaces the config's `data`)")(
      "resume", po::bool_switch(&sweep.resume),
      "continue the study in the output folder (start it if there is none yet); its running "
      "trials continue from their checkpoints");
  po::variables_map values;
  po::positional_options_description none;
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::cout << options << std::endl;
      return 0;
    }
  }
  hpo::Status parsed = ParseArguments(args, options, none, &values);
  // Argument errors are the same on every rank: print once, from rank 0 as mpirun numbers it.
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank == nullptr) rank = std::getenv("PMIX_RANK");
  const bool print_here = rank == nullptr || std::string(rank) == "0";
  if (!parsed.ok()) return ExitWith(parsed, print_here);

  std::unique_ptr<hpo::MpiSession> session;
  hpo::Status started = hpo::MpiSession::Start(&argc, &argv, &session);
  if (!started.ok()) return ExitWith(started, true);
  const bool root = hpo::Communicator::World().rank() == 0;
  return ExitWith(hpo::RunSweep(sweep), root);
}

int RunReportCommand(const std::vector<std::string>& args) {
  std::string study_path;
  std::string format = "table";
  int top_k = 10;
  po::options_description options(
      "usage: hpo report STUDY.h5 [--top K] [--format table|csv|json]\n\n"
      "Prints the leaderboard of a study (best first by the sweep metric's goal) and the best\n"
      "trial's test accuracy.\n\noptions");
  options.add_options()("help,h", "show this help")(
      "study", po::value<std::string>(&study_path)->required(), "the study file")(
      "top,k", po::value<int>(&top_k)->default_value(10), "rows to show (0: all)")(
      "format,f", po::value<std::string>(&format)->default_value("table"), "table | csv | json");
  po::positional_options_description positional;
  positional.add("study", 1);
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::cout << options << std::endl;
      return 0;
    }
  }
  po::variables_map values;
  hpo::Status parsed = ParseArguments(args, options, positional, &values);
  if (!parsed.ok()) return ExitWith(parsed, true);
  hpo::ReportOptions report;
  report.top_k = top_k;
  if (format == "table") {
    report.format = hpo::ReportFormat::kTable;
  } else if (format == "csv") {
    report.format = hpo::ReportFormat::kCsv;
  } else if (format == "json") {
    report.format = hpo::ReportFormat::kJson;
  } else {
    return ExitWith(
        hpo::Status::BadInput("--format must be table, csv or json, not '" + format + "'"), true);
  }
  if (top_k < 0) return ExitWith(hpo::Status::BadInput("--top must be 0 or more"), true);
  hpo::StudyContents study;
  hpo::Status read = hpo::ReadStudy(study_path, &study);
  if (!read.ok()) return ExitWith(read, true);
  std::cout << hpo::FormatReport(study, report);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return static_cast<int>(hpo::ExitCode::kBadInput);
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "hpo-mpi " << HPO_VERSION << std::endl;
    return 0;
  }
  if (command == "sweep") return RunSweepCommand(argc, argv, args);
  if (command == "report") return RunReportCommand(args);
  std::cerr << "hpo: error: unknown command '" << command << "'\n\n" << kUsage;
  return static_cast<int>(hpo::ExitCode::kBadInput);
}
