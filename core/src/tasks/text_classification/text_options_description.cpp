#include "tasks/text_classification/text_options.hpp"

#include <string>
#include <vector>

#include "config/yaml_fields.hpp"

namespace hpo {
namespace {

const std::vector<std::string>& SectionKeys() {
  static const std::vector<std::string> kKeys = {"train",     "validation",  "test",
                                                 "format",    "text_column", "label_column",
                                                 "min_count", "max_vocab",   "vocabulary"};
  return kKeys;
}

std::string Key(const std::string& name) { return std::string(kTextSectionKey) + "." + name; }

Status ReadCount(const TaskOptions& options, const std::string& name, int64_t minimum,
                 int64_t* value) {
  const TaskOption* option = options.Find(Key(name));
  if (option == nullptr) return Status::Ok();
  if (!config_internal::ParseIntegerScalar(option->value, value) || *value < minimum) {
    return options.Error(Key(name), "must be an integer >= " + std::to_string(minimum) + ", got '" +
                                        option->value + "'");
  }
  return Status::Ok();
}

}  // namespace

Status ReadTextCorpusSpec(const SweepConfig& config, TextCorpusSpec* spec) {
  const TaskOptions& options = config.task_options;
  if (options.Find(kTextSectionKey) != nullptr) {
    return options.Error(kTextSectionKey,
                         "must be a mapping with train, test and optional validation, format, "
                         "text_column, label_column, min_count, max_vocab, vocabulary");
  }
  const std::string prefix = Key("");
  for (const auto& [key, option] : options.values) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string name = key.substr(prefix.size());
    bool known = false;
    for (const std::string& section_key : SectionKeys()) known = known || name == section_key;
    if (!known) {
      std::string accepted;
      for (const std::string& section_key : SectionKeys()) {
        accepted += (accepted.empty() ? "" : ", ") + section_key;
      }
      return options.Error(key, "unknown key (accepted: " + accepted + ")");
    }
  }
  for (const char* required : {"train", "test"}) {
    if (options.Find(Key(required)) == nullptr) {
      return Status::BadInput(options.file + ": " + Key(required) +
                              ": missing (a TSV or CSV file with a header row)");
    }
  }
  *spec = TextCorpusSpec();
  spec->train = options.Get(Key("train"), "");
  spec->validation = options.Get(Key("validation"), "");
  spec->test = options.Get(Key("test"), "");
  spec->vocabulary_file = options.Get(Key("vocabulary"), "");
  const std::string format = options.Get(Key("format"), "tsv");
  if (format != "tsv" && format != "csv") {
    return options.Error(Key("format"), "must be tsv or csv, got '" + format + "'");
  }
  spec->format = format == "csv" ? TableFormat::kCsv : TableFormat::kTsv;
  spec->text_column = options.Get(Key("text_column"), spec->text_column);
  spec->label_column = options.Get(Key("label_column"), spec->label_column);
  HPO_RETURN_IF_ERROR(ReadCount(options, "min_count", 1, &spec->min_count));
  HPO_RETURN_IF_ERROR(ReadCount(options, "max_vocab", 0, &spec->max_vocab));
  return Status::Ok();
}

}  // namespace hpo
