// The grid and random searchers built by MakeSearcher.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "search/searcher.hpp"

namespace hpo {
namespace {

SweepConfig ParseOrDie(const std::string& text) {
  SweepConfig config;
  const Status status = ParseConfig(text, "test.yaml", &config);
  EXPECT_TRUE(status.ok()) << status.message();
  return config;
}

std::unique_ptr<Searcher> MakeOrDie(const SweepConfig& config) {
  std::unique_ptr<Searcher> searcher;
  const Status status = MakeSearcher(config, &searcher);
  EXPECT_TRUE(status.ok()) << status.message();
  return searcher;
}

constexpr char kGridConfig[] = R"(task: synthetic
sweep:
  method: grid
  metric: {name: val_loss}
  parameters:
    optimizer: {values: [sgd, adam]}
    lr: {value: 0.01}
    batch_size: {values: [32, 64, 128]}
    width: {min: 8, max: 9}
)";

std::string RandomConfig(uint64_t seed) {
  return "task: synthetic\nseed: " + std::to_string(seed) + R"(
sweep:
  method: random
  run_cap: 50
  metric: {name: val_loss}
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    optimizer: {values: [sgd, adam, adamw]}
    batch_size: {values: [16, 32, 64, 128]}
    dropout: {min: 0.0, max: 0.5}
    width: {min: 4, max: 256}
)";
}

std::vector<Assignment> SuggestAll(Searcher& searcher, int64_t count) {
  std::vector<Assignment> suggestions;
  for (int64_t id = 0; id < count; ++id) {
    std::optional<Assignment> params = searcher.Suggest(id);
    EXPECT_TRUE(params.has_value()) << "trial " << id;
    if (params) suggestions.push_back(*params);
  }
  return suggestions;
}

bool SameAssignments(const std::vector<Assignment>& a, const std::vector<Assignment>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (size_t j = 0; j < a[i].size(); ++j) {
      if (a[i][j].name != b[i][j].name || a[i][j].value != b[i][j].value) return false;
    }
  }
  return true;
}

TEST(GridSearcherTest, EnumeratesEveryCombinationOnceFirstParameterSlowest) {
  std::unique_ptr<Searcher> searcher = MakeOrDie(ParseOrDie(kGridConfig));
  ASSERT_TRUE(searcher);
  ASSERT_EQ(searcher->SpaceSize(), 2 * 1 * 3 * 2);

  std::vector<Assignment> expected;
  for (const char* optimizer : {"sgd", "adam"}) {
    for (int64_t batch_size : {32, 64, 128}) {
      for (int64_t width : {8, 9}) {
        expected.push_back({{"optimizer", std::string(optimizer)},
                            {"lr", 0.01},
                            {"batch_size", batch_size},
                            {"width", width}});
      }
    }
  }
  const std::vector<Assignment> suggested = SuggestAll(*searcher, 12);
  EXPECT_TRUE(SameAssignments(suggested, expected));
  EXPECT_FALSE(searcher->Suggest(12).has_value());
  EXPECT_FALSE(searcher->Suggest(1000).has_value());
}

TEST(GridSearcherTest, PointsDoNotDependOnCallOrder) {
  const SweepConfig config = ParseOrDie(kGridConfig);
  std::unique_ptr<Searcher> forward = MakeOrDie(config);
  std::unique_ptr<Searcher> backward = MakeOrDie(config);
  const std::vector<Assignment> in_order = SuggestAll(*forward, 12);
  for (int64_t id = 11; id >= 0; --id) {
    std::optional<Assignment> params = backward->Suggest(id);
    ASSERT_TRUE(params.has_value());
    EXPECT_TRUE(SameAssignments({*params}, {in_order[id]})) << "trial " << id;
  }
}

TEST(GridSearcherTest, RejectsAContinuousParameter) {
  SweepConfig config = ParseOrDie(kGridConfig);
  config.path = "sweep.yaml";
  config.sweep.parameters[1].distribution = Distribution::kUniform;  // lr, line 7
  config.sweep.parameters[1].min = 0.001;
  config.sweep.parameters[1].max = 0.1;
  std::unique_ptr<Searcher> searcher;
  const Status status = MakeSearcher(config, &searcher);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(),
            "sweep.yaml:7: sweep.parameters.lr: grid search needs `values`, got distribution "
            "uniform");
}

TEST(RandomSearcherTest, SameSeedGivesSameSequence) {
  std::unique_ptr<Searcher> first = MakeOrDie(ParseOrDie(RandomConfig(1234)));
  std::unique_ptr<Searcher> second = MakeOrDie(ParseOrDie(RandomConfig(1234)));
  EXPECT_FALSE(first->SpaceSize().has_value());
  EXPECT_TRUE(SameAssignments(SuggestAll(*first, 50), SuggestAll(*second, 50)));
}

TEST(RandomSearcherTest, DifferentSeedsGiveDifferentSequences) {
  std::unique_ptr<Searcher> first = MakeOrDie(ParseOrDie(RandomConfig(1234)));
  std::unique_ptr<Searcher> second = MakeOrDie(ParseOrDie(RandomConfig(1235)));
  const std::vector<Assignment> a = SuggestAll(*first, 50);
  const std::vector<Assignment> b = SuggestAll(*second, 50);
  ASSERT_EQ(a.size(), b.size());
  int same_lr = 0;
  for (size_t i = 0; i < a.size(); ++i) same_lr += a[i][0].value == b[i][0].value;
  EXPECT_EQ(same_lr, 0);
}

TEST(RandomSearcherTest, TrialsDifferFromEachOther) {
  std::unique_ptr<Searcher> searcher = MakeOrDie(ParseOrDie(RandomConfig(7)));
  std::set<double> learning_rates;
  for (const Assignment& params : SuggestAll(*searcher, 50)) {
    learning_rates.insert(std::get<double>(params[0].value));
  }
  EXPECT_EQ(learning_rates.size(), 50u);
}

TEST(RandomSearcherTest, TrialDoesNotDependOnCallOrder) {
  const SweepConfig config = ParseOrDie(RandomConfig(99));
  std::unique_ptr<Searcher> in_order = MakeOrDie(config);
  std::unique_ptr<Searcher> shuffled = MakeOrDie(config);
  const std::vector<Assignment> expected = SuggestAll(*in_order, 50);
  for (int64_t id : {49, 3, 17, 17, 0, 25, 3}) {
    std::optional<Assignment> params = shuffled->Suggest(id);
    ASSERT_TRUE(params.has_value());
    EXPECT_TRUE(SameAssignments({*params}, {expected[id]})) << "trial " << id;
  }
}

TEST(RandomSearcherTest, SuggestionsFollowConfigOrderAndTypes) {
  std::unique_ptr<Searcher> searcher = MakeOrDie(ParseOrDie(RandomConfig(5)));
  for (const Assignment& params : SuggestAll(*searcher, 50)) {
    ASSERT_EQ(params.size(), 5u);
    EXPECT_EQ(params[0].name, "lr");
    const double lr = std::get<double>(params[0].value);
    EXPECT_GE(lr, 0.0001);
    EXPECT_LE(lr, 0.1);
    EXPECT_EQ(params[1].name, "optimizer");
    EXPECT_TRUE(std::holds_alternative<std::string>(params[1].value));
    EXPECT_EQ(params[2].name, "batch_size");
    EXPECT_TRUE(std::holds_alternative<int64_t>(params[2].value));
    EXPECT_EQ(params[3].name, "dropout");
    EXPECT_TRUE(std::holds_alternative<double>(params[3].value));
    EXPECT_EQ(params[4].name, "width");
    const int64_t width = std::get<int64_t>(params[4].value);
    EXPECT_GE(width, 4);
    EXPECT_LE(width, 256);
  }
}

}  // namespace
}  // namespace hpo
