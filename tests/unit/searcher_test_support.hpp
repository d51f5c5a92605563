// Helpers shared by the searcher tests (test_bayes.cpp, test_sobol.cpp): sweep configs built as
// structs, one parameter of every W&B distribution, and a check that a suggested value is one the
// parameter can take.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/param.hpp"
#include "search/sampling.hpp"
#include "search/searcher.hpp"

namespace hpo::test_support {

inline ParameterSpec Parameter(std::string name, Distribution distribution, double min = 0.0,
                               double max = 1.0, double q = 1.0) {
  ParameterSpec spec;
  spec.name = std::move(name);
  spec.distribution = distribution;
  spec.type = distribution == Distribution::kIntUniform ? ParamType::kInt : ParamType::kFloat;
  spec.min = min;
  spec.max = max;
  spec.q = q;
  return spec;
}

inline ParameterSpec Choices(std::string name, ParamType type, std::vector<ParamValue> values,
                             std::vector<double> probabilities = {}) {
  ParameterSpec spec;
  spec.name = std::move(name);
  spec.distribution = probabilities.empty() ? Distribution::kCategorical
                                            : Distribution::kCategoricalWithProbabilities;
  spec.type = type;
  spec.values = std::move(values);
  spec.probabilities = std::move(probabilities);
  return spec;
}

inline ParameterSpec Shaped(std::string name, Distribution distribution, double first,
                            double second, double q = 1.0) {
  ParameterSpec spec = Parameter(std::move(name), distribution, 0.0, 0.0, q);
  spec.mu = spec.a = first;
  spec.sigma = spec.b = second;
  return spec;
}

// One parameter of every W&B distribution, with the types the config parser gives them.
inline std::vector<ParameterSpec> EveryDistribution() {
  ParameterSpec constant = Choices("constant", ParamType::kString, {std::string("fixed")});
  constant.distribution = Distribution::kConstant;
  return {
      constant,
      Choices("optimizer", ParamType::kString,
              {std::string("sgd"), std::string("adam"), std::string("adamw")}),
      Choices("batch_size", ParamType::kInt, {int64_t{32}, int64_t{64}, int64_t{128}},
              {0.2, 0.5, 0.3}),
      Parameter("width", Distribution::kIntUniform, 4, 40),
      Parameter("dropout", Distribution::kUniform, 0.0, 0.5),
      Parameter("momentum", Distribution::kQUniform, 0.05, 0.95, 0.1),
      Parameter("log_exponent", Distribution::kLogUniform, -6.0, 0.0),
      Parameter("lr", Distribution::kLogUniformValues, 1e-5, 1e-1),
      Parameter("q_log", Distribution::kQLogUniform, 0.0, 5.0, 4.0),
      Parameter("q_log_values", Distribution::kQLogUniformValues, 2.0, 500.0, 2.0),
      Parameter("inv_log", Distribution::kInvLogUniform, 1.0, 6.0),
      Parameter("inv_log_values", Distribution::kInvLogUniformValues, 1e-4, 1e-1),
      Shaped("normal", Distribution::kNormal, 1.0, 2.0),
      Shaped("q_normal", Distribution::kQNormal, 10.0, 3.0, 0.5),
      Shaped("log_normal", Distribution::kLogNormal, -2.0, 1.0),
      Shaped("q_log_normal", Distribution::kQLogNormal, 2.0, 0.5, 0.25),
      Shaped("beta", Distribution::kBeta, 2.0, 5.0),
      Shaped("q_beta", Distribution::kQBeta, 0.5, 0.5, 0.125),
  };
}

inline SweepConfig MakeConfig(SearchMethod method, std::vector<ParameterSpec> parameters,
                              uint64_t seed) {
  SweepConfig config;
  config.path = "test.yaml";
  config.sweep.method = method;
  config.sweep.metric.name = "val_loss";
  config.sweep.metric.goal = Goal::kMinimize;
  config.sweep.run_cap = 100;
  config.sweep.parameters = std::move(parameters);
  config.execution.seed = seed;
  return config;
}

inline std::unique_ptr<Searcher> MakeOrDie(const SweepConfig& config) {
  std::unique_ptr<Searcher> searcher;
  const Status status = MakeSearcher(config, &searcher);
  EXPECT_TRUE(status.ok()) << status.message();
  return searcher;
}

// Whether `value` is one `spec` can take: its type, inside SupportOf's interval, a multiple of q
// for q_* distributions, one of the values for constants and categoricals.
inline ::testing::AssertionResult IsValidValue(const ParameterSpec& spec, const ParamValue& value) {
  const auto failure = [&](const std::string& why) {
    return ::testing::AssertionFailure() << spec.name << " (" << DistributionName(spec.distribution)
                                         << ") = " << FormatParamValueExact(value) << ": " << why;
  };
  if (value.index() != static_cast<size_t>(spec.type)) return failure("wrong type");
  switch (spec.distribution) {
    case Distribution::kConstant:
    case Distribution::kCategorical:
    case Distribution::kCategoricalWithProbabilities:
      for (const ParamValue& choice : spec.values) {
        if (choice == value) return ::testing::AssertionSuccess();
      }
      return failure("not one of the values");
    default:
      break;
  }
  const double number = ParamAsDouble(value);
  if (!std::isfinite(number)) return failure("not finite");
  const ValueInterval support = SupportOf(spec);
  if (!support.Contains(ValueInterval{number, number, false, false})) {
    return failure("outside the support");
  }
  switch (spec.distribution) {
    case Distribution::kQUniform:
    case Distribution::kQLogUniform:
    case Distribution::kQLogUniformValues:
    case Distribution::kQNormal:
    case Distribution::kQLogNormal:
    case Distribution::kQBeta:
      if (std::abs(number / spec.q - std::round(number / spec.q)) > 1e-9) {
        return failure("not a multiple of q");
      }
      break;
    default:
      break;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace hpo::test_support
