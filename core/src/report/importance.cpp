// fANOVA over a random forest (see importance.hpp). The forest follows scikit-learn's
// RandomForestRegressor as Optuna configures it: each tree is fitted to a bootstrap sample (n rows
// drawn with replacement, kept as row weights), splits minimise the weighted squared error over
// every feature (visited in a random order, the first best split kept), thresholds halfway between
// neighbouring values, nodes split down to single distinct rows, pure nodes or max_depth. The
// variance decomposition is Optuna's (_fanova/_tree.py): a tree's total variance is that of its
// leaf values weighted by leaf volume in the search space; a parameter's main effect at a point
// of its own columns is the volume-weighted mean of the leaves containing it, its variance taken
// over the cells that the tree's split values cut the parameter's range into. Where Optuna walks
// the tree once per cell, this adds each leaf's contribution over the range of cells it covers
// (a difference array for a numeric parameter), O(leaves + cells) per tree and parameter, so a
// 10,000-trial study takes seconds rather than minutes.
#include "report/importance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>

#include "report_internal.hpp"

namespace hpo {

namespace {

using report_internal::Axis;
using report_internal::AxisScale;
using report_internal::JsonNumber;
using report_internal::JsonString;

struct Node {
  int feature = -1;  // -1: a leaf
  double threshold = 0.0;
  int left = -1;
  int right = -1;
  double value = 0.0;  // weighted mean objective of its rows
};

// One regression tree over column-major features `x` (x[f][row]).
class TreeBuilder {
 public:
  TreeBuilder(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
              std::vector<double> weights, int max_depth, std::mt19937_64* rng)
      : x_(x), y_(y), w_(std::move(weights)), max_depth_(max_depth), rng_(rng) {
    std::vector<int> rows;
    for (size_t i = 0; i < y_.size(); ++i) {
      if (w_[i] > 0.0) rows.push_back(static_cast<int>(i));
    }
    sorted_.assign(x_.size(), rows);
    for (size_t f = 0; f < x_.size(); ++f) {
      std::stable_sort(sorted_[f].begin(), sorted_[f].end(),
                       [&](int a, int b) { return x_[f][a] < x_[f][b]; });
    }
    goes_left_.assign(y_.size(), 0);
    scratch_.resize(rows.size());
  }

  std::vector<Node> Build() {
    if (!sorted_.empty() && !sorted_[0].empty()) Grow(0, sorted_[0].size(), 0);
    return std::move(nodes_);
  }

 private:
  int Grow(size_t lo, size_t hi, int depth) {
    const int index = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
    double weight = 0.0;
    double sum = 0.0;
    double squares = 0.0;
    for (size_t k = lo; k < hi; ++k) {
      const int row = sorted_[0][k];
      weight += w_[row];
      sum += w_[row] * y_[row];
      squares += w_[row] * y_[row] * y_[row];
    }
    nodes_[index].value = sum / weight;
    const double mean = sum / weight;
    const double impurity = squares / weight - mean * mean;
    if (hi - lo < 2 || depth >= max_depth_ || impurity <= 1e-12 * std::max(1.0, mean * mean)) {
      return index;
    }
    int best_feature = -1;
    double best_threshold = 0.0;
    if (!BestSplit(lo, hi, weight, sum, &best_feature, &best_threshold)) return index;
    const size_t middle = Partition(lo, hi, best_feature, best_threshold);
    nodes_[index].feature = best_feature;
    nodes_[index].threshold = best_threshold;
    const int left = Grow(lo, middle, depth + 1);
    nodes_[index].left = left;
    const int right = Grow(middle, hi, depth + 1);
    nodes_[index].right = right;
    return index;
  }

  // The best split of rows [lo, hi) (their total `weight` and weighted `sum`), the features tried
  // in a random order: the one that maximises sum_L^2 / w_L + sum_R^2 / w_R (least weighted
  // squared error). False when no split improves on none.
  bool BestSplit(size_t lo, size_t hi, double weight, double sum, int* best_feature,
                 double* best_threshold) {
    std::vector<size_t> order(x_.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), *rng_);
    double best = sum * sum / weight * (1.0 + 1e-12) + 1e-300;
    for (const size_t f : order) {
      const std::vector<int>& rows = sorted_[f];
      const std::vector<double>& column = x_[f];
      if (column[rows[lo]] == column[rows[hi - 1]]) continue;
      double left_weight = 0.0;
      double left_sum = 0.0;
      for (size_t k = lo; k + 1 < hi; ++k) {
        const int row = rows[k];
        left_weight += w_[row];
        left_sum += w_[row] * y_[row];
        const double a = column[row];
        const double b = column[rows[k + 1]];
        if (b <= a + 1e-7) continue;  // scikit-learn's FEATURE_THRESHOLD
        const double right_weight = weight - left_weight;
        const double right_sum = sum - left_sum;
        const double score =
            left_sum * left_sum / left_weight + right_sum * right_sum / right_weight;
        if (score > best) {
          best = score;
          *best_feature = static_cast<int>(f);
          double threshold = 0.5 * (a + b);
          if (!(threshold < b) || !std::isfinite(threshold)) threshold = a;
          *best_threshold = threshold;
        }
      }
    }
    return *best_feature >= 0;
  }

  // Partitions every feature's sorted rows [lo, hi) by `feature` <= `threshold`, keeping their
  // order; returns where the right part begins.
  size_t Partition(size_t lo, size_t hi, int feature, double threshold) {
    const std::vector<double>& column = x_[static_cast<size_t>(feature)];
    for (size_t k = lo; k < hi; ++k) {
      const int row = sorted_[0][k];
      goes_left_[row] = column[row] <= threshold ? 1 : 0;
    }
    size_t middle = lo;
    for (std::vector<int>& rows : sorted_) {
      size_t left = 0;
      const size_t count = hi - lo;
      for (size_t k = lo; k < hi; ++k) {
        if (goes_left_[rows[k]]) ++left;
      }
      size_t l = 0;
      size_t r = left;
      for (size_t k = lo; k < hi; ++k) {
        const int row = rows[k];
        scratch_[goes_left_[row] ? l++ : r++] = row;
      }
      std::copy_n(scratch_.begin(), count, rows.begin() + static_cast<std::ptrdiff_t>(lo));
      middle = lo + left;
    }
    return middle;
  }

  const std::vector<std::vector<double>>& x_;
  const std::vector<double>& y_;
  const std::vector<double> w_;
  const int max_depth_;
  std::mt19937_64* rng_;
  std::vector<std::vector<int>> sorted_;  // per feature: the node's rows by value, node by node
  std::vector<char> goes_left_;
  std::vector<int> scratch_;
  std::vector<Node> nodes_;
};

struct Leaf {
  double value = 0.0;
  std::vector<double> lower;  // the leaf's box in the search space, per column
  std::vector<double> upper;
};

void CollectLeaves(const std::vector<Node>& nodes, int index, std::vector<double>* lower,
                   std::vector<double>* upper, std::vector<Leaf>* leaves) {
  const Node& node = nodes[static_cast<size_t>(index)];
  if (node.feature < 0) {
    leaves->push_back(Leaf{node.value, *lower, *upper});
    return;
  }
  const size_t f = static_cast<size_t>(node.feature);
  const double saved_upper = (*upper)[f];
  (*upper)[f] = node.threshold;
  CollectLeaves(nodes, node.left, lower, upper, leaves);
  (*upper)[f] = saved_upper;
  const double saved_lower = (*lower)[f];
  (*lower)[f] = node.threshold;
  CollectLeaves(nodes, node.right, lower, upper, leaves);
  (*lower)[f] = saved_lower;
}

double WeightedVariance(const std::vector<double>& values, const std::vector<double>& weights) {
  double total = 0.0;
  double sum = 0.0;
  for (size_t i = 0; i < values.size(); ++i) {
    total += weights[i];
    sum += weights[i] * values[i];
  }
  if (!(total > 0.0)) return 0.0;
  const double mean = sum / total;
  double variance = 0.0;
  for (size_t i = 0; i < values.size(); ++i) {
    variance += weights[i] * (values[i] - mean) * (values[i] - mean);
  }
  return std::max(0.0, variance / total);
}

// The variance of one parameter's main effect in one tree (its columns `columns`).
double MarginalVariance(const std::vector<Node>& nodes, const std::vector<Leaf>& leaves,
                        const std::vector<size_t>& columns, const std::vector<double>& low,
                        const std::vector<double>& high) {
  // Cell boundaries per column: the range's ends and the tree's thresholds on the column.
  std::vector<std::vector<double>> edges(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    std::vector<double>& e = edges[c];
    e.push_back(low[columns[c]]);
    for (const Node& node : nodes) {
      if (node.feature >= 0 && static_cast<size_t>(node.feature) == columns[c]) {
        e.push_back(node.threshold);
      }
    }
    e.push_back(high[columns[c]]);
    std::sort(e.begin() + 1, e.end() - 1);
    e.erase(std::unique(e.begin(), e.end()), e.end());
  }
  size_t cells = 1;
  std::vector<size_t> stride(columns.size());
  for (size_t c = columns.size(); c-- > 0;) {
    stride[c] = cells;
    cells *= edges[c].size() - 1;
  }
  // The volume of the other columns' space, which each leaf's contribution is a share of.
  std::vector<char> own(low.size(), 0);
  for (const size_t column : columns) own[column] = 1;
  double rest_volume = 1.0;
  for (size_t f = 0; f < low.size(); ++f) {
    if (!own[f]) rest_volume *= high[f] - low[f];
  }
  std::vector<double> effect(cells + 1, 0.0);
  const bool one_column = columns.size() == 1;
  for (const Leaf& leaf : leaves) {
    double volume = 1.0;
    for (size_t f = 0; f < low.size(); ++f) {
      if (!own[f]) volume *= leaf.upper[f] - leaf.lower[f];
    }
    const double contribution = leaf.value * volume / rest_volume;
    std::vector<size_t> first(columns.size());
    std::vector<size_t> last(columns.size());  // exclusive
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::vector<double>& e = edges[c];
      first[c] = static_cast<size_t>(std::lower_bound(e.begin(), e.end(), leaf.lower[columns[c]]) -
                                     e.begin());
      last[c] = static_cast<size_t>(std::lower_bound(e.begin(), e.end(), leaf.upper[columns[c]]) -
                                    e.begin());
    }
    if (one_column) {
      effect[first[0]] += contribution;  // a difference array: prefix sums below
      effect[last[0]] -= contribution;
      continue;
    }
    std::vector<size_t> at = first;
    while (true) {
      size_t cell = 0;
      for (size_t c = 0; c < columns.size(); ++c) cell += at[c] * stride[c];
      effect[cell] += contribution;
      size_t c = columns.size();
      while (c-- > 0) {
        if (++at[c] < last[c]) break;
        at[c] = first[c];
      }
      if (c == static_cast<size_t>(-1)) break;
    }
  }
  if (one_column) {
    for (size_t i = 1; i < cells; ++i) effect[i] += effect[i - 1];
  }
  effect.resize(cells);
  std::vector<double> sizes(cells, 1.0);
  for (size_t cell = 0; cell < cells; ++cell) {
    for (size_t c = 0; c < columns.size(); ++c) {
      const size_t i = (cell / stride[c]) % (edges[c].size() - 1);
      sizes[cell] *= edges[c][i + 1] - edges[c][i];
    }
  }
  return WeightedVariance(effect, sizes);
}

// The most one-hot columns a categorical parameter is marginalised over jointly (2^k cells); a
// parameter with more choices is treated as one ordinal column.
constexpr int kMaxOneHotColumns = 12;

}  // namespace

bool FanovaImportances(const std::vector<FanovaParam>& params,
                       const std::vector<std::vector<double>>& rows,
                       const std::vector<double>& objectives, const FanovaOptions& options,
                       std::vector<double>* importances) {
  importances->clear();
  const size_t n = rows.size();
  if (n < 2 || params.empty() || objectives.size() != n) return false;
  // The forest's columns, column-major, with their ranges.
  std::vector<std::vector<double>> x;
  std::vector<double> low;
  std::vector<double> high;
  std::vector<std::vector<size_t>> columns_of(params.size());
  for (size_t p = 0; p < params.size(); ++p) {
    const FanovaParam& param = params[p];
    if (param.categories > 0 && param.categories <= kMaxOneHotColumns) {
      for (int k = 0; k < param.categories; ++k) {
        columns_of[p].push_back(x.size());
        std::vector<double> column(n);
        for (size_t i = 0; i < n; ++i) column[i] = rows[i][p] == k ? 1.0 : 0.0;
        x.push_back(std::move(column));
        low.push_back(0.0);
        high.push_back(1.0);
      }
      continue;
    }
    columns_of[p].push_back(x.size());
    std::vector<double> column(n);
    for (size_t i = 0; i < n; ++i) column[i] = rows[i][p];
    double lo = param.categories > 0 ? 0.0 : param.low;
    double hi = param.categories > 0 ? param.categories - 1.0 : param.high;
    for (const double v : column) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (!(hi > lo)) hi = lo + 1.0;
    x.push_back(std::move(column));
    low.push_back(lo);
    high.push_back(hi);
  }
  std::vector<double> sums(params.size(), 0.0);
  int trees_with_variance = 0;
  for (int t = 0; t < options.trees; ++t) {
    std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(t) + 1);
    std::vector<double> weights(n, 0.0);
    std::uniform_int_distribution<size_t> pick(0, n - 1);
    for (size_t i = 0; i < n; ++i) weights[pick(rng)] += 1.0;
    TreeBuilder builder(x, objectives, std::move(weights), options.max_depth, &rng);
    const std::vector<Node> nodes = builder.Build();
    if (nodes.empty()) continue;
    std::vector<Leaf> leaves;
    std::vector<double> lower = low;
    std::vector<double> upper = high;
    CollectLeaves(nodes, 0, &lower, &upper, &leaves);
    std::vector<double> values;
    std::vector<double> volumes;
    for (const Leaf& leaf : leaves) {
      double volume = 1.0;
      for (size_t f = 0; f < low.size(); ++f) volume *= leaf.upper[f] - leaf.lower[f];
      values.push_back(leaf.value);
      volumes.push_back(volume);
    }
    const double total = WeightedVariance(values, volumes);
    if (!(total > 0.0)) continue;
    ++trees_with_variance;
    for (size_t p = 0; p < params.size(); ++p) {
      sums[p] += MarginalVariance(nodes, leaves, columns_of[p], low, high) / total;
    }
  }
  if (trees_with_variance == 0) return false;
  const double total = std::accumulate(sums.begin(), sums.end(), 0.0);
  if (!(total > 0.0)) return false;
  for (const double sum : sums) importances->push_back(sum / total);
  return true;
}

namespace {

// The trials the forest learns from: completed, with a finite objective.
bool CountsForImportance(const TrialResult& trial) {
  return trial.status == TrialStatus::kCompleted && std::isfinite(trial.objective);
}

// fANOVA's parameters, one per axis. A parameter that conditions leave out of some trials takes
// its absence as one more value: a category of its own, or a number one range-width below its
// range (in *absent_values, by axis). The forest can then split on whether it is present, and
// every trial counts (not only those where all are present).
std::vector<FanovaParam> ImportanceParams(const std::vector<Axis>& axes, const StudyContents& study,
                                          std::vector<double>* absent_values) {
  std::vector<bool> absent_somewhere(axes.size(), false);
  for (const TrialResult& trial : study.trials) {
    if (!CountsForImportance(trial)) continue;
    for (size_t a = 0; a < axes.size(); ++a) {
      if (FindParam(trial.params, axes[a].name) == nullptr) absent_somewhere[a] = true;
    }
  }
  std::vector<FanovaParam> params;
  for (size_t a = 0; a < axes.size(); ++a) {
    const Axis& axis = axes[a];
    FanovaParam param;
    param.name = axis.name;
    if (axis.scale == AxisScale::kCategorical) {
      param.categories = static_cast<int>(axis.categories.size()) + (absent_somewhere[a] ? 1 : 0);
      absent_values->push_back(static_cast<double>(axis.categories.size()));
    } else {
      param.low = absent_somewhere[a] ? axis.min - (axis.max - axis.min) : axis.min;
      param.high = axis.max;
      absent_values->push_back(param.low);
    }
    params.push_back(std::move(param));
  }
  return params;
}

// `trial`'s point on the axes (a category's index, a number, or the axis's absent value), or
// nothing when a value is on no axis (a category not listed, a number not finite).
std::optional<std::vector<double>> ImportanceRow(const std::vector<Axis>& axes,
                                                 const std::vector<double>& absent_values,
                                                 const TrialResult& trial) {
  std::vector<double> row;
  for (size_t a = 0; a < axes.size(); ++a) {
    const Axis& axis = axes[a];
    const ParamValue* value = FindParam(trial.params, axis.name);
    if (value == nullptr) {
      row.push_back(absent_values[a]);
      continue;
    }
    if (axis.scale == AxisScale::kCategorical) {
      const std::string text = FormatParamValueExact(*value);
      const auto found = std::find_if(
          axis.categories.begin(), axis.categories.end(),
          [&](const ParamValue& category) { return FormatParamValueExact(category) == text; });
      if (found == axis.categories.end()) return std::nullopt;
      row.push_back(static_cast<double>(found - axis.categories.begin()));
    } else {
      const double number = ParamAsDouble(*value);
      if (!std::isfinite(number)) return std::nullopt;
      row.push_back(number);
    }
  }
  return row;
}

}  // namespace

StudyImportance ComputeStudyImportance(const StudyContents& study, const TaskCatalog& catalog,
                                       const FanovaOptions& options) {
  StudyImportance result;
  result.options = options;
  std::vector<Axis> axes;
  for (Axis& axis : report_internal::BuildAxes(study, catalog)) {
    const bool varies =
        axis.scale == AxisScale::kCategorical ? axis.categories.size() > 1 : axis.max > axis.min;
    if (varies) axes.push_back(std::move(axis));
  }
  if (axes.empty()) {
    result.note = "no hyperparameter varies";
    return result;
  }
  std::vector<double> absent_values;
  const std::vector<FanovaParam> params = ImportanceParams(axes, study, &absent_values);
  std::vector<std::vector<double>> rows;
  std::vector<double> objectives;
  for (const TrialResult& trial : study.trials) {
    if (!CountsForImportance(trial)) continue;
    std::optional<std::vector<double>> row = ImportanceRow(axes, absent_values, trial);
    if (!row) continue;
    rows.push_back(std::move(*row));
    objectives.push_back(trial.objective);
  }
  result.trials = static_cast<int64_t>(rows.size());
  std::vector<double> importances;
  if (rows.size() < 2) {
    result.note = "needs at least 2 completed trials with an objective";
    return result;
  }
  if (!FanovaImportances(params, rows, objectives, options, &importances)) {
    result.note = "the objective does not vary over the completed trials";
    return result;
  }
  for (size_t p = 0; p < params.size(); ++p) {
    result.values.emplace_back(params[p].name, importances[p]);
  }
  std::stable_sort(result.values.begin(), result.values.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return result;
}

std::string StudyImportanceJson(const StudyImportance& importance) {
  std::string out = "{\"method\": " + JsonString(importance.method) +
                    ", \"trees\": " + std::to_string(importance.options.trees) +
                    ", \"max_depth\": " + std::to_string(importance.options.max_depth) +
                    ", \"seed\": " + std::to_string(importance.options.seed) +
                    ", \"trials\": " + std::to_string(importance.trials) + ", \"importance\": [";
  for (size_t i = 0; i < importance.values.size(); ++i) {
    out += (i == 0 ? "{\"name\": " : ", {\"name\": ") + JsonString(importance.values[i].first) +
           ", \"importance\": " + JsonNumber(importance.values[i].second) + "}";
  }
  return out + "], \"note\": " + JsonString(importance.note) + "}";
}

Status StoreStudyImportance(const std::string& path, const StudyContents& study,
                            const StudyImportance& importance) {
  const std::string json = StudyImportanceJson(importance);
  const auto stored = study.extra_attributes.find(kImportanceAttribute);
  if (stored != study.extra_attributes.end() && stored->second == StudyAttribute(json)) {
    return Status::Ok();
  }
  std::unique_ptr<StudyWriter> writer;
  HPO_RETURN_IF_ERROR(StudyWriter::Open(StudyPathOf(path), study.layout, &writer));
  return writer->SetAttribute(kImportanceAttribute, json);
}

}  // namespace hpo
