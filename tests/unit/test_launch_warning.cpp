// PlainMpirunWarning: rank 0 warns once when the job spans hosts under Open MPI's mpirun without
// scripts/hpo-mpirun, and stays quiet on one host, under the wrapper, and under srun.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "common/launch_warning.hpp"

namespace hpo {
namespace {

// A fake environment: the variables in `variables`, nothing else.
EnvironmentLookup Environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
}

const std::map<std::string, std::string> kUnderMpirun = {
    {"OMPI_MCA_orte_hnp_uri", "1098711040.0;tcp://10.0.0.1:47041"}};

TEST(PlainMpirunWarning, WarnsAcrossHostsUnderPlainMpirun) {
  const auto warning = PlainMpirunWarning(/*world_spans_hosts=*/true, Environment(kUnderMpirun));
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("scripts/hpo-mpirun"), std::string::npos) << *warning;
}

TEST(PlainMpirunWarning, QuietOnOneHost) {
  EXPECT_FALSE(PlainMpirunWarning(/*world_spans_hosts=*/false, Environment(kUnderMpirun)));
}

TEST(PlainMpirunWarning, QuietUnderTheWrapper) {
  auto variables = kUnderMpirun;
  variables[kWrappedVariable] = "1";
  EXPECT_FALSE(PlainMpirunWarning(/*world_spans_hosts=*/true, Environment(variables)));
}

TEST(PlainMpirunWarning, QuietWithoutMpirun) {
  // srun --mpi=pmix starts the ranks itself: there is no mpirun to wait on a lost daemon.
  EXPECT_FALSE(PlainMpirunWarning(/*world_spans_hosts=*/true, Environment({})));
}

TEST(PlainMpirunWarning, AnEmptyWrapperVariableIsNotTheWrapper) {
  auto variables = kUnderMpirun;
  variables[kWrappedVariable] = "";
  EXPECT_TRUE(PlainMpirunWarning(/*world_spans_hosts=*/true, Environment(variables)));
}

}  // namespace
}  // namespace hpo
