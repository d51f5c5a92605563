#include "tasks/text_classification/tokenizer.hpp"

namespace hpo {

std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  ForEachToken(text, [&tokens](const std::string& token) {
    tokens.push_back(token);
    return true;
  });
  return tokens;
}

}  // namespace hpo
