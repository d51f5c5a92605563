#include "tasks/text_classification/label_map.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <system_error>
#include <utility>

namespace hpo {
namespace {

// True when all of `text` is a decimal integer (optional '-', digits) within int64_t.
bool ParseInteger(const std::string& text, int64_t* value) {
  const char* end = text.data() + text.size();
  const auto [stopped, error] = std::from_chars(text.data(), end, *value);
  return error == std::errc() && stopped == end;
}

}  // namespace

Status LabelMap::Build(const std::vector<LabeledText>& train, const std::string& train_path,
                       LabelMap* labels) {
  std::set<std::string> distinct;
  for (const LabeledText& row : train) distinct.insert(row.label);
  if (distinct.size() < 2) {
    return Status::BadInput(train_path + ": the training split has " +
                            std::to_string(distinct.size()) +
                            " distinct label(s); a classifier needs at least 2");
  }
  std::vector<std::pair<int64_t, std::string>> numbered;
  for (const std::string& name : distinct) {
    int64_t value = 0;
    if (!ParseInteger(name, &value)) break;
    numbered.emplace_back(value, name);
  }
  labels->train_path_ = train_path;
  labels->names_.clear();
  if (numbered.size() == distinct.size()) {
    std::sort(numbered.begin(), numbered.end());
    for (auto& value_and_name : numbered)
      labels->names_.push_back(std::move(value_and_name.second));
  } else {
    labels->names_.assign(distinct.begin(), distinct.end());
  }
  labels->indices_.clear();
  for (size_t index = 0; index < labels->names_.size(); ++index) {
    labels->indices_.emplace(labels->names_[index], index);
  }
  return Status::Ok();
}

Status LabelMap::Index(const LabeledText& row, const std::string& path,
                       int64_t* class_index) const {
  const auto found = indices_.find(row.label);
  if (found == indices_.end()) {
    return Status::BadInput(path + ":" + std::to_string(row.line) + ": label '" + row.label +
                            "' is not a label of the training split (" + train_path_ + ")");
  }
  *class_index = found->second;
  return Status::Ok();
}

}  // namespace hpo
