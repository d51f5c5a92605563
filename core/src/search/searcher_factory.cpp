#include "search/searcher.hpp"

#include <memory>

#include "searchers.hpp"

namespace hpo {

Status MakeSearcher(const SweepConfig& config, std::unique_ptr<Searcher>* searcher) {
  switch (config.sweep.method) {
    case SearchMethod::kGrid:
      return GridSearcher::Create(config, searcher);
    case SearchMethod::kRandom:
      if (config.search.sampler == RandomSampler::kSobol) {
        return SobolSearcher::Create(config, searcher);
      }
      *searcher = std::make_unique<RandomSearcher>(config.sweep.parameters, config.execution.seed);
      return Status::Ok();
    case SearchMethod::kBayes:
      // curves_tpe: TPE on the predicted finals (TrialHistory's rule follows the model).
      if (config.search.model == BayesModel::kGp || config.search.model == BayesModel::kCurves) {
        return GpSearcher::Create(config, searcher);
      }
      return TpeSearcher::Create(config, searcher);
  }
  return Status::Failure("unknown search method");
}

}  // namespace hpo
