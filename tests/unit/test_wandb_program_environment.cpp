// W&B's program contract for a command trial (platforms/wandb/program_environment.hpp): the
// agent's parameter file that wandb.init() loads into wandb.config, and the variables it sets.
#include "platforms/wandb/program_environment.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace hpo {
namespace {

namespace fs = std::filesystem;

class WandbProgramEnvironmentTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hpo-wandb-env-" + std::to_string(getpid()));
    fs::create_directories(dir_ / "trials" / "7");
  }
  void TearDown() override { fs::remove_all(dir_); }

  WandbTrialInput Input(int rank) const {
    WandbTrialInput input;
    input.trial_dir = (dir_ / "trials" / "7").string();
    input.trial_id = 7;
    input.rank_in_group = rank;
    input.sweep_name = "reviews sweep/1";
    input.project = "reviews";
    input.params = {{"lr", ParamValue(0.01), false},
                    {"optimizer", ParamValue(std::string("adam \"w\"")), false},
                    {"layers", ParamValue(int64_t{3}), false},
                    {"amp", ParamValue(std::string("true")), true}};
    return input;
  }

  static std::map<std::string, std::string> AsMap(
      const std::vector<std::pair<std::string, std::string>>& environment) {
    return {environment.begin(), environment.end()};
  }

  fs::path dir_;
};

TEST_F(WandbProgramEnvironmentTest, TheAgentsParameterFileAndVariables) {
  std::vector<std::pair<std::string, std::string>> environment;
  WandbRunPlace place;
  ASSERT_TRUE(PrepareWandbTrial(Input(0), {"PATH=/usr/bin"}, &environment, &place).ok());
  const auto variables = AsMap(environment);
  EXPECT_EQ(place.run_id, "trial-7");
  EXPECT_EQ(place.dir, (dir_ / "trials" / "7").string());
  EXPECT_EQ(variables.at("WANDB_SWEEP_ID"), "hpo-reviews-sweep-1");
  EXPECT_EQ(variables.at("WANDB_RUN_ID"), "trial-7");
  EXPECT_EQ(variables.at("WANDB_DIR"), place.dir);
  EXPECT_EQ(variables.at("WANDB_PROJECT"), "reviews");
  EXPECT_EQ(variables.at("WANDB_MODE"), "offline");  // no API key here: never a login prompt
  EXPECT_EQ(variables.at("WANDB__TRANSACTION_LOG_FLUSH_INTERVAL"), "0.5");
  EXPECT_EQ(variables.count("WANDB_ENTITY"), 0u);
  const std::string param_path = variables.at("WANDB_SWEEP_PARAM_PATH");
  EXPECT_EQ(param_path, place.dir + "/wandb/sweep-hpo-reviews-sweep-1/config-trial-7.yaml");
  std::ifstream in(param_path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "{\"lr\": {\"value\": 0.01}, \"optimizer\": {\"value\": \"adam \\\"w\\\"\"}, "
            "\"layers\": {\"value\": 3}, \"amp\": {\"value\": true}}\n");
}

TEST_F(WandbProgramEnvironmentTest, TheUsersSettingsWinAndOtherRanksWriteBeside) {
  std::vector<std::pair<std::string, std::string>> environment;
  WandbRunPlace place;
  WandbTrialInput input = Input(1);
  input.attempt = 2;
  ASSERT_TRUE(PrepareWandbTrial(input,
                                {"WANDB_MODE=online", "WANDB_PROJECT=mine",
                                 "WANDB__TRANSACTION_LOG_FLUSH_INTERVAL=2"},
                                &environment, &place)
                  .ok());
  const auto variables = AsMap(environment);
  EXPECT_EQ(place.run_id, "trial-7-r2");  // a retried trial is a new run
  EXPECT_EQ(place.dir, (dir_ / "trials" / "7" / "wandb-rank-1").string());
  EXPECT_EQ(variables.count("WANDB_MODE"), 0u);
  EXPECT_EQ(variables.count("WANDB_PROJECT"), 0u);
  EXPECT_EQ(variables.count("WANDB__TRANSACTION_LOG_FLUSH_INTERVAL"), 0u);
}

TEST_F(WandbProgramEnvironmentTest, AnUnwritableFolderIsAFailureNamingTheFile) {
  WandbTrialInput input = Input(0);
  input.trial_dir = (dir_ / "a-file").string();
  std::ofstream(input.trial_dir) << "not a folder";
  std::vector<std::pair<std::string, std::string>> environment;
  WandbRunPlace place;
  const Status status = PrepareWandbTrial(input, {}, &environment, &place);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot write W&B's parameter file " + input.trial_dir),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace hpo
