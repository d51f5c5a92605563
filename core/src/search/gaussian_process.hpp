// Private to hpo_core: Gaussian-process regression and expected improvement for the GP searcher
// (gp_searcher.cpp), after Optuna's GPSampler (optuna/_gp): a Matern-5/2 kernel with one
// lengthscale per dimension (ARD), hyperparameters fitted by maximum a posteriori with Optuna's
// priors, and log expected improvement as the acquisition. Plain values; a fitted process is
// immutable and thread-safe for concurrent const use.
#pragma once

#include <cstddef>
#include <vector>

#include <Eigen/Core>

namespace hpo {

// Inputs: each dimension is continuous in [0, 1] (its squared distance is (x - x')^2) or
// categorical, holding a category index (its squared distance is 0 for the same category and 1
// otherwise, as Optuna's GP treats categorical parameters).
//
// Kernel: k(x, x') = s (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r), r^2 = sum_j w_j d_j(x, x')^2,
// with w_j the inverse squared lengthscales, plus noise variance on the diagonal.
// Fit maximises log p(y | w, s, noise) + log prior over (log w, log s, log noise) by L-BFGS-B
// (Debian's LBFGSpp), from w = 1, s = 1, noise = 0.01, with Optuna's priors:
// -(0.1 / w_j + 0.1 w_j) per lengthscale, Gamma(2, 1) on s, Gamma(1.1, 30) on the noise, and the
// noise kept at or above 1e-6. The values are standardised (mean 0, variance 1) first.
class GaussianProcess {
 public:
  struct Hyperparameters {
    std::vector<double> inverse_squared_lengthscales;  // w_j, one per dimension
    double signal_variance = 1.0;                      // s
    double noise_variance = 0.01;
  };

  // Fits the hyperparameters on the rows of `fit_points` / `fit_values`, then conditions on
  // every row of `points` / `values` (which may add to the fitted rows, e.g. pending trials'
  // lies). Preconditions: same column count everywhere, `categorical` has one flag per column,
  // at least one row in each set, every value finite. `fit_known_noise` and `known_noise`, when
  // not empty, hold one variance per row (in the values' units) that each value is known to
  // carry beyond the fitted noise (e.g. a prediction's), added to the kernel's diagonal.
  GaussianProcess(const Eigen::MatrixXd& fit_points, const Eigen::VectorXd& fit_values,
                  const Eigen::MatrixXd& points, const Eigen::VectorXd& values,
                  std::vector<bool> categorical, const Eigen::VectorXd& fit_known_noise = {},
                  const Eigen::VectorXd& known_noise = {});

  const Hyperparameters& hyperparameters() const { return hyperparameters_; }

  // The posterior mean and variance (of the latent function, without the noise), in the units
  // of the values given, at each row of `queries`.
  void Predict(const Eigen::MatrixXd& queries, Eigen::VectorXd* mean,
               Eigen::VectorXd* variance) const;

 private:
  std::vector<bool> categorical_;
  Hyperparameters hyperparameters_;
  double value_mean_ = 0.0;
  double value_scale_ = 1.0;
  Eigen::MatrixXd points_;
  Eigen::MatrixXd cholesky_lower_;  // of K(points, points) + noise I
  Eigen::VectorXd alpha_;           // K^-1 (standardised values)
};

// The log of the expected improvement below `best` (minimisation) of a Gaussian with `mean` and
// `variance`: log(sigma) + log(z Phi(z) + phi(z)), z = (best - mean) / sigma, accurate far into
// the tail (an asymptotic series below z = -6), so candidates far from any improvement still
// rank. Variances below 1e-12 count as 1e-12.
double LogExpectedImprovement(double mean, double variance, double best);

}  // namespace hpo
