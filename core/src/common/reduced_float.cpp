#include "hpo/reduced_float.hpp"

#include <fp16.h>

#include <cstring>

namespace hpo {

namespace {

uint16_t FloatToBFloat16(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<uint16_t>(bits >> 16);
}

float BFloat16ToFloat(uint16_t half) {
  const uint32_t bits = static_cast<uint32_t>(half) << 16;
  float value = 0.0f;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

const char* ReducedFloatName(ReducedFloat format) {
  return format == ReducedFloat::kBFloat16 ? "bf16" : "fp16";
}

uint16_t ToReducedFloat(float value, ReducedFloat format) {
  return format == ReducedFloat::kBFloat16 ? FloatToBFloat16(value)
                                           : fp16_ieee_from_fp32_value(value);
}

float FromReducedFloat(uint16_t bits, ReducedFloat format) {
  return format == ReducedFloat::kBFloat16 ? BFloat16ToFloat(bits) : fp16_ieee_to_fp32_value(bits);
}

void AccumulateReducedFloats(const uint16_t* in, uint16_t* inout, size_t count,
                             ReducedFloat format) {
  if (format == ReducedFloat::kBFloat16) {
    for (size_t i = 0; i < count; ++i) {
      inout[i] = FloatToBFloat16(BFloat16ToFloat(in[i]) + BFloat16ToFloat(inout[i]));
    }
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    inout[i] = fp16_ieee_from_fp32_value(fp16_ieee_to_fp32_value(in[i]) +
                                         fp16_ieee_to_fp32_value(inout[i]));
  }
}

}  // namespace hpo
