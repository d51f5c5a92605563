// Private to hpo_core: the test results a command trial's program may leave for its best trial,
// as a built-in task's evaluation gives them: HPO_TRIAL_DIR/test_results.json.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"

namespace hpo {

// The file a command trial writes its test results to, in its HPO_TRIAL_DIR.
inline constexpr char kTestResultsFile[] = "test_results.json";

// Reads a test results file: one JSON object whose members are
//  * numbers: test metrics, named "test_" + the name unless it starts with "test_" already
//    ({"accuracy": 0.91} and {"test_accuracy": 0.91} are both test_accuracy);
//  * objects {"rows": [[...], ...], "labels": [...]}: tables (a confusion matrix is named
//    "confusion", as the built-in classifiers name theirs), rows of equal length, numbers only,
//    labels optional and then one per column.
// Other members are an error. BadInput naming the file and the member for a malformed file.
Status ReadTestResults(const std::string& path,
                       std::vector<std::pair<std::string, double>>* metrics,
                       std::vector<MetricTable>* tables);

}  // namespace hpo
