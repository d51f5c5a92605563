// The classes of `task: text_classification`: the distinct labels of the training split, each
// mapped to a class index. A value type; const methods are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "hpo/status.hpp"
#include "tasks/text_classification/delimited_table.hpp"

namespace hpo {

// Class i is names()[i]. The order is sorted so that it never depends on the order of the rows:
// numeric when every label is a decimal integer within int64_t ("-1" < "2" < "10"; labels of
// equal value such as "1" and "01" by their text), byte-wise otherwise ("10" < "2" < "ham").
class LabelMap {
 public:
  // The classes of `train`, read from `train_path` (named in Index's errors). BadInput when the
  // split has fewer than two distinct labels: nothing to classify.
  static Status Build(const std::vector<LabeledText>& train, const std::string& train_path,
                      LabelMap* labels);

  int64_t size() const { return static_cast<int64_t>(names_.size()); }
  const std::vector<std::string>& names() const { return names_; }

  // The class of `row`, read from `path`. BadInput "PATH:LINE: label 'x' is not a label of the
  // training split (TRAIN_PATH)" when the training split has no such label.
  Status Index(const LabeledText& row, const std::string& path, int64_t* class_index) const;

 private:
  std::string train_path_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int64_t> indices_;
};

}  // namespace hpo
