#include "tasks/torchscript/numeric_array.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace hpo {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kHugePageSize = size_t{2} << 20;
constexpr size_t kHugePageThreshold = size_t{4} << 20;  // numpy's

}  // namespace

void* AllocateArrayBytes(size_t size) {
  const size_t alignment = size >= kHugePageThreshold ? kHugePageSize : kAlignment;
  if (size > SIZE_MAX - alignment) throw std::bad_alloc();
  // aligned_alloc wants a multiple of the alignment (and a size of 0 may give no memory).
  const size_t rounded = (std::max<size_t>(size, 1) + alignment - 1) / alignment * alignment;
  void* memory = std::aligned_alloc(alignment, rounded);
  if (memory == nullptr) throw std::bad_alloc();
  // A hint: without transparent huge pages the memory works the same, only slower to fault in.
  if (alignment == kHugePageSize) madvise(memory, rounded, MADV_HUGEPAGE);
  return memory;
}

void FreeArrayBytes(void* memory) { std::free(memory); }

const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
      return "float32";
    case ElementType::kFloat64:
      return "float64";
    case ElementType::kInt8:
      return "int8";
    case ElementType::kUInt8:
      return "uint8";
    case ElementType::kInt16:
      return "int16";
    case ElementType::kInt32:
      return "int32";
    case ElementType::kInt64:
      return "int64";
    case ElementType::kBool:
      return "bool";
  }
  return "unknown";
}

bool IsFloating(ElementType type) {
  return type == ElementType::kFloat32 || type == ElementType::kFloat64;
}

size_t ElementSize(ElementType type) {
  switch (type) {
    case ElementType::kFloat64:
    case ElementType::kInt64:
      return 8;
    case ElementType::kFloat32:
    case ElementType::kInt32:
      return 4;
    case ElementType::kInt16:
      return 2;
    case ElementType::kInt8:
    case ElementType::kUInt8:
    case ElementType::kBool:
      return 1;
  }
  return 1;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d > 0) text += ", ";
    text += std::to_string(shape[d]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

int64_t NumericArray::samples() const { return shape.empty() ? 0 : shape[0]; }

int64_t NumericArray::elements() const {
  int64_t count = 1;
  for (int64_t size : shape) count *= size;
  return count;
}

}  // namespace hpo
