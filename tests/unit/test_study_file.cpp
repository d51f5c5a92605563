// Tests of the study file: StudyWriter and ReadStudy round trips, error handling, crash safety and
// readability by h5py/pandas (tests/unit/check_study_readable.py).

#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "study/study_file.hpp"
#include "study/study_schema.hpp"

namespace hpo {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const char kPython[] = "/usr/bin/python3";

StudyLayout TestLayout() {
  StudyLayout layout;
  layout.params = {{"lr", ParamType::kFloat, 0},
                   {"batch_size", ParamType::kInt, 0},
                   {"optimizer.name", ParamType::kString, 9},
                   {"drop-out", ParamType::kFloat, 0}};
  layout.metric_names = {"train_loss", "val_loss", "val_accuracy"};
  return layout;
}

StudyAttributes TestAttributes() {
  StudyAttributes attributes;
  attributes.config = "sweep:\n  method: random\n  metric: {name: val_loss, goal: minimize}\n";
  attributes.metric_name = "val_loss";
  attributes.metric_goal = "minimize";
  attributes.world_size = 4;
  attributes.start_time = "2024-05-01T12:00:00Z";
  attributes.version = "";
  return attributes;
}

TrialResult MakeTrial(int64_t id, TrialStatus status, double objective, int64_t epochs) {
  TrialResult trial;
  trial.trial_id = id;
  trial.status = status;
  trial.objective = objective;
  trial.params = {{"lr", 0.001 * static_cast<double>(id + 1)},
                  {"batch_size", int64_t{32} << (id % 16)},
                  {"optimizer.name", std::string(id % 2 == 0 ? "adam" : "sgd,nest")},
                  {"drop-out", 0.25}};
  trial.epochs = epochs;
  trial.duration_s = 1.5 * static_cast<double>(id + 1);
  trial.group = id % 3;
  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    const double e = static_cast<double>(epoch);
    trial.curve.push_back({epoch, {1.0 / e, 1.1 / e, 0.5 + 0.1 * e}});
  }
  return trial;
}

// Three trials covering the statuses, a NaN objective, an empty curve and a long message.
std::vector<TrialResult> TestTrials() {
  std::vector<TrialResult> trials;
  trials.push_back(MakeTrial(0, TrialStatus::kCompleted, 0.3125, 3));
  trials.push_back(MakeTrial(1, TrialStatus::kStopped, 0.75, 1));
  trials.back().message = "stopped by hyperband at rung 1";
  trials.push_back(MakeTrial(2, TrialStatus::kFailed, kNaN, 0));
  trials.back().message = "loss is NaN";
  return trials;
}

bool SameDouble(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void ExpectSameTrial(const TrialResult& expected, const TrialResult& actual) {
  SCOPED_TRACE("trial " + std::to_string(expected.trial_id));
  EXPECT_EQ(expected.trial_id, actual.trial_id);
  EXPECT_EQ(expected.status, actual.status);
  EXPECT_TRUE(SameDouble(expected.objective, actual.objective))
      << expected.objective << " vs " << actual.objective;
  ASSERT_EQ(expected.params.size(), actual.params.size());
  for (size_t i = 0; i < expected.params.size(); ++i) {
    EXPECT_EQ(expected.params[i].name, actual.params[i].name);
    EXPECT_EQ(expected.params[i].value, actual.params[i].value) << expected.params[i].name;
  }
  EXPECT_EQ(expected.epochs, actual.epochs);
  EXPECT_EQ(expected.duration_s, actual.duration_s);
  EXPECT_EQ(expected.group, actual.group);
  EXPECT_EQ(expected.message, actual.message);
  ASSERT_EQ(expected.curve.size(), actual.curve.size());
  for (size_t i = 0; i < expected.curve.size(); ++i) {
    EXPECT_EQ(expected.curve[i].epoch, actual.curve[i].epoch);
    EXPECT_EQ(expected.curve[i].values, actual.curve[i].values);
  }
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

bool PythonHasH5py() {
  const std::string command = std::string(kPython) + " -c 'import h5py' >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

// Runs check_study_readable.py on `path`; returns its exit status (0: readable as expected).
int CheckReadable(const std::string& path, int rows, const StudyLayout& layout, int curve_rows) {
  std::string command = "/usr/bin/python3 " HPO_SOURCE_DIR "/tests/unit/check_study_readable.py '" +
                        path + "' " + std::to_string(rows);
  for (const StudyParamColumn& column : layout.params) command += " --param '" + column.name + "'";
  for (const std::string& metric : layout.metric_names) command += " --metric '" + metric + "'";
  command += " --curve-rows " + std::to_string(curve_rows);
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class StudyFileTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "hpo_study_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/study.h5";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Creates the study at path_ and appends `trials`.
  void WriteStudy(const std::vector<TrialResult>& trials) {
    std::unique_ptr<StudyWriter> writer;
    Status status = StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer);
    ASSERT_TRUE(status.ok()) << status.message();
    for (const TrialResult& trial : trials) {
      status = writer->Append(trial);
      ASSERT_TRUE(status.ok()) << status.message();
    }
  }

  StudyContents Read() {
    StudyContents contents;
    Status status = ReadStudy(path_, &contents);
    EXPECT_TRUE(status.ok()) << status.message();
    return contents;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(StudyFileTest, RoundTripsTrialsCurvesAndLayout) {
  const std::vector<TrialResult> trials = TestTrials();
  WriteStudy(trials);
  const StudyContents contents = Read();

  const StudyLayout layout = TestLayout();
  ASSERT_EQ(contents.layout.params.size(), layout.params.size());
  for (size_t i = 0; i < layout.params.size(); ++i) {
    EXPECT_EQ(contents.layout.params[i].name, layout.params[i].name);
    EXPECT_EQ(contents.layout.params[i].type, layout.params[i].type);
    EXPECT_EQ(contents.layout.params[i].string_width, layout.params[i].string_width);
  }
  EXPECT_EQ(contents.layout.metric_names, layout.metric_names);
  ASSERT_EQ(contents.trials.size(), trials.size());
  for (size_t i = 0; i < trials.size(); ++i) ExpectSameTrial(trials[i], contents.trials[i]);
  EXPECT_TRUE(contents.extra_attributes.empty());
}

TEST_F(StudyFileTest, APausedTrialReadsAsItsLastRowWithItsEarlierRunsAsSpans) {
  // Trial 0 pauses twice (ASHA promotion variant), each row holding only its new epochs.
  TrialResult first = MakeTrial(0, TrialStatus::kPaused, 0.4, 1);
  first.start_time_s = 100.0;
  first.duration_s = 2.0;
  first.group = 1;
  TrialResult second = MakeTrial(0, TrialStatus::kPaused, 0.45, 3);
  second.curve.erase(second.curve.begin());
  second.start_time_s = 110.0;
  second.duration_s = 3.0;
  second.group = 0;
  TrialResult last = MakeTrial(0, TrialStatus::kCompleted, 0.5, 5);
  last.curve.erase(last.curve.begin(), last.curve.begin() + 3);
  last.start_time_s = 120.0;
  TrialResult other = MakeTrial(1, TrialStatus::kCompleted, 0.3, 2);
  other.start_time_s = 101.0;
  WriteStudy({first, other, second, last});
  const StudyContents contents = Read();
  ASSERT_EQ(contents.trials.size(), 2u);
  EXPECT_EQ(contents.trials[0].trial_id, 1);
  EXPECT_EQ(contents.trials[1].trial_id, 0);
  EXPECT_EQ(contents.trials[1].status, TrialStatus::kCompleted);
  EXPECT_EQ(contents.trials[1].epochs, 5);
  EXPECT_EQ(contents.trials[1].curve.size(), 5u);  // every row's epochs
  EXPECT_EQ(contents.earlier_spans.count(1), 0u);
  ASSERT_EQ(contents.earlier_spans.count(0), 1u);
  const std::vector<RunSpan>& spans = contents.earlier_spans.at(0);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].start_time_s, 100.0);
  EXPECT_EQ(spans[0].duration_s, 2.0);
  EXPECT_EQ(spans[0].group, 1);
  EXPECT_EQ(spans[1].start_time_s, 110.0);
  EXPECT_EQ(spans[1].duration_s, 3.0);
  EXPECT_EQ(spans[1].group, 0);
}

TEST_F(StudyFileTest, FloatColumnTakesIntegerValueAndLongMessageIsTruncated) {
  TrialResult trial = MakeTrial(7, TrialStatus::kFailed, kNaN, 2);
  trial.params[0].value = int64_t{1};  // "lr" is a float column
  // 254 ASCII bytes then a two-byte character: it must not be cut in half at byte 255.
  trial.message = std::string(254, 'x') + "\xC3\xA9" + std::string(100, 'y');
  WriteStudy({trial});
  const StudyContents contents = Read();
  ASSERT_EQ(contents.trials.size(), 1u);
  EXPECT_EQ(contents.trials[0].params[0].value, ParamValue(1.0));
  EXPECT_EQ(contents.trials[0].message, std::string(254, 'x'));
}

TEST_F(StudyFileTest, LongMessageKeepsItsFirstLineAndItsEnd) {
  TrialResult trial = MakeTrial(8, TrialStatus::kFailed, kNaN, 0);
  std::string frames;
  for (int i = 0; i < 20; ++i) frames += "\n  File \"train.py\", line " + std::to_string(i);
  trial.message =
      "rank 0: exit status 1; its stderr ends:\nTraceback" + frames + "\nRuntimeError: the cause";
  ASSERT_GT(trial.message.size(), 255u);
  WriteStudy({trial});
  const std::string stored = Read().trials.at(0).message;
  EXPECT_LE(stored.size(), 255u);
  EXPECT_EQ(stored.rfind("rank 0: exit status 1; its stderr ends:\n...\n  File ", 0), 0u) << stored;
  EXPECT_EQ(stored.substr(stored.size() - 24), "\nRuntimeError: the cause");
  // Cut where the last line starts when no earlier line start is in reach.
  const std::string long_last = "why\n" + std::string(300, 'z') + "\xC3\xA9";
  EXPECT_EQ(study_internal::FitMessage(long_last, 100),
            "why\n..." + std::string(91, 'z') + "\xC3\xA9");
}

TEST_F(StudyFileTest, CurveRowsAreSortedByEpochPerTrial) {
  TrialResult trial = MakeTrial(3, TrialStatus::kCompleted, 0.5, 3);
  std::swap(trial.curve[0], trial.curve[2]);
  WriteStudy({trial});
  const StudyContents contents = Read();
  ASSERT_EQ(contents.trials.size(), 1u);
  ASSERT_EQ(contents.trials[0].curve.size(), 3u);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(contents.trials[0].curve[i].epoch, i + 1);
}

TEST_F(StudyFileTest, AttributesRoundTripAndSetAttributeReplaces) {
  std::unique_ptr<StudyWriter> writer;
  StudyAttributes attributes = TestAttributes();
  attributes.config = std::string(100000, 'c');  // beyond the 64 KiB of a compact attribute
  ASSERT_TRUE(StudyWriter::Create(path_, TestLayout(), attributes, &writer).ok());
  ASSERT_TRUE(writer->SetAttribute("best_trial_id", int64_t{3}).ok());
  ASSERT_TRUE(writer->SetAttribute("test_accuracy", 0.5).ok());
  ASSERT_TRUE(writer->SetAttribute("note", std::string("short")).ok());
  ASSERT_TRUE(writer->SetAttribute("test_accuracy", 0.9125).ok());
  ASSERT_TRUE(writer->SetAttribute("note", std::string("a longer note, with a comma")).ok());
  ASSERT_TRUE(writer->SetAttribute("empty", std::string()).ok());
  ASSERT_TRUE(writer->SetAttribute("metric_goal", std::string("maximize")).ok());
  writer.reset();

  const StudyContents contents = Read();
  EXPECT_EQ(contents.attributes.config, attributes.config);
  EXPECT_EQ(contents.attributes.metric_name, "val_loss");
  EXPECT_EQ(contents.attributes.metric_goal, "maximize");
  EXPECT_EQ(contents.attributes.world_size, 4);
  EXPECT_EQ(contents.attributes.start_time, attributes.start_time);
  EXPECT_EQ(contents.attributes.version, "");
  const std::map<std::string, StudyAttribute> expected = {
      {"best_trial_id", int64_t{3}},
      {"test_accuracy", 0.9125},
      {"note", std::string("a longer note, with a comma")},
      {"empty", std::string()}};
  EXPECT_EQ(contents.extra_attributes, expected);
}

TEST_F(StudyFileTest, TablesRoundTripWithLabelsAndStageTableReplaces) {
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok());
  MetricTable confusion{"confusion", 2, 2, {1, 2, 3, 4}, {"ham", "spam"}};
  ASSERT_TRUE(writer->StageTable(confusion).ok());
  confusion.values = {5, 0, 1, 7};
  ASSERT_TRUE(writer->StageTable(confusion).ok());
  ASSERT_TRUE(writer->StageTable({"unlabelled", 1, 3, {0.5, 0.25, 0.125}, {}}).ok());
  EXPECT_FALSE(writer->StageTable({"bad", 2, 2, {1, 2, 3}, {}}).ok());
  ASSERT_TRUE(writer->Publish({}).ok());
  writer.reset();

  const StudyContents contents = Read();
  ASSERT_EQ(contents.tables.size(), 2u);
  EXPECT_EQ(contents.tables[0].name, "confusion");
  EXPECT_EQ(contents.tables[0].rows, 2);
  EXPECT_EQ(contents.tables[0].values, (std::vector<double>{5, 0, 1, 7}));
  EXPECT_EQ(contents.tables[0].labels, (std::vector<std::string>{"ham", "spam"}));
  EXPECT_EQ(contents.tables[1].name, "unlabelled");
  EXPECT_EQ(contents.tables[1].columns, 3);
  EXPECT_TRUE(contents.tables[1].labels.empty());
  // h5py reads the table and its labels as documented.
  if (!PythonHasH5py()) GTEST_SKIP() << kPython << " has no h5py";
  const std::string command =
      std::string(kPython) +
      " -c \"import h5py, sys; m = h5py.File(sys.argv[1], 'r')['test_confusion'];"
      " assert m.shape == (2, 2) and m[1, 1] == 7, m[:];"
      " assert [l.decode() for l in m.attrs['labels']] == ['ham', 'spam']\" '" +
      path_ + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST_F(StudyFileTest, CreateOnExistingFileFailsAndLeavesItUnchanged) {
  WriteStudy(TestTrials());
  const std::string before = ReadBytes(path_);
  std::unique_ptr<StudyWriter> writer;
  Status status = StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), path_ + ": study file already exists");
  EXPECT_EQ(writer, nullptr);
  EXPECT_EQ(ReadBytes(path_), before);

  const std::string text = dir_ + "/notes.txt";
  WriteBytes(text, "not a study\n");
  status = StudyWriter::Create(text, TestLayout(), TestAttributes(), &writer);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(ReadBytes(text), "not a study\n");
}

TEST_F(StudyFileTest, CreateInMissingFolderNamesPathAndReason) {
  const std::string path = dir_ + "/no/such/folder/study.h5";
  std::unique_ptr<StudyWriter> writer;
  const Status status = StudyWriter::Create(path, TestLayout(), TestAttributes(), &writer);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("No such file or directory"), std::string::npos)
      << status.message();
}

TEST_F(StudyFileTest, ParamNamedLikeAFixedColumnIsStoredWithAPrefixAndReadBack) {
  for (const char* name : {"epochs", "status", "message"}) {
    StudyLayout layout = TestLayout();
    layout.params.push_back({name, ParamType::kInt, 0});
    std::unique_ptr<StudyWriter> writer;
    const Status created = StudyWriter::Create(path_, layout, TestAttributes(), &writer);
    ASSERT_TRUE(created.ok()) << name << ": " << created.message();
    TrialResult trial = MakeTrial(0, TrialStatus::kCompleted, 0.5, 2);
    trial.params.push_back({name, int64_t{7}});
    ASSERT_TRUE(writer->Append(trial).ok()) << name;
    writer.reset();
    StudyContents contents;
    ASSERT_TRUE(ReadStudy(path_, &contents).ok()) << name;
    ASSERT_EQ(contents.trials.size(), 1u);
    const ParamValue* value = FindParam(contents.trials[0].params, name);
    ASSERT_NE(value, nullptr) << name;
    EXPECT_EQ(std::get<int64_t>(*value), 7) << name;
    EXPECT_EQ(contents.trials[0].epochs, 2) << name;
    std::filesystem::remove(path_);
  }
  StudyLayout layout = TestLayout();
  layout.params.push_back({"param:epochs", ParamType::kInt, 0});
  std::unique_ptr<StudyWriter> writer;
  EXPECT_EQ(StudyWriter::Create(path_, layout, TestAttributes(), &writer).code(),
            Status::Code::kBadInput);
  layout = TestLayout();
  layout.metric_names.push_back("epoch");
  EXPECT_EQ(StudyWriter::Create(path_, layout, TestAttributes(), &writer).code(),
            Status::Code::kBadInput);
}

TEST_F(StudyFileTest, MetricNamesWithASlashAreStoredEscapedAndReadBack) {
  StudyLayout layout = TestLayout();
  layout.metric_names = {"train/loss", "val_loss", "acc%/top1"};
  std::unique_ptr<StudyWriter> writer;
  const Status created = StudyWriter::Create(path_, layout, TestAttributes(), &writer);
  ASSERT_TRUE(created.ok()) << created.message();
  ASSERT_TRUE(writer->Append(MakeTrial(0, TrialStatus::kCompleted, 0.5, 2)).ok());
  writer.reset();
  const StudyContents contents = Read();
  EXPECT_EQ(contents.layout.metric_names, layout.metric_names);
  ASSERT_EQ(contents.trials.size(), 1u);
  EXPECT_EQ(contents.trials[0].curve.size(), 2u);
  if (!PythonHasH5py()) GTEST_SKIP() << kPython << " has no h5py";
  // What h5py and pandas see: '/' as %2F, '%' as %25.
  StudyLayout columns = layout;
  columns.metric_names = {"train%2Floss", "val_loss", "acc%25%2Ftop1"};
  EXPECT_EQ(CheckReadable(path_, 1, columns, 2), 0);
}

TEST_F(StudyFileTest, InvalidAppendFailsAndWritesNothing) {
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok());
  const TrialResult first = MakeTrial(0, TrialStatus::kCompleted, 0.5, 2);
  ASSERT_TRUE(writer->Append(first).ok());

  TrialResult wrong_type = MakeTrial(1, TrialStatus::kCompleted, 0.4, 2);
  wrong_type.params[1].value = std::string("32");  // "batch_size" is an int column
  Status status = writer->Append(wrong_type);
  EXPECT_EQ(status.code(), Status::Code::kFailure);
  EXPECT_NE(status.message().find("batch_size"), std::string::npos) << status.message();

  TrialResult float_in_int = MakeTrial(1, TrialStatus::kCompleted, 0.4, 2);
  float_in_int.params[1].value = 32.0;
  EXPECT_EQ(writer->Append(float_in_int).code(), Status::Code::kFailure);

  TrialResult missing = MakeTrial(1, TrialStatus::kCompleted, 0.4, 2);
  missing.params.pop_back();
  status = writer->Append(missing);
  EXPECT_EQ(status.code(), Status::Code::kFailure);
  EXPECT_NE(status.message().find("drop-out"), std::string::npos) << status.message();

  TrialResult too_long = MakeTrial(1, TrialStatus::kCompleted, 0.4, 2);
  too_long.params[2].value = std::string("rmsprop-centered");  // wider than 8 bytes
  EXPECT_EQ(writer->Append(too_long).code(), Status::Code::kFailure);

  TrialResult short_curve = MakeTrial(1, TrialStatus::kCompleted, 0.4, 2);
  short_curve.curve[1].values.pop_back();
  status = writer->Append(short_curve);
  EXPECT_EQ(status.code(), Status::Code::kFailure);
  EXPECT_NE(status.message().find("metrics"), std::string::npos) << status.message();

  const TrialResult second = MakeTrial(2, TrialStatus::kCompleted, 0.25, 1);
  ASSERT_TRUE(writer->Append(second).ok());
  writer.reset();

  const StudyContents contents = Read();
  ASSERT_EQ(contents.trials.size(), 2u);
  ExpectSameTrial(first, contents.trials[0]);
  ExpectSameTrial(second, contents.trials[1]);
}

TEST_F(StudyFileTest, ReadingFilesThatAreNotStudiesIsBadInput) {
  const std::string text = dir_ + "/config.yaml";
  WriteBytes(text, "sweep:\n  method: grid\n");
  const std::string empty = dir_ + "/empty.h5";
  WriteBytes(empty, "");
  const std::string missing = dir_ + "/missing.h5";
  for (const std::string& path : {text, empty, missing, dir_}) {
    StudyContents contents;
    const Status status = ReadStudy(path, &contents);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << path;
    EXPECT_EQ(status.message().rfind(path + ": ", 0), 0u) << status.message();
  }
}

TEST_F(StudyFileTest, ReadingHdf5FileWithoutStudyDatasetsIsBadInput) {
  if (!PythonHasH5py()) GTEST_SKIP() << kPython << " has no h5py";
  const std::string command = std::string(kPython) +
                              " -c \"import h5py, sys; f = h5py.File(sys.argv[1], 'w');"
                              " f.create_dataset('trials', data=[1, 2, 3])\" '" +
                              path_ + "'";
  ASSERT_EQ(std::system(command.c_str()), 0);
  StudyContents contents;
  const Status status = ReadStudy(path_, &contents);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find(path_ + ": /trials"), std::string::npos) << status.message();
}

TEST_F(StudyFileTest, EmptyStudyReadsBackItsLayout) {
  WriteStudy({});
  const StudyContents contents = Read();
  EXPECT_TRUE(contents.trials.empty());
  EXPECT_EQ(contents.layout.params.size(), TestLayout().params.size());
  EXPECT_EQ(contents.layout.metric_names, TestLayout().metric_names);
  EXPECT_EQ(contents.attributes.metric_name, "val_loss");
}

TEST_F(StudyFileTest, TrialsFlushedBeforeACrashSurvive) {
  const std::vector<TrialResult> trials = TestTrials();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child writes and dies without closing the file or running any exit handler.
    std::unique_ptr<StudyWriter> writer;
    if (!StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok()) _exit(1);
    for (const TrialResult& trial : trials) {
      if (!writer->Append(trial).ok()) _exit(1);
    }
    if (!writer->SetAttribute("best_trial_id", int64_t{0}).ok()) _exit(1);
    _exit(0);
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);

  const StudyContents contents = Read();
  ASSERT_EQ(contents.trials.size(), trials.size());
  for (size_t i = 0; i < trials.size(); ++i) ExpectSameTrial(trials[i], contents.trials[i]);
  EXPECT_EQ(contents.extra_attributes.count("best_trial_id"), 1u);
  if (PythonHasH5py()) {
    EXPECT_EQ(CheckReadable(path_, static_cast<int>(trials.size()), TestLayout(), 4), 0);
  }
}

TEST_F(StudyFileTest, KilledWriterLeavesReadableStudy) {
  // The child appends trials until it is killed at a random point, possibly inside a flush; the
  // study must still read, with trials 0, 1, 2, ... and at least those acknowledged on the pipe.
  std::mt19937 rng(20240501);
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::filesystem::remove(path_);
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(pipe_fds[0]);
      std::unique_ptr<StudyWriter> writer;
      if (!StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok()) _exit(1);
      for (int64_t id = 0;; ++id) {
        if (!writer->Append(MakeTrial(id, TrialStatus::kCompleted, 0.5, 2)).ok()) _exit(1);
        if (id == 2 && write(pipe_fds[1], "3", 1) != 1) _exit(1);
      }
    }
    close(pipe_fds[1]);
    char acknowledged = 0;
    ASSERT_EQ(read(pipe_fds[0], &acknowledged, 1), 1);
    close(pipe_fds[0]);
    usleep(static_cast<useconds_t>(rng() % 20000));
    kill(child, SIGKILL);
    int wait_status = 0;
    ASSERT_EQ(waitpid(child, &wait_status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(wait_status)) << "the writer failed before it was killed";

    const StudyContents contents = Read();
    ASSERT_GE(contents.trials.size(), 3u);
    for (size_t i = 0; i < contents.trials.size(); ++i) {
      ASSERT_EQ(contents.trials[i].trial_id, static_cast<int64_t>(i));
      ASSERT_LE(contents.trials[i].curve.size(), 2u);
    }
  }
}

TEST_F(StudyFileTest, ReadableWhileTheWriterHasItOpen) {
  int ready[2];
  int done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::unique_ptr<StudyWriter> writer;
    if (!StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok()) _exit(1);
    for (const TrialResult& trial : TestTrials()) {
      if (!writer->Append(trial).ok()) _exit(1);
    }
    char byte = 0;
    if (write(ready[1], "r", 1) != 1 || read(done[0], &byte, 1) != 1) _exit(1);
    writer.reset();
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  const StudyContents contents = Read();
  EXPECT_EQ(contents.trials.size(), 3u);
  if (PythonHasH5py()) {
    EXPECT_EQ(CheckReadable(path_, 3, TestLayout(), 4), 0);
  }
  ASSERT_EQ(write(done[1], "d", 1), 1);
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
}

TEST_F(StudyFileTest, ReadableByH5pyAndPandas) {
  if (!PythonHasH5py()) GTEST_SKIP() << kPython << " has no h5py";
  std::vector<TrialResult> trials = TestTrials();
  trials[1].message = "arr\xC3\xAAt\xC3\xA9 \"early\", by hyperband";
  for (int64_t id = 3; id < 100; ++id) {
    trials.push_back(MakeTrial(id, TrialStatus::kCompleted, 0.01 * static_cast<double>(id), 2));
  }
  WriteStudy(trials);
  // 3 + 1 curve rows for the first trials, 2 for each of the 97 others.
  EXPECT_EQ(CheckReadable(path_, static_cast<int>(trials.size()), TestLayout(), 4 + 2 * 97), 0);
}

TEST_F(StudyFileTest, EmptyStudyIsReadableByH5pyAndPandas) {
  if (!PythonHasH5py()) GTEST_SKIP() << kPython << " has no h5py";
  WriteStudy({});
  EXPECT_EQ(CheckReadable(path_, 0, TestLayout(), 0), 0);
}

TEST_F(StudyFileTest, OpenAppendsToAnExistingStudyAndKeepsItsTrials) {
  const std::vector<TrialResult> trials = TestTrials();
  WriteStudy({trials[0], trials[1]});
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Open(path_, TestLayout(), &writer).ok());
  ASSERT_TRUE(writer->Stage(trials[2]).ok());
  ASSERT_TRUE(writer->Publish({{"searcher_state", std::string("ab")}}).ok());
  writer.reset();
  const StudyContents contents = Read();
  ASSERT_EQ(contents.trials.size(), 3u);
  for (size_t i = 0; i < trials.size(); ++i) ExpectSameTrial(trials[i], contents.trials[i]);
  EXPECT_EQ(std::get<std::string>(contents.extra_attributes.at("searcher_state")), "ab");
  EXPECT_EQ(contents.attributes.metric_name, TestAttributes().metric_name);
}

TEST_F(StudyFileTest, StagedTrialsReachTheFileOnlyWithTheNextPublish) {
  const std::vector<TrialResult> trials = TestTrials();
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok());
  ASSERT_TRUE(writer->Append(trials[0]).ok());
  ASSERT_TRUE(writer->Stage(trials[1]).ok());
  ASSERT_TRUE(writer->Stage(trials[2]).ok());
  // On disk: the study as last published, complete and readable.
  StudyContents contents = Read();
  ASSERT_EQ(contents.trials.size(), 1u);
  ExpectSameTrial(trials[0], contents.trials[0]);
  EXPECT_EQ(contents.extra_attributes.count("searcher_state"), 0u);
  // A bad row stages nothing: neither its /trials row nor part of its curve.
  TrialResult short_curve = trials[1];
  short_curve.trial_id = 9;
  short_curve.curve[0].values.pop_back();
  EXPECT_EQ(writer->Stage(short_curve).code(), Status::Code::kFailure);
  ASSERT_TRUE(writer->Publish({{"searcher_state", std::string("cd")}}).ok());
  contents = Read();
  ASSERT_EQ(contents.trials.size(), 3u);
  for (size_t i = 0; i < 3; ++i) ExpectSameTrial(trials[i], contents.trials[i]);
  EXPECT_EQ(std::get<std::string>(contents.extra_attributes.at("searcher_state")), "cd");
}

TEST_F(StudyFileTest, OpenRefusesAnotherLayoutANonHdf5FileAndASecondWriter) {
  WriteStudy(TestTrials());
  std::unique_ptr<StudyWriter> writer;
  StudyLayout other = TestLayout();
  other.params.pop_back();
  Status status = StudyWriter::Open(path_, other, &writer);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("/trials: its columns differ"), std::string::npos)
      << status.message();

  ASSERT_TRUE(StudyWriter::Open(path_, TestLayout(), &writer).ok());
  std::unique_ptr<StudyWriter> second;
  status = StudyWriter::Open(path_, TestLayout(), &second);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("another sweep is writing this study"), std::string::npos)
      << status.message();
  writer.reset();

  const std::string text = dir_ + "/text.h5";
  std::ofstream(text) << "not a study\n";
  status = StudyWriter::Open(text, TestLayout(), &writer);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find(text + ": not an HDF5 file"), std::string::npos)
      << status.message();
}

TEST_F(StudyFileTest, RepublishingALargeStateDoesNotGrowTheFile) {
  // The sweep state attributes are replaced with every trial; space they leave must be reused.
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok());
  const std::string state(100000, 'f');
  uintmax_t size_after_10 = 0;
  for (int64_t id = 0; id < 200; ++id) {
    ASSERT_TRUE(writer->Stage(MakeTrial(id, TrialStatus::kCompleted, 0.5, 2)).ok());
    ASSERT_TRUE(writer->Publish({{"searcher_state", state + std::to_string(id)}}).ok());
    if (id == 10) size_after_10 = std::filesystem::file_size(path_);
  }
  const uintmax_t size_after_200 = std::filesystem::file_size(path_);
  EXPECT_LT(size_after_200, size_after_10 + 200 * 1024)
      << size_after_10 << " -> " << size_after_200;
  EXPECT_EQ(Read().trials.size(), 200u);
}

TEST_F(StudyFileTest, AHundredThousandTrialStudyReadsBack) {
  // Published in batches of 100 as the coordinator does under load: 1,000 publishes, 11 of them
  // growing the file, then the close compacts it.
  const auto began = std::chrono::steady_clock::now();
  constexpr int64_t kTrials = 100000;
  {
    std::unique_ptr<StudyWriter> writer;
    ASSERT_TRUE(StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok());
    TrialResult trial = MakeTrial(0, TrialStatus::kCompleted, 0.0, 1);
    for (int64_t id = 0; id < kTrials; ++id) {
      trial.trial_id = id;
      trial.objective = 1e-5 * static_cast<double>(id);
      trial.params[1].value = id;
      trial.curve[0].values[0] = static_cast<double>(id);
      ASSERT_TRUE(writer->Stage(trial).ok());
      if (id % 100 == 99) {
        ASSERT_TRUE(writer->Publish({{"running_trials", std::to_string(id)}}).ok());
      }
    }
    // Read back while the writer is open (rows past the counts are in the file) ...
    const StudyContents open = Read();
    ASSERT_EQ(open.trials.size(), static_cast<size_t>(kTrials));
    EXPECT_EQ(std::get<std::string>(open.extra_attributes.at("running_trials")), "99999");
  }
  // ... and after the close (compacted).
  const StudyContents contents = Read();
  ASSERT_EQ(contents.trials.size(), static_cast<size_t>(kTrials));
  for (int64_t id : {int64_t{0}, int64_t{1}, int64_t{4095}, int64_t{65536}, kTrials - 1}) {
    const TrialResult& trial = contents.trials[static_cast<size_t>(id)];
    ASSERT_EQ(trial.trial_id, id);
    EXPECT_EQ(trial.objective, 1e-5 * static_cast<double>(id));
    EXPECT_EQ(trial.params[1].value, ParamValue(id));
    ASSERT_EQ(trial.curve.size(), 1u);
    EXPECT_EQ(trial.curve[0].values[0], static_cast<double>(id));
  }
  for (size_t i = 0; i < contents.trials.size(); ++i) {
    ASSERT_EQ(contents.trials[i].trial_id, static_cast<int64_t>(i));
  }
  EXPECT_EQ(std::get<std::string>(contents.extra_attributes.at("running_trials")), "99999");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  RecordProperty("seconds", std::to_string(seconds));
}

TEST_F(StudyFileTest, KilledAtRandomPointsNothingPublishedIsLostAndTheStudyResumes) {
  // The child stages trials and publishes them in batches of 1 to 40 (growth rewrites included)
  // with a state attribute, recording in shared memory the trials it has published, until it is
  // killed at a random moment. The study must read back with every published trial (and nothing
  // that was not staged), and a writer must reopen it and append.
  auto* published = static_cast<std::atomic<int64_t>*>(mmap(nullptr, sizeof(std::atomic<int64_t>),
                                                            PROT_READ | PROT_WRITE,
                                                            MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(published, MAP_FAILED);
  std::mt19937 rng(20240520);
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::filesystem::remove(path_);
    std::filesystem::remove(path_ + ".tmp");
    published->store(-1);
    const unsigned batch_seed = static_cast<unsigned>(rng());
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::mt19937 batches(batch_seed);
      std::unique_ptr<StudyWriter> writer;
      if (!StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok()) _exit(1);
      int64_t id = 0;
      for (;;) {
        const int64_t batch = 1 + static_cast<int64_t>(batches() % 40);
        for (int64_t end = id + batch; id < end; ++id) {
          if (!writer->Stage(MakeTrial(id, TrialStatus::kCompleted, 0.5, 1 + id % 3)).ok()) {
            _exit(1);
          }
        }
        if (!writer->Publish({{"running_trials", std::string(id % 300, 'r')}}).ok()) _exit(1);
        published->store(id - 1);
      }
    }
    // Kill it at a random moment after its first publish (on a busy machine the child may take
    // longer than any fixed delay to create the study at all).
    for (int waited_ms = 0; published->load() < 0 && waited_ms < 60000; ++waited_ms) usleep(1000);
    usleep(static_cast<useconds_t>(rng() % 200000));
    kill(child, SIGKILL);
    int wait_status = 0;
    ASSERT_EQ(waitpid(child, &wait_status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(wait_status)) << "the writer failed before it was killed";
    const int64_t last = published->load();

    StudyContents contents = Read();
    ASSERT_GE(static_cast<int64_t>(contents.trials.size()), last + 1);
    for (size_t i = 0; i < contents.trials.size(); ++i) {
      ASSERT_EQ(contents.trials[i].trial_id, static_cast<int64_t>(i));
      ASSERT_EQ(contents.trials[i].curve.size(), static_cast<size_t>(1 + i % 3));
    }
    const auto& state = std::get<std::string>(contents.extra_attributes.at("running_trials"));
    EXPECT_EQ(state, std::string(contents.trials.size() % 300, 'r'));

    // Resume: append after what was published.
    const int64_t next = static_cast<int64_t>(contents.trials.size());
    {
      std::unique_ptr<StudyWriter> writer;
      ASSERT_TRUE(StudyWriter::Open(path_, TestLayout(), &writer).ok());
      ASSERT_TRUE(writer->Append(MakeTrial(next, TrialStatus::kCompleted, 0.25, 2)).ok());
    }
    contents = Read();
    ASSERT_EQ(static_cast<int64_t>(contents.trials.size()), next + 1);
    EXPECT_EQ(contents.trials.back().trial_id, next);
  }
  munmap(published, sizeof(std::atomic<int64_t>));
}

TEST_F(StudyFileTest, AnInPlacePublishChangesNoHdf5Metadata) {
  // The crash-safety argument: between rewrites a publish writes only raw data (rows, the state
  // slot, a record). Every byte that differs after such publishes lies inside the storage of
  // /trials, /curves, /state or /published.
  std::unique_ptr<StudyWriter> writer;
  ASSERT_TRUE(StudyWriter::Create(path_, TestLayout(), TestAttributes(), &writer).ok());
  ASSERT_TRUE(writer->Append(MakeTrial(0, TrialStatus::kCompleted, 0.5, 2)).ok());
  ASSERT_TRUE(writer->Publish({{"running_trials", std::string(40, 'a')}}).ok());
  const std::string before = ReadBytes(path_);
  for (int64_t id = 1; id < 20; ++id) {
    ASSERT_TRUE(writer->Stage(MakeTrial(id, TrialStatus::kCompleted, 0.5, 2)).ok());
    ASSERT_TRUE(writer->Publish({{"running_trials", std::string(40 + id, 'b')}}).ok());
  }
  const std::string after = ReadBytes(path_);
  ASSERT_EQ(before.size(), after.size());
  // The raw storage of the four datasets, as [offset, offset + size).
  std::vector<std::pair<uint64_t, uint64_t>> raw;
  {
    study_internal::ScopedErrorSilencer silencer;
    // A copy: HDF5 does not open a file twice in one process with other access flags.
    const std::string copy = dir_ + "/copy.h5";
    WriteBytes(copy, after);
    hid_t file = H5Fopen(copy.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    for (const char* name : {"trials", "curves", "state", "published"}) {
      hid_t dataset = H5Dopen2(file, name, H5P_DEFAULT);
      ASSERT_GE(dataset, 0) << name;
      hid_t space = H5Dget_space(dataset);
      hsize_t chunks = 0;
      if (H5Dget_num_chunks(dataset, space, &chunks) >= 0 && chunks > 0) {
        for (hsize_t i = 0; i < chunks; ++i) {
          haddr_t address = 0;
          hsize_t size = 0;
          ASSERT_GE(H5Dget_chunk_info(dataset, space, i, nullptr, nullptr, &address, &size), 0);
          raw.emplace_back(address, address + size);
        }
      } else {
        const haddr_t address = H5Dget_offset(dataset);
        ASSERT_NE(address, HADDR_UNDEF) << name;
        raw.emplace_back(address, address + H5Dget_storage_size(dataset));
      }
      H5Sclose(space);
      H5Dclose(dataset);
    }
    H5Fclose(file);
  }
  size_t changed = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    if (before[i] == after[i]) continue;
    ++changed;
    const bool inside = std::any_of(raw.begin(), raw.end(), [&](const auto& range) {
      return i >= range.first && i < range.second;
    });
    ASSERT_TRUE(inside) << "byte " << i << " changed outside the datasets' raw storage";
  }
  EXPECT_GT(changed, 0u);
}

}  // namespace
}  // namespace hpo
