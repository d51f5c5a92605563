// Private to hpo_core: a scrambled Sobol' sequence in up to 32 dimensions, for `method: random`
// with `search.sampler: sobol`.
//
// Direction numbers: Joe & Kuo, new-joe-kuo-6.21201 (the first 32 dimensions; dimension 1 is van
// der Corput), extended by the usual recurrence to 64 binary digits. Point k (0-based) is the
// XOR of the direction numbers of the bits set in k, so any point can be computed on its own.
// Scrambling (Owen 2003; Matousek 1998): a random linear matrix scramble (per dimension a random
// lower-triangular binary matrix with a unit diagonal, applied to the direction numbers) followed
// by a random digital shift (XOR of a random 64-digit fraction). Both preserve the net
// properties: the first 2^m points of the first two dimensions form a (0, m, 2)-net in base 2
// (one point in each of the 2^m dyadic boxes of any shape 2^-a x 2^-(m-a)). Immutable after
// construction; thread-safe for concurrent const use.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace hpo {

class ScrambledSobolSequence {
 public:
  static constexpr int kMaxDimensions = 32;
  static constexpr int kDigits = 64;

  // Precondition: 0 <= dimensions <= kMaxDimensions. With `scramble` false the sequence is the
  // plain Sobol' sequence (point 0 is the origin); otherwise the scramble is drawn from a
  // generator seeded with `scramble_seed`.
  ScrambledSobolSequence(int dimensions, bool scramble, uint64_t scramble_seed);

  int dimensions() const { return static_cast<int>(directions_.size()); }

  // Point `index`'s coordinates as 64-digit binary fractions (digit 1 is the top bit).
  std::vector<uint64_t> PointDigits(uint64_t index) const;

  // Point `index`'s coordinates in the open interval (0, 1): the top 53 digits plus half a unit
  // of the last, so that inverse CDFs never see 0 or 1 and dyadic boxes are kept.
  std::vector<double> Point(uint64_t index) const;

 private:
  std::vector<std::array<uint64_t, kDigits>> directions_;  // per dimension, per bit of the index
  std::vector<uint64_t> shifts_;                           // per dimension
};

}  // namespace hpo
