// Hyperparameter importance for `hpo report`: fANOVA (Hutter et al., ICML 2014) over a random
// forest fitted to the completed trials, as Optuna's default FanovaImportanceEvaluator computes it
// (64 trees, depth up to 64, bootstrap samples, every feature tried at every split; parameters in
// their own units, not log-transformed; a categorical parameter one-hot encoded and its columns
// marginalised together). Deterministic for a given seed. Pure functions, thread-safe, but for
// StoreStudyImportance, which writes the study file.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "study/study_file.hpp"

namespace hpo {

struct FanovaOptions {
  int trees = 64;
  int max_depth = 64;
  uint64_t seed = 0;
};

// One input dimension of the forest: a numeric parameter (one column, values in [low, high]) or a
// categorical one of `categories` choices (one-hot: that many 0/1 columns).
struct FanovaParam {
  std::string name;
  int categories = 0;  // 0: numeric
  double low = 0.0;
  double high = 1.0;
};

// fANOVA importances of `params` (same order), normalised to sum to 1: the share of the
// forest's variance over the search space that each parameter's main effect explains, averaged
// over the trees. `rows[i][p]` is trial i's value of params[p] (a category's index for a
// categorical one); `objectives[i]` its objective. Returns false (and leaves `importances`
// empty) when there are fewer than 2 rows or the objective does not vary.
bool FanovaImportances(const std::vector<FanovaParam>& params,
                       const std::vector<std::vector<double>>& rows,
                       const std::vector<double>& objectives, const FanovaOptions& options,
                       std::vector<double>* importances);

// A study's importances: the hyperparameters that vary (constants are left out), most important
// first, over the completed trials with a finite objective; a parameter that conditions leave out
// of some trials has its absence as one more value. `note` says why `values` is empty when it is.
struct StudyImportance {
  std::string method = "fanova";
  FanovaOptions options;
  int64_t trials = 0;                                  // completed trials the forest was fitted to
  std::vector<std::pair<std::string, double>> values;  // name, importance; sorted, descending
  std::string note;
};

// Ranges and categories come from the study's config (parsed with `catalog`'s tasks) where it
// describes the parameter, else from the trials' values.
StudyImportance ComputeStudyImportance(const StudyContents& study, const TaskCatalog& catalog,
                                       const FanovaOptions& options = FanovaOptions());

// As stored in the study's `param_importance` attribute and embedded in the HTML page:
// {"method": "fanova", "trees": 64, "max_depth": 64, "seed": 0, "trials": N,
//  "importance": [{"name": "lr", "importance": 0.71}, ...], "note": "..."}.
std::string StudyImportanceJson(const StudyImportance& importance);

// The study attribute that holds StudyImportanceJson (written by `hpo report --html`).
inline constexpr char kImportanceAttribute[] = "param_importance";

// Stores `importance` in the study at `path` (the study file or the output folder that holds it,
// as ReadStudy's callers take it: StudyPathOf) as its kImportanceAttribute, unless `study`, the
// study as read from there, holds that already. An error naming the reason when the study cannot
// be written (a running sweep holds its lock; its folder is read-only): nothing changes then.
Status StoreStudyImportance(const std::string& path, const StudyContents& study,
                            const StudyImportance& importance);

}  // namespace hpo
