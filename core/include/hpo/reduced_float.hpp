// 16-bit floating-point formats for gradients on the wire (config `ddp.compression`): bfloat16
// (float32's upper half: float32's range, an 8-bit significand) and IEEE binary16 (fp16: an 11-bit
// significand, largest finite value 65504). Conversions round to nearest, ties to even; NaN stays
// NaN; float32 values beyond fp16's range become infinities. Pure functions, safe on any thread;
// no torch, so the MPI layer can reduce such buffers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hpo {

enum class ReducedFloat { kBFloat16, kFloat16 };

// "bf16" or "fp16".
const char* ReducedFloatName(ReducedFloat format);

uint16_t ToReducedFloat(float value, ReducedFloat format);
float FromReducedFloat(uint16_t bits, ReducedFloat format);

// The reduction of a 16-bit allreduce: inout[i] = round(float(in[i]) + float(inout[i])), each sum
// computed in float32 and rounded to `format` (what NCCL's bf16/fp16 sums do at every step).
void AccumulateReducedFloats(const uint16_t* in, uint16_t* inout, size_t count,
                             ReducedFloat format);

}  // namespace hpo
