// Deterministic seed derivation, so that a trial's hyperparameters and its training depend only on
// the sweep seed and the trial id, never on which group ran it or in which order. Pure functions.
#pragma once

#include <cstdint>

namespace hpo {

// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
constexpr uint64_t MixBits(uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

// A seed for stream `stream` (e.g. a trial id) of purpose `purpose` derived from the sweep seed.
constexpr uint64_t DeriveSeed(uint64_t sweep_seed, uint64_t purpose, uint64_t stream) {
  return MixBits(MixBits(MixBits(sweep_seed) ^ purpose) ^ stream);
}

// Purposes, so the streams for sampling and for training never coincide.
constexpr uint64_t kSamplingPurpose = 0x73616d706c65ULL;  // "sample"
constexpr uint64_t kTrainingPurpose = 0x747261696eULL;    // "train"

}  // namespace hpo
