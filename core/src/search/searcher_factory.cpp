#include "hpo/searcher.hpp"

#include <memory>

#include "searchers.hpp"

namespace hpo {

Status MakeSearcher(const SweepConfig& config, std::unique_ptr<Searcher>* searcher) {
  switch (config.sweep.method) {
    case SearchMethod::kGrid:
      return GridSearcher::Create(config, searcher);
    case SearchMethod::kRandom:
      *searcher = std::make_unique<RandomSearcher>(config.sweep.parameters, config.execution.seed);
      return Status::Ok();
    case SearchMethod::kBayes:
      break;
  }
  return Status::Failure("unknown search method");
}

}  // namespace hpo
