// ByteWriter / ByteReader: a minimal binary encoding (host byte order; both ends run the same
// binary) for the control plane's messages and the searchers' and schedulers' saved state.
// ByteWriter appends to a caller-owned vector; ByteReader never reads past its input and turns
// ok() false instead. Not thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "hpo/param.hpp"
#include "hpo/trial.hpp"

namespace hpo {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>* out) : out_(out) {}

  template <typename T>
  void Put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
    out_->insert(out_->end(), bytes, bytes + sizeof(T));
  }
  void PutString(const std::string& text) {
    Put<uint64_t>(text.size());
    out_->insert(out_->end(), text.begin(), text.end());
  }
  void PutDoubles(const std::vector<double>& values) {
    Put<uint64_t>(values.size());
    for (double value : values) Put(value);
  }
  void PutAssignment(const Assignment& params) {
    Put<uint64_t>(params.size());
    for (const NamedValue& entry : params) {
      PutString(entry.name);
      Put<uint8_t>(static_cast<uint8_t>(entry.value.index()));
      if (const auto* i = std::get_if<int64_t>(&entry.value)) Put(*i);
      if (const auto* d = std::get_if<double>(&entry.value)) Put(*d);
      if (const auto* s = std::get_if<std::string>(&entry.value)) PutString(*s);
    }
  }
  void PutMetrics(const EpochMetrics& metrics) {
    Put(metrics.epoch);
    PutDoubles(metrics.values);
  }

 private:
  std::vector<uint8_t>* out_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}

  bool ok() const { return ok_; }
  bool at_end() const { return offset_ == bytes_.size(); }

  template <typename T>
  T Get() {
    T value{};
    if (!Take(sizeof(T))) return value;
    std::memcpy(&value, bytes_.data() + offset_ - sizeof(T), sizeof(T));
    return value;
  }
  std::string GetString() {
    const uint64_t size = Get<uint64_t>();
    if (!Take(size)) return {};
    return std::string(reinterpret_cast<const char*>(bytes_.data()) + offset_ - size, size);
  }
  std::vector<double> GetDoubles() {
    const uint64_t count = Get<uint64_t>();
    std::vector<double> values;
    if (!Fits(count, sizeof(double))) return values;
    values.reserve(count);
    for (uint64_t i = 0; i < count; ++i) values.push_back(Get<double>());
    return values;
  }
  Assignment GetAssignment() {
    const uint64_t count = Get<uint64_t>();
    Assignment params;
    for (uint64_t i = 0; i < count && ok_; ++i) {
      NamedValue entry;
      entry.name = GetString();
      switch (Get<uint8_t>()) {
        case 0:
          entry.value = Get<int64_t>();
          break;
        case 1:
          entry.value = Get<double>();
          break;
        case 2:
          entry.value = GetString();
          break;
        default:
          ok_ = false;
      }
      params.push_back(std::move(entry));
    }
    return params;
  }
  EpochMetrics GetMetrics() {
    EpochMetrics metrics;
    metrics.epoch = Get<int64_t>();
    metrics.values = GetDoubles();
    return metrics;
  }

 private:
  bool Fits(uint64_t count, size_t element_size) {
    if (!ok_ || count > (bytes_.size() - offset_) / element_size) ok_ = false;
    return ok_;
  }
  bool Take(uint64_t size) {
    if (!Fits(size, 1)) return false;
    offset_ += size;
    return true;
  }

  const std::vector<uint8_t>& bytes_;
  size_t offset_ = 0;
  bool ok_ = true;
};

}  // namespace hpo
