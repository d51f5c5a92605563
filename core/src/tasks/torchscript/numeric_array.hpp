// NumericArray: an n-dimensional array of numbers read from a user's data file (.npy or HDF5),
// independent of torch. A plain value type: movable, copyable (copies are the caller's choice; the
// readers never make one), not thread-safe for concurrent writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace hpo {

// Storage for array data: 64-byte aligned; buffers of 4 MiB or more are 2 MiB aligned with
// transparent huge pages requested (madvise, as numpy's allocator does), so reading a few hundred
// MB takes a few hundred page faults instead of ~100,000 (seconds where faults are expensive).
// Both throw std::bad_alloc like operator new.
void* AllocateArrayBytes(size_t size);
void FreeArrayBytes(void* memory);

// A std::allocator replacement over AllocateArrayBytes that leaves elements uninitialised on
// vector::resize (value-initialisation would zero every byte the reader then overwrites anyway).
// Stateless: all instances are interchangeable.
template <typename T>
struct ArrayBytesAllocator {
  using value_type = T;

  ArrayBytesAllocator() = default;
  template <typename U>
  ArrayBytesAllocator(const ArrayBytesAllocator<U>&) noexcept {}

  T* allocate(size_t count) { return static_cast<T*>(AllocateArrayBytes(count * sizeof(T))); }
  void deallocate(T* memory, size_t) noexcept { FreeArrayBytes(memory); }

  // Default-initialises (leaves trivial types uninitialised) instead of value-initialising.
  template <typename U>
  void construct(U* place) {
    ::new (static_cast<void*>(place)) U;
  }
  template <typename U, typename... Args>
  void construct(U* place, Args&&... args) {
    ::new (static_cast<void*>(place)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const ArrayBytesAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const ArrayBytesAllocator<U>&) const noexcept {
    return false;
  }
};

// The bytes of an array's elements; resize() leaves new bytes uninitialised.
using ArrayBytes = std::vector<unsigned char, ArrayBytesAllocator<unsigned char>>;

// The element types a data file may hold, as the readers deliver them. Unsigned types wider than
// a byte have no member: the readers widen uint16 to kInt32 and uint32 to kInt64 (lossless) and
// refuse uint64. kBool elements are bytes holding 0 or 1 (numpy's and torch's layout).
enum class ElementType { kFloat32, kFloat64, kInt8, kUInt8, kInt16, kInt32, kInt64, kBool };

// numpy's name of the type: "float32", "float64", "int8", "uint8", "int16", "int32", "int64",
// "bool".
const char* ElementTypeName(ElementType type);
// True for kFloat32 and kFloat64.
bool IsFloating(ElementType type);
// Bytes per element: 4, 8, 1, 1, 2, 4, 8, 1.
size_t ElementSize(ElementType type);

// "(60000, 28, 28)"; a one-dimensional shape is written "(5,)" as numpy does.
std::string ShapeString(const std::vector<int64_t>& shape);

// An array in C (row-major) order whose elements are stored as native little-endian bytes in
// `bytes`, which the array owns (bytes.data() suits torch::from_blob: 64-byte aligned). Invariants
// kept by the readers: shape has at least one dimension, no dimension is negative, and bytes.size()
// == elements() * ElementSize(type). shape[0] counts the samples; the remaining dimensions are the
// shape of one sample.
struct NumericArray {
  ElementType type = ElementType::kFloat32;
  std::vector<int64_t> shape;
  ArrayBytes bytes;

  // shape[0], or 0 for an array with no shape.
  int64_t samples() const;
  // The product of the dimensions (1 for an array with no shape).
  int64_t elements() const;
};

}  // namespace hpo
