// The spellings of the config's enumerations, as written in config files and study files, and
// the search and stopping of a config in words.
#include <string>

#include "hpo/config.hpp"

namespace hpo {

bool IsLogScale(Distribution distribution) {
  switch (distribution) {
    case Distribution::kLogUniform:
    case Distribution::kLogUniformValues:
    case Distribution::kQLogUniform:
    case Distribution::kQLogUniformValues:
    case Distribution::kInvLogUniform:
    case Distribution::kInvLogUniformValues:
    case Distribution::kLogNormal:
    case Distribution::kQLogNormal:
      return true;
    default:
      return false;
  }
}

const char* DistributionName(Distribution distribution) {
  switch (distribution) {
    case Distribution::kConstant:
      return "constant";
    case Distribution::kCategorical:
      return "categorical";
    case Distribution::kCategoricalWithProbabilities:
      return "categorical_w_probabilities";
    case Distribution::kIntUniform:
      return "int_uniform";
    case Distribution::kUniform:
      return "uniform";
    case Distribution::kQUniform:
      return "q_uniform";
    case Distribution::kLogUniform:
      return "log_uniform";
    case Distribution::kLogUniformValues:
      return "log_uniform_values";
    case Distribution::kQLogUniform:
      return "q_log_uniform";
    case Distribution::kQLogUniformValues:
      return "q_log_uniform_values";
    case Distribution::kInvLogUniform:
      return "inv_log_uniform";
    case Distribution::kInvLogUniformValues:
      return "inv_log_uniform_values";
    case Distribution::kNormal:
      return "normal";
    case Distribution::kQNormal:
      return "q_normal";
    case Distribution::kLogNormal:
      return "log_normal";
    case Distribution::kQLogNormal:
      return "q_log_normal";
    case Distribution::kBeta:
      return "beta";
    case Distribution::kQBeta:
      return "q_beta";
  }
  return "unknown";
}

const char* SearchMethodName(SearchMethod method) {
  switch (method) {
    case SearchMethod::kGrid:
      return "grid";
    case SearchMethod::kRandom:
      return "random";
    case SearchMethod::kBayes:
      return "bayes";
  }
  return "unknown";
}

const char* BayesModelName(BayesModel model) {
  switch (model) {
    case BayesModel::kTpe:
      return "tpe";
    case BayesModel::kGp:
      return "gp";
    case BayesModel::kTpeIndependent:
      return "tpe_independent";
    case BayesModel::kCurves:
      return "curves";
    case BayesModel::kCurvesTpe:
      return "curves_tpe";
  }
  return "unknown";
}

std::string DescribeSearchAndStopping(const SweepConfig& config) {
  std::string text = std::string(SearchMethodName(config.sweep.method)) + " search";
  const bool curves = PredictsCurves(config.search.model);
  if (config.sweep.method == SearchMethod::kBayes) {
    text += std::string(" (") + BayesModelName(config.search.model) + ")";
  }
  if (config.sweep.early_terminate.enabled) {
    if (curves) {
      text += ", curve scheduler";
    } else {
      text += config.sweep.early_terminate.promotion ? ", ASHA promotion" : ", ASHA stopping";
    }
  }
  if (config.median_stopping.enabled) text += ", median stopping";
  if (config.pbt.enabled) text += ", population-based training";
  return text;
}

const char* GoalName(Goal goal) {
  switch (goal) {
    case Goal::kMinimize:
      return "minimize";
    case Goal::kMaximize:
      return "maximize";
  }
  return "unknown";
}

}  // namespace hpo
