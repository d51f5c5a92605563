#include "sobol.hpp"

#include <random>

namespace hpo {

namespace {

// new-joe-kuo-6.21201, dimensions 2 to 32: degree s of the primitive polynomial, its coefficients
// a (the inner ones, as bits), and the initial direction integers m_1 .. m_s.
struct JoeKuoEntry {
  int degree;
  uint32_t coefficients;
  uint32_t initial[7];
};

constexpr JoeKuoEntry kJoeKuo[] = {
    {1, 0, {1}},
    {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},
    {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},
    {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},
    {5, 4, {1, 1, 5, 5, 5}},
    {5, 7, {1, 1, 7, 11, 19}},
    {5, 11, {1, 1, 5, 1, 1}},
    {5, 13, {1, 1, 1, 3, 11}},
    {5, 14, {1, 3, 5, 5, 31}},
    {6, 1, {1, 3, 3, 9, 7, 49}},
    {6, 13, {1, 1, 1, 15, 21, 21}},
    {6, 16, {1, 3, 1, 13, 27, 49}},
    {6, 19, {1, 1, 1, 15, 7, 5}},
    {6, 22, {1, 3, 1, 15, 13, 25}},
    {6, 25, {1, 1, 5, 5, 19, 61}},
    {7, 1, {1, 3, 7, 11, 23, 15, 103}},
    {7, 4, {1, 3, 7, 13, 13, 15, 69}},
    {7, 7, {1, 1, 3, 13, 7, 35, 63}},
    {7, 8, {1, 3, 5, 9, 1, 25, 53}},
    {7, 14, {1, 3, 1, 13, 9, 35, 107}},
    {7, 19, {1, 3, 1, 5, 27, 61, 31}},
    {7, 21, {1, 1, 5, 11, 19, 41, 61}},
    {7, 28, {1, 3, 5, 3, 3, 13, 69}},
    {7, 31, {1, 1, 7, 13, 1, 19, 1}},
    {7, 32, {1, 3, 7, 5, 13, 19, 59}},
    {7, 37, {1, 1, 3, 9, 25, 29, 41}},
    {7, 41, {1, 3, 5, 13, 23, 1, 55}},
    {7, 42, {1, 3, 7, 3, 13, 59, 17}},
};
static_assert(sizeof(kJoeKuo) / sizeof(kJoeKuo[0]) == ScrambledSobolSequence::kMaxDimensions - 1);

constexpr int kDigits = ScrambledSobolSequence::kDigits;

// Direction numbers v_1 .. v_64 of `dimension` (0-based) as 64-digit binary fractions.
std::array<uint64_t, kDigits> DirectionNumbers(int dimension) {
  std::array<uint64_t, kDigits> v{};
  if (dimension == 0) {
    for (int k = 0; k < kDigits; ++k) v[k] = uint64_t{1} << (kDigits - 1 - k);
    return v;
  }
  const JoeKuoEntry& entry = kJoeKuo[dimension - 1];
  const int s = entry.degree;
  for (int k = 0; k < s; ++k) v[k] = uint64_t{entry.initial[k]} << (kDigits - 1 - k);
  for (int k = s; k < kDigits; ++k) {
    uint64_t value = v[k - s] ^ (v[k - s] >> s);
    for (int i = 1; i < s; ++i) {
      if ((entry.coefficients >> (s - 1 - i)) & 1u) value ^= v[k - i];
    }
    v[k] = value;
  }
  return v;
}

// Multiplies the digit vector `value` (digit 1 in the top bit) by the lower-triangular matrix
// whose row i is rows[i]: output digit i is the parity of rows[i] & value.
uint64_t MultiplyLowerTriangular(const std::array<uint64_t, kDigits>& rows, uint64_t value) {
  uint64_t result = 0;
  for (int i = 0; i < kDigits; ++i) {
    const uint64_t parity = static_cast<uint64_t>(__builtin_parityll(rows[i] & value));
    result |= parity << (kDigits - 1 - i);
  }
  return result;
}

}  // namespace

ScrambledSobolSequence::ScrambledSobolSequence(int dimensions, bool scramble,
                                               uint64_t scramble_seed) {
  std::mt19937_64 rng(scramble_seed);
  for (int dimension = 0; dimension < dimensions; ++dimension) {
    std::array<uint64_t, kDigits> v = DirectionNumbers(dimension);
    uint64_t shift = 0;
    if (scramble) {
      // Row i keeps the digits 1 .. i-1 at random and digit i set (the unit diagonal).
      std::array<uint64_t, kDigits> rows{};
      for (int i = 0; i < kDigits; ++i) {
        const uint64_t diagonal = uint64_t{1} << (kDigits - 1 - i);
        const uint64_t more_significant = i == 0 ? 0 : ~uint64_t{0} << (kDigits - i);
        rows[i] = (rng() & more_significant) | diagonal;
      }
      for (uint64_t& direction : v) direction = MultiplyLowerTriangular(rows, direction);
      shift = rng();
    }
    directions_.push_back(v);
    shifts_.push_back(shift);
  }
}

std::vector<uint64_t> ScrambledSobolSequence::PointDigits(uint64_t index) const {
  std::vector<uint64_t> digits(shifts_);
  for (int bit = 0; index != 0; ++bit, index >>= 1) {
    if ((index & 1u) == 0) continue;
    for (size_t d = 0; d < digits.size(); ++d) digits[d] ^= directions_[d][bit];
  }
  return digits;
}

std::vector<double> ScrambledSobolSequence::Point(uint64_t index) const {
  std::vector<double> point;
  for (uint64_t digits : PointDigits(index)) {
    point.push_back((static_cast<double>(digits >> 11) + 0.5) * 0x1.0p-53);
  }
  return point;
}

}  // namespace hpo
