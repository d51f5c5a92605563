#include "gaussian_process.hpp"

#include <LBFGSB.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <utility>

namespace hpo {

namespace {

constexpr double kSqrt5 = 2.23606797749979;
constexpr double kMinimumNoise = 1e-6;
constexpr double kInitialNoise = 0.01;
constexpr int kFitIterations = 100;
// Bounds of the log hyperparameters: wide enough never to bind in practice, they keep the
// optimiser away from overflow.
constexpr double kLogInverseSquaredLengthscaleBound = 9.2;  // w in [1e-4, 1e4]
constexpr double kLogSignalVarianceBound = 6.9;             // s in [1e-3, 1e3]
constexpr double kLogNoiseUpper = 0.0;                      // noise <= 1 (values have variance 1)

// Per-dimension squared distances between the rows of `a` and `b`.
Eigen::MatrixXd SquaredDistances(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                                 Eigen::Index column, bool categorical) {
  Eigen::MatrixXd distances(a.rows(), b.rows());
  for (Eigen::Index j = 0; j < b.rows(); ++j) {
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      const double difference = a(i, column) - b(j, column);
      distances(i, j) = categorical ? (difference != 0.0 ? 1.0 : 0.0) : difference * difference;
    }
  }
  return distances;
}

// r^2 = sum_j w_j d_j^2 between the rows of `a` and `b`.
Eigen::MatrixXd ScaledSquaredDistance(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                                      const std::vector<bool>& categorical,
                                      const std::vector<double>& weights) {
  Eigen::MatrixXd total = Eigen::MatrixXd::Zero(a.rows(), b.rows());
  for (Eigen::Index column = 0; column < a.cols(); ++column) {
    total += weights[column] * SquaredDistances(a, b, column, categorical[column]);
  }
  return total;
}

// The Matern-5/2 correlation (s = 1) at squared distance r^2.
double Matern52(double squared_distance) {
  const double r = std::sqrt(squared_distance);
  return (1.0 + kSqrt5 * r + 5.0 / 3.0 * squared_distance) * std::exp(-kSqrt5 * r);
}

// d Matern52 / d(r^2) = -5/6 (1 + sqrt(5) r) exp(-sqrt(5) r).
double Matern52SquaredDistanceDerivative(double squared_distance) {
  const double r = std::sqrt(squared_distance);
  return -5.0 / 6.0 * (1.0 + kSqrt5 * r) * std::exp(-kSqrt5 * r);
}

// The negative log posterior of the hyperparameters theta = (log w_1..d, log s, log noise) and
// its gradient, for LBFGSpp. Remembers the best theta it evaluated, which is the answer even
// when the line search gives up.
class NegativeLogPosterior {
 public:
  NegativeLogPosterior(const Eigen::MatrixXd& points, const Eigen::VectorXd& values,
                       const Eigen::VectorXd& known_noise, const std::vector<bool>& categorical)
      : values_(values), known_noise_(known_noise) {
    for (Eigen::Index column = 0; column < points.cols(); ++column) {
      squared_distances_.push_back(SquaredDistances(points, points, column, categorical[column]));
    }
  }

  double operator()(const Eigen::VectorXd& theta, Eigen::VectorXd& gradient) {
    const Eigen::Index n = values_.size();
    const Eigen::Index dims = static_cast<Eigen::Index>(squared_distances_.size());
    const Eigen::VectorXd weights = theta.head(dims).array().exp();
    const double signal = std::exp(theta(dims));
    const double noise = std::exp(theta(dims + 1));
    Eigen::MatrixXd scaled = Eigen::MatrixXd::Zero(n, n);
    for (Eigen::Index j = 0; j < dims; ++j) scaled += weights(j) * squared_distances_[j];
    const Eigen::MatrixXd correlation = scaled.unaryExpr(&Matern52);
    Eigen::MatrixXd covariance = signal * correlation;
    covariance.diagonal().array() += noise;
    if (known_noise_.size() == n) covariance.diagonal() += known_noise_;
    const Eigen::LLT<Eigen::MatrixXd> cholesky(covariance);
    if (cholesky.info() != Eigen::Success) {
      gradient.setZero();
      return std::numeric_limits<double>::max();
    }
    const Eigen::VectorXd alpha = cholesky.solve(values_);
    const double log_determinant = 2.0 * cholesky.matrixLLT().diagonal().array().log().sum();
    double objective = 0.5 * values_.dot(alpha) + 0.5 * log_determinant;
    // d(-log likelihood)/d theta = -1/2 tr(W dK/dtheta), W = alpha alpha^T - K^-1.
    const Eigen::MatrixXd inverse = cholesky.solve(Eigen::MatrixXd::Identity(n, n));
    const Eigen::MatrixXd w = alpha * alpha.transpose() - inverse;
    const Eigen::MatrixXd derivative =
        signal * scaled.unaryExpr(&Matern52SquaredDistanceDerivative);
    for (Eigen::Index j = 0; j < dims; ++j) {
      const double trace = (w.array() * derivative.array() * squared_distances_[j].array()).sum();
      gradient(j) = -0.5 * weights(j) * trace;
      // Prior -(0.1 / w + 0.1 w), in log w.
      objective += 0.1 / weights(j) + 0.1 * weights(j);
      gradient(j) += -0.1 / weights(j) + 0.1 * weights(j);
    }
    gradient(dims) = -0.5 * signal * (w.array() * correlation.array()).sum();
    objective -= std::log(signal) - signal;  // Gamma(2, 1)
    gradient(dims) -= 1.0 - signal;
    gradient(dims + 1) = -0.5 * noise * w.trace();
    objective -= 0.1 * std::log(noise) - 30.0 * noise;  // Gamma(1.1, 30)
    gradient(dims + 1) -= 0.1 - 30.0 * noise;
    if (std::isfinite(objective) && objective < best_objective_) {
      best_objective_ = objective;
      best_theta_ = theta;
    }
    return objective;
  }

  bool has_best() const { return best_theta_.size() > 0; }
  const Eigen::VectorXd& best_theta() const { return best_theta_; }

 private:
  const Eigen::VectorXd& values_;
  const Eigen::VectorXd& known_noise_;
  std::vector<Eigen::MatrixXd> squared_distances_;
  double best_objective_ = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_theta_;
};

GaussianProcess::Hyperparameters FitHyperparameters(const Eigen::MatrixXd& points,
                                                    const Eigen::VectorXd& values,
                                                    const Eigen::VectorXd& known_noise,
                                                    const std::vector<bool>& categorical) {
  const Eigen::Index dims = points.cols();
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(dims + 2);
  theta(dims + 1) = std::log(kInitialNoise);
  Eigen::VectorXd lower(dims + 2);
  Eigen::VectorXd upper(dims + 2);
  lower.head(dims).setConstant(-kLogInverseSquaredLengthscaleBound);
  upper.head(dims).setConstant(kLogInverseSquaredLengthscaleBound);
  lower(dims) = -kLogSignalVarianceBound;
  upper(dims) = kLogSignalVarianceBound;
  lower(dims + 1) = std::log(kMinimumNoise);
  upper(dims + 1) = kLogNoiseUpper;

  NegativeLogPosterior objective(points, values, known_noise, categorical);
  LBFGSpp::LBFGSBParam<double> options;
  options.max_iterations = kFitIterations;
  options.epsilon = 1e-5;
  LBFGSpp::LBFGSBSolver<double> solver(options);
  double value = 0.0;
  try {
    solver.minimize(objective, theta, value, lower, upper);
  } catch (const std::exception&) {
    // The line search gave up (flat or ill-conditioned posterior): keep the best point seen.
  }
  GaussianProcess::Hyperparameters fitted;
  fitted.inverse_squared_lengthscales.assign(static_cast<size_t>(dims), 1.0);
  if (!objective.has_best()) return fitted;
  const Eigen::VectorXd& best = objective.best_theta();
  for (Eigen::Index j = 0; j < dims; ++j)
    fitted.inverse_squared_lengthscales[j] = std::exp(best(j));
  fitted.signal_variance = std::exp(best(dims));
  fitted.noise_variance = std::exp(best(dims + 1));
  return fitted;
}

}  // namespace

GaussianProcess::GaussianProcess(const Eigen::MatrixXd& fit_points,
                                 const Eigen::VectorXd& fit_values, const Eigen::MatrixXd& points,
                                 const Eigen::VectorXd& values, std::vector<bool> categorical,
                                 const Eigen::VectorXd& fit_known_noise,
                                 const Eigen::VectorXd& known_noise)
    : categorical_(std::move(categorical)), points_(points) {
  value_mean_ = fit_values.mean();
  const double variance = (fit_values.array() - value_mean_).square().mean();
  value_scale_ = variance > 1e-24 ? std::sqrt(variance) : 1.0;
  const Eigen::VectorXd fit_standardised = (fit_values.array() - value_mean_) / value_scale_;
  const double scale_squared = value_scale_ * value_scale_;
  const Eigen::VectorXd fit_noise = fit_known_noise / scale_squared;
  hyperparameters_ = FitHyperparameters(fit_points, fit_standardised, fit_noise, categorical_);

  const Eigen::VectorXd standardised = (values.array() - value_mean_) / value_scale_;
  Eigen::MatrixXd covariance = hyperparameters_.signal_variance *
                               ScaledSquaredDistance(points_, points_, categorical_,
                                                     hyperparameters_.inverse_squared_lengthscales)
                                   .unaryExpr(&Matern52);
  // Jitter grows until the factorisation succeeds (duplicate points with tiny noise).
  for (double jitter = 0.0;; jitter = jitter == 0.0 ? 1e-10 : jitter * 10.0) {
    Eigen::MatrixXd regularised = covariance;
    regularised.diagonal().array() += hyperparameters_.noise_variance + jitter;
    if (known_noise.size() == regularised.rows()) {
      regularised.diagonal() += known_noise / scale_squared;
    }
    Eigen::LLT<Eigen::MatrixXd> cholesky(regularised);
    if (cholesky.info() == Eigen::Success || jitter > 1.0) {
      cholesky_lower_ = cholesky.matrixL();
      alpha_ = cholesky.solve(standardised);
      break;
    }
  }
}

void GaussianProcess::Predict(const Eigen::MatrixXd& queries, Eigen::VectorXd* mean,
                              Eigen::VectorXd* variance) const {
  const Eigen::MatrixXd cross = hyperparameters_.signal_variance *
                                ScaledSquaredDistance(points_, queries, categorical_,
                                                      hyperparameters_.inverse_squared_lengthscales)
                                    .unaryExpr(&Matern52);  // points x queries
  const Eigen::MatrixXd solved =
      cholesky_lower_.triangularView<Eigen::Lower>().solve(cross);  // L^-1 k*
  *mean = (cross.transpose() * alpha_).array() * value_scale_ + value_mean_;
  const Eigen::VectorXd reduction = solved.colwise().squaredNorm().transpose();
  *variance = ((hyperparameters_.signal_variance - reduction.array()).max(0.0)) *
              (value_scale_ * value_scale_);
}

double LogExpectedImprovement(double mean, double variance, double best) {
  const double sigma = std::sqrt(std::max(variance, 1e-12));
  const double z = (best - mean) / sigma;
  const double log_pdf = -0.5 * z * z - 0.5 * std::log(2.0 * M_PI);
  double log_h = 0.0;
  if (z > -6.0) {
    const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
    log_h = std::log(std::max(z * cdf + std::exp(log_pdf), std::numeric_limits<double>::min()));
  } else {
    // z Phi(z) + phi(z) = phi(z) / z^2 (1 - 3 / z^2 + 15 / z^4 - 105 / z^6 + ...).
    const double inverse_square = 1.0 / (z * z);
    const double series =
        1.0 - inverse_square * (3.0 - inverse_square * (15.0 - 105.0 * inverse_square));
    log_h = log_pdf + std::log(inverse_square) + std::log(series);
  }
  return std::log(sigma) + log_h;
}

}  // namespace hpo
