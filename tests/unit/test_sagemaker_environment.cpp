// SageMaker script mode's training environment (platforms/sagemaker/training_environment.hpp).
// The expected texts are what the real toolkit (sagemaker-training 5.1.4) gives for the same
// files: its Environment().to_env_vars() and to_cmd_args() were compared with these functions'
// output variable by variable, so the literals here pin the toolkit's formats.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "platforms/sagemaker/training_environment.hpp"

namespace hpo {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class SageMakerEnvironmentTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_sagemaker_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    train_ = root_ + "/data/train";
    fs::create_directories(train_);
    std::ofstream(train_ + "/train.csv") << "x,y\n1,2\n";
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(root_, error);
  }

  // A 2-host trial seen from its second rank (host algo-2), as the runner describes it.
  SageMakerTrialInput TwoHostInput() const {
    SageMakerTrialInput input;
    input.base_dir = root_ + "/trials/7/sagemaker-algo-2";
    input.job_name = "mnist-tuning-007";
    input.program = "/opt/program/train.py";
    input.hyperparameters = {
        {"epochs", "10"}, {"lr", "0.01"}, {"batch-size", "64"}, {"optimizer", "adam"}};
    input.channels = {{"train", train_}};
    input.hosts = 2;
    input.current_host = 1;
    input.num_gpus = 0;
    input.num_cpus = 2;
    return input;
  }

  // PrepareSageMakerTrial's variables as a map; fails the test on an error.
  std::map<std::string, std::string> Prepare(const SageMakerTrialInput& input) {
    std::vector<std::pair<std::string, std::string>> environment;
    const Status status = PrepareSageMakerTrial(input, &environment);
    EXPECT_TRUE(status.ok()) << status.message();
    return {environment.begin(), environment.end()};
  }

  std::string root_;
  std::string train_;
};

TEST_F(SageMakerEnvironmentTest, TwoHostTrialSecondRankGetsScriptModeVariables) {
  const SageMakerTrialInput input = TwoHostInput();
  const std::map<std::string, std::string> env = Prepare(input);
  const std::string base = input.base_dir;
  EXPECT_EQ(env.at("SAGEMAKER_BASE_DIR"), base);
  EXPECT_EQ(env.at("SM_MODEL_DIR"), base + "/model");
  EXPECT_EQ(env.at("SM_OUTPUT_DIR"), base + "/output");
  EXPECT_EQ(env.at("SM_OUTPUT_DATA_DIR"), base + "/output/data");
  EXPECT_EQ(env.at("SM_OUTPUT_INTERMEDIATE_DIR"), base + "/output/intermediate");
  EXPECT_EQ(env.at("SM_INPUT_DIR"), base + "/input");
  EXPECT_EQ(env.at("SM_INPUT_CONFIG_DIR"), base + "/input/config");
  EXPECT_EQ(env.at("SM_CHANNELS"), "[\"train\"]");
  EXPECT_EQ(env.at("SM_CHANNEL_TRAIN"), base + "/input/data/train");
  EXPECT_EQ(env.at("SM_HOSTS"), "[\"algo-1\",\"algo-2\"]");
  EXPECT_EQ(env.at("SM_CURRENT_HOST"), "algo-2");
  EXPECT_EQ(env.at("CURRENT_HOST"), "algo-2");
  EXPECT_EQ(env.at("SM_HPS"),
            "{\"batch-size\":64,\"epochs\":10,\"lr\":0.01,\"optimizer\":\"adam\"}");
  EXPECT_EQ(env.at("SM_HP_EPOCHS"), "10");
  EXPECT_EQ(env.at("SM_HP_LR"), "0.01");
  EXPECT_EQ(env.at("SM_HP_BATCH-SIZE"), "64");
  EXPECT_EQ(env.at("SM_HP_OPTIMIZER"), "adam");
  EXPECT_EQ(env.at("SM_USER_ARGS"),
            "[\"--batch-size\",\"64\",\"--epochs\",\"10\",\"--lr\",\"0.01\",\"--optimizer\","
            "\"adam\"]");
  EXPECT_EQ(env.at("SM_NUM_GPUS"), "0");
  EXPECT_EQ(env.at("SM_NUM_CPUS"), "2");
  EXPECT_EQ(env.at("SM_NUM_NEURONS"), "0");
  EXPECT_EQ(env.at("SM_LOG_LEVEL"), "20");
  EXPECT_EQ(env.at("SM_NETWORK_INTERFACE_NAME"), "eth0");
  EXPECT_EQ(env.at("SM_USER_ENTRY_POINT"), "train.py");
  EXPECT_EQ(env.at("SM_MODULE_NAME"), "train");
  EXPECT_EQ(env.at("SM_MODULE_DIR"), "/opt/program");
  EXPECT_EQ(env.at("SM_FRAMEWORK_MODULE"), "");
  EXPECT_EQ(env.at("SM_FRAMEWORK_PARAMS"), "{}");
  EXPECT_EQ(env.at("SM_IS_HETERO"), "false");
  EXPECT_EQ(env.at("TRAINING_JOB_NAME"), "mnist-tuning-007");
  EXPECT_EQ(env.at("SAGEMAKER_JOB_NAME"), "mnist-tuning-007");
  EXPECT_EQ(env.at("SM_RESOURCE_CONFIG"),
            "{\"current_group_name\":\"homogeneousCluster\",\"current_host\":\"algo-2\","
            "\"current_instance_type\":\"local\",\"hosts\":[\"algo-1\",\"algo-2\"],"
            "\"instance_groups\":[{\"hosts\":[\"algo-1\",\"algo-2\"],\"instance_group_name\":"
            "\"homogeneousCluster\",\"instance_type\":\"local\"}],\"network_interface_name\":"
            "\"eth0\"}");
  EXPECT_EQ(env.at("SM_INPUT_DATA_CONFIG"),
            "{\"train\":{\"RecordWrapperType\":\"None\",\"S3DistributionType\":\"FullyReplicated\","
            "\"TrainingInputMode\":\"File\"}}");
  const std::string& training_env = env.at("SM_TRAINING_ENV");
  for (const char* part :
       {"\"current_host\":\"algo-2\"", "\"is_master\":false", "\"master_hostname\":\"algo-1\"",
        "\"hyperparameters\":{\"batch-size\":64,\"epochs\":10,\"lr\":0.01,\"optimizer\":\"adam\"}",
        "\"job_name\":\"mnist-tuning-007\"", "\"num_gpus\":0", "\"topology\":[]"}) {
    EXPECT_NE(training_env.find(part), std::string::npos) << part << " in " << training_env;
  }
  // Environment.to_env_vars() gives 31 variables and one per channel and per hyperparameter; the
  // runner's process adds SAGEMAKER_BASE_DIR, TRAINING_JOB_NAME, CURRENT_HOST, SAGEMAKER_JOB_NAME.
  EXPECT_EQ(env.size(), 31u + 1u + 4u + 4u);
}

TEST_F(SageMakerEnvironmentTest, WritesTheFilesEnvironmentReads) {
  const SageMakerTrialInput input = TwoHostInput();
  Prepare(input);
  const std::string config = input.base_dir + "/input/config/";
  EXPECT_EQ(ReadText(config + "hyperparameters.json"),
            "{\"epochs\":\"10\",\"lr\":\"0.01\",\"batch-size\":\"64\",\"optimizer\":\"adam\","
            "\"sagemaker_program\":\"\\\"train.py\\\"\",\"sagemaker_submit_directory\":"
            "\"\\\"/opt/program\\\"\",\"sagemaker_container_log_level\":\"20\","
            "\"sagemaker_job_name\":\"\\\"mnist-tuning-007\\\"\"}\n");
  EXPECT_EQ(ReadText(config + "resourceconfig.json"),
            "{\"current_host\":\"algo-2\",\"current_instance_type\":\"local\","
            "\"current_group_name\":\"homogeneousCluster\",\"hosts\":[\"algo-1\",\"algo-2\"],"
            "\"instance_groups\":[{\"instance_group_name\":\"homogeneousCluster\","
            "\"instance_type\":\"local\",\"hosts\":[\"algo-1\",\"algo-2\"]}],"
            "\"network_interface_name\":\"eth0\"}\n");
  EXPECT_EQ(ReadText(config + "inputdataconfig.json"),
            "{\"train\":{\"TrainingInputMode\":\"File\",\"S3DistributionType\":\"FullyReplicated\","
            "\"RecordWrapperType\":\"None\"}}\n");
  for (const char* folder : {"model", "output/data", "output/intermediate", "code"}) {
    EXPECT_TRUE(fs::is_directory(input.base_dir + "/" + folder)) << folder;
  }
}

TEST_F(SageMakerEnvironmentTest, ChannelFolderIsSymlinkedAndRelinked) {
  SageMakerTrialInput input = TwoHostInput();
  Prepare(input);
  const std::string link = input.base_dir + "/input/data/train";
  ASSERT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link).string(), train_);
  EXPECT_EQ(ReadText(link + "/train.csv"), "x,y\n1,2\n");
  // A retried trial points the channel at another folder: the old link is replaced.
  const std::string other = root_ + "/data/other";
  fs::create_directories(other);
  input.channels = {{"train", other}, {"test", train_}};
  const std::map<std::string, std::string> env = Prepare(input);
  EXPECT_EQ(fs::read_symlink(link).string(), other);
  EXPECT_EQ(env.at("SM_CHANNELS"), "[\"test\",\"train\"]");
  EXPECT_EQ(env.at("SM_CHANNEL_TEST"), input.base_dir + "/input/data/test");
}

TEST_F(SageMakerEnvironmentTest, OddValuesAreEscapedAsTheToolkitDoes) {
  SageMakerTrialInput input = TwoHostInput();
  input.hyperparameters = {{"quote", "say \"hi\""},
                           {"slash", "C:\\temp\\x"},
                           {"accent", "h\xC3\xA9llo w\xC3\xB6rld"},
                           {"emoji", "\xF0\x9F\x98\x80"},
                           {"spaces", "a b  c"},
                           {"equals", "k=v=w"},
                           {"tab", "a\tb"}};
  const std::map<std::string, std::string> env = Prepare(input);
  EXPECT_EQ(env.at("SM_HPS"),
            "{\"accent\":\"h\\u00e9llo w\\u00f6rld\",\"emoji\":\"\\ud83d\\ude00\",\"equals\":"
            "\"k=v=w\",\"quote\":\"say \\\"hi\\\"\",\"slash\":\"C:\\\\temp\\\\x\",\"spaces\":"
            "\"a b  c\",\"tab\":\"a\\tb\"}");
  // SM_HP_<NAME> holds a string as it is.
  EXPECT_EQ(env.at("SM_HP_QUOTE"), "say \"hi\"");
  EXPECT_EQ(env.at("SM_HP_SLASH"), "C:\\temp\\x");
  EXPECT_EQ(env.at("SM_HP_ACCENT"), "h\xC3\xA9llo w\xC3\xB6rld");
  EXPECT_EQ(env.at("SM_HP_EQUALS"), "k=v=w");
  EXPECT_EQ(env.at("SM_USER_ARGS"),
            "[\"--accent\",\"h\\u00e9llo w\\u00f6rld\",\"--emoji\",\"\\ud83d\\ude00\","
            "\"--equals\",\"k=v=w\",\"--quote\",\"say \\\"hi\\\"\",\"--slash\",\"C:\\\\temp\\\\x\","
            "\"--spaces\",\"a b  c\",\"--tab\",\"a\\tb\"]");
  const std::string file = ReadText(input.base_dir + "/input/config/hyperparameters.json");
  EXPECT_NE(file.find("\"quote\":\"say \\\"hi\\\"\""), std::string::npos) << file;
  EXPECT_NE(file.find("\"accent\":\"h\\u00e9llo w\\u00f6rld\""), std::string::npos) << file;
}

TEST_F(SageMakerEnvironmentTest, ValuesKeepTheirJsonTypes) {
  SageMakerTrialInput input = TwoHostInput();
  input.hyperparameters = {{"int", "10"},
                           {"float", "0.00001"},
                           {"exp", "1e16"},
                           {"whole", "3.0"},
                           {"flag", "true"},
                           {"word", "True"},
                           {"quoted", "\"adam\""},
                           {"list", "[1, \"a\"]"},
                           {"map", "{\"k\": 1}"},
                           {"zero", "007"},
                           {"big", "12345678901234567890123"}};
  const std::map<std::string, std::string> env = Prepare(input);
  EXPECT_EQ(env.at("SM_HPS"),
            "{\"big\":12345678901234567890123,\"exp\":1e+16,\"flag\":true,\"float\":1e-05,"
            "\"int\":10,\"list\":[1,\"a\"],\"map\":{\"k\":1},\"quoted\":\"adam\",\"whole\":3.0,"
            "\"word\":\"True\",\"zero\":\"007\"}");
  EXPECT_EQ(env.at("SM_HP_FLOAT"), "1e-05");
  EXPECT_EQ(env.at("SM_HP_QUOTED"), "adam");
  EXPECT_EQ(env.at("SM_HP_LIST"), "[1,\"a\"]");
  EXPECT_EQ(SageMakerUserArgs(input.hyperparameters),
            (std::vector<std::string>{"--big",    "12345678901234567890123",
                                      "--exp",    "1e+16",
                                      "--flag",   "True",
                                      "--float",  "1e-05",
                                      "--int",    "10",
                                      "--list",   "[1, 'a']",
                                      "--map",    "k=1",
                                      "--quoted", "adam",
                                      "--whole",  "3.0",
                                      "--word",   "True",
                                      "--zero",   "007"}));
}

TEST_F(SageMakerEnvironmentTest, SageMakersOwnHyperparametersStayOutOfTheScriptsArguments) {
  SageMakerTrialInput input = TwoHostInput();
  input.hyperparameters = {{"a", "1"},
                           {"sagemaker_program", "\"entry.py\""},
                           {"sagemaker_mpi_enabled", "true"},
                           {"_tuning_objective_metric", "loss"}};
  const std::map<std::string, std::string> env = Prepare(input);
  EXPECT_EQ(env.at("SM_HPS"), "{\"a\":1}");
  EXPECT_EQ(env.at("SM_USER_ARGS"), "[\"-a\",\"1\"]");
  EXPECT_EQ(env.at("SM_FRAMEWORK_PARAMS"), "{\"sagemaker_mpi_enabled\":true}");
  EXPECT_EQ(env.at("SM_USER_ENTRY_POINT"), "entry.py");
  EXPECT_EQ(env.at("SM_MODULE_NAME"), "entry");
  EXPECT_EQ(env.at("SM_DISTRIBUTION_INSTANCE_GROUPS"), "[\"homogeneousCluster\"]");
  EXPECT_EQ(env.count("SM_HP_SAGEMAKER_MPI_ENABLED"), 0u);
}

TEST_F(SageMakerEnvironmentTest, UnwritableBaseFolderIsAFailureNamingIt) {
  std::ofstream(root_ + "/file") << "not a folder";
  SageMakerTrialInput input = TwoHostInput();
  input.base_dir = root_ + "/file/sagemaker";
  std::vector<std::pair<std::string, std::string>> environment;
  const Status status = PrepareSageMakerTrial(input, &environment);
  EXPECT_EQ(status.code(), Status::Code::kFailure);
  EXPECT_NE(status.message().find(input.base_dir), std::string::npos) << status.message();
}

TEST_F(SageMakerEnvironmentTest, RejectsWhatNoTrainingJobHas) {
  std::vector<std::pair<std::string, std::string>> environment;
  SageMakerTrialInput input = TwoHostInput();
  input.current_host = 2;
  EXPECT_EQ(PrepareSageMakerTrial(input, &environment).code(), Status::Code::kBadInput);
  input = TwoHostInput();
  input.channels = {{"../escape", train_}};
  EXPECT_EQ(PrepareSageMakerTrial(input, &environment).code(), Status::Code::kBadInput);
  input = TwoHostInput();
  input.hyperparameters = {{"nul", "\"a\\u0000b\""}};
  const Status status = PrepareSageMakerTrial(input, &environment);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("SM_HP_NUL"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace hpo
