#include "common/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "common/seeding.hpp"

namespace hpo {

namespace {

constexpr uint64_t kParegoPurpose = 0x70617265676fULL;  // "parego"

bool AllFiniteLosses(const std::vector<double>& point) {
  return std::all_of(point.begin(), point.end(), [](double v) { return std::isfinite(v); });
}

}  // namespace

bool Dominates(const std::vector<double>& a, const std::vector<double>& b) {
  if (!AllFiniteLosses(a)) return false;
  if (!AllFiniteLosses(b)) return true;
  bool better = false;
  for (size_t j = 0; j < a.size(); ++j) {
    if (a[j] > b[j]) return false;
    better = better || a[j] < b[j];
  }
  return better;
}

std::vector<size_t> ParetoFront(const std::vector<std::vector<double>>& points) {
  std::vector<size_t> front;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!AllFiniteLosses(points[i])) continue;
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j) {
      dominated = j != i && Dominates(points[j], points[i]);
    }
    if (!dominated) front.push_back(i);
  }
  return front;
}

double Hypervolume2d(const std::vector<std::vector<double>>& points,
                     const std::vector<double>& reference) {
  std::vector<std::pair<double, double>> inside;
  for (const std::vector<double>& point : points) {
    if (AllFiniteLosses(point) && point[0] < reference[0] && point[1] < reference[1]) {
      inside.emplace_back(point[0], point[1]);
    }
  }
  std::sort(inside.begin(), inside.end());
  // Sweep by the first objective: each point adds the strip up to the lowest second loss so far.
  double area = 0.0;
  double ceiling = reference[1];
  for (const auto& [first, second] : inside) {
    if (second >= ceiling) continue;
    area += (reference[0] - first) * (ceiling - second);
    ceiling = second;
  }
  return area;
}

std::vector<double> ParegoWeights(uint64_t seed, int64_t trial_id, size_t objectives) {
  std::mt19937_64 generator(DeriveSeed(seed, kParegoPurpose, static_cast<uint64_t>(trial_id)));
  std::exponential_distribution<double> exponential(1.0);
  std::vector<double> weights(objectives);
  double sum = 0.0;
  for (double& weight : weights) {
    weight = exponential(generator) + 1e-12;
    sum += weight;
  }
  for (double& weight : weights) weight /= sum;
  return weights;
}

std::vector<std::vector<double>> NormaliseLosses(const std::vector<std::vector<double>>& points) {
  if (points.empty()) return points;
  const size_t objectives = points.front().size();
  std::vector<double> low(objectives, std::numeric_limits<double>::infinity());
  std::vector<double> high(objectives, -std::numeric_limits<double>::infinity());
  for (const std::vector<double>& point : points) {
    if (!AllFiniteLosses(point)) continue;
    for (size_t j = 0; j < objectives; ++j) {
      low[j] = std::min(low[j], point[j]);
      high[j] = std::max(high[j], point[j]);
    }
  }
  std::vector<std::vector<double>> normalised = points;
  for (std::vector<double>& point : normalised) {
    if (!AllFiniteLosses(point)) continue;
    for (size_t j = 0; j < objectives; ++j) {
      point[j] = high[j] > low[j] ? (point[j] - low[j]) / (high[j] - low[j]) : 0.0;
    }
  }
  return normalised;
}

double AugmentedChebyshev(const std::vector<double>& losses, const std::vector<double>& weights,
                          double rho) {
  if (!AllFiniteLosses(losses)) return std::numeric_limits<double>::infinity();
  double largest = -std::numeric_limits<double>::infinity();
  double sum = 0.0;
  for (size_t j = 0; j < losses.size(); ++j) {
    largest = std::max(largest, weights[j] * losses[j]);
    sum += weights[j] * losses[j];
  }
  return largest + rho * sum;
}

}  // namespace hpo
