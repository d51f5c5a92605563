// The study's per-trial start_time_s column: written and read back, NaN for studies written before
// it existed (their /trials lack the column), and added by a writer that resumes such a study.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <hdf5.h>

#include "study/study_file.hpp"

namespace hpo {
namespace {

StudyLayout Layout() {
  StudyLayout layout;
  layout.params = {{"lr", ParamType::kFloat, 0}, {"optimizer", ParamType::kString, 8}};
  layout.metric_names = {"val_loss"};
  return layout;
}

StudyAttributes Attributes() {
  StudyAttributes attributes;
  attributes.config = "sweep:\n  method: random\n";
  attributes.metric_name = "val_loss";
  attributes.metric_goal = "minimize";
  attributes.world_size = 2;
  attributes.start_time = "2024-05-01T12:00:00Z";
  return attributes;
}

TrialResult Trial(int64_t id, double start_time_s) {
  TrialResult trial;
  trial.trial_id = id;
  trial.status = TrialStatus::kCompleted;
  trial.objective = 0.5 / static_cast<double>(id + 1);
  trial.params = {{"lr", 0.01}, {"optimizer", std::string("adam")}};
  trial.epochs = 1;
  trial.duration_s = 2.0;
  trial.group = 0;
  trial.curve = {{1, {trial.objective}}};
  trial.start_time_s = start_time_s;
  return trial;
}

class TrialStartTimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hpo_start_time_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "study.h5").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(TrialStartTimeTest, WrittenAndReadBack) {
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Create(path_, Layout(), Attributes(), &writer).ok());
  ASSERT_TRUE(writer->Append(Trial(0, 1714564800.25)).ok());
  ASSERT_TRUE(writer->Append(Trial(1, std::numeric_limits<double>::quiet_NaN())).ok());
  StudyContents study;
  ASSERT_TRUE(ReadStudy(path_, &study).ok());
  ASSERT_EQ(study.trials.size(), 2u);
  EXPECT_EQ(study.trials[0].start_time_s, 1714564800.25);
  EXPECT_TRUE(std::isnan(study.trials[1].start_time_s));
  ASSERT_EQ(study.layout.params.size(), 2u);  // not taken for a hyperparameter
}

// Rewrites /trials as hpo wrote it before start_time_s: the same rows and column types, without
// the last column. True on success.
bool DropStartTimeColumn(const std::string& path) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return false;
  const hid_t dataset = H5Dopen2(file, "trials", H5P_DEFAULT);
  const hid_t type = H5Dget_type(dataset);
  const int members = H5Tget_nmembers(type);
  const size_t row = H5Tget_size(type);
  const size_t kept = H5Tget_member_offset(type, static_cast<unsigned>(members - 1));
  const hid_t legacy = H5Tcreate(H5T_COMPOUND, kept);
  for (unsigned i = 0; i + 1 < static_cast<unsigned>(members); ++i) {
    char* name = H5Tget_member_name(type, i);
    const hid_t member = H5Tget_member_type(type, i);
    H5Tinsert(legacy, name, H5Tget_member_offset(type, i), member);
    H5Tclose(member);
    H5free_memory(name);
  }
  const hid_t space = H5Dget_space(dataset);
  hsize_t rows = 0;
  H5Sget_simple_extent_dims(space, &rows, nullptr);
  std::vector<char> all(row * rows);
  bool ok = H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data()) >= 0;
  std::vector<char> old(kept * rows);
  for (hsize_t r = 0; r < rows; ++r) std::copy_n(&all[r * row], kept, &old[r * kept]);
  H5Sclose(space);
  H5Dclose(dataset);
  ok = ok && H5Ldelete(file, "trials", H5P_DEFAULT) >= 0;
  const hsize_t max_dims[1] = {H5S_UNLIMITED};
  const hsize_t chunk[1] = {64};
  const hid_t new_space = H5Screate_simple(1, &rows, max_dims);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  const hid_t created =
      H5Dcreate2(file, "trials", legacy, new_space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ok = ok && created >= 0 &&
       H5Dwrite(created, legacy, H5S_ALL, H5S_ALL, H5P_DEFAULT, old.data()) >= 0;
  H5Dclose(created);
  H5Pclose(dcpl);
  H5Sclose(new_space);
  H5Tclose(legacy);
  H5Tclose(type);
  return H5Fclose(file) >= 0 && ok;
}

TEST_F(TrialStartTimeTest, OlderStudyWithoutTheColumnReadsNaNAndResumesWithIt) {
  {
    std::unique_ptr<StudyWriter> writer;
    ASSERT_TRUE(StudyWriter::Create(path_, Layout(), Attributes(), &writer).ok());
    ASSERT_TRUE(writer->Append(Trial(0, 1714564800.0)).ok());
    ASSERT_TRUE(writer->Append(Trial(1, 1714564801.0)).ok());
  }
  ASSERT_TRUE(DropStartTimeColumn(path_));

  StudyContents study;
  const Status read = ReadStudy(path_, &study);
  ASSERT_TRUE(read.ok()) << read.message();
  ASSERT_EQ(study.trials.size(), 2u);
  EXPECT_TRUE(std::isnan(study.trials[0].start_time_s));
  EXPECT_EQ(study.trials[1].message, "");
  ASSERT_EQ(study.layout.params.size(), 2u);

  // Resuming adds the column: the old trials keep NaN, a new one has its time.
  {
    std::unique_ptr<StudyWriter> writer;
    const Status opened = StudyWriter::Open(path_, study.layout, &writer);
    ASSERT_TRUE(opened.ok()) << opened.message();
    ASSERT_TRUE(writer->Append(Trial(2, 1714564900.5)).ok());
  }
  StudyContents resumed;
  ASSERT_TRUE(ReadStudy(path_, &resumed).ok());
  ASSERT_EQ(resumed.trials.size(), 3u);
  EXPECT_TRUE(std::isnan(resumed.trials[0].start_time_s));
  EXPECT_TRUE(std::isnan(resumed.trials[1].start_time_s));
  EXPECT_EQ(resumed.trials[1].objective, 0.25);
  EXPECT_EQ(resumed.trials[2].start_time_s, 1714564900.5);
  EXPECT_EQ(resumed.trials[2].trial_id, 2);
}

}  // namespace
}  // namespace hpo
