#include "train/idx_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <system_error>

namespace hpo {
namespace {

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

uint32_t BigEndian32(const uint8_t* bytes) {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

// Reads up to `size` bytes; returns how many were read, or -1 on a read error.
int64_t ReadUpTo(gzFile_s* file, uint8_t* out, int64_t size) {
  constexpr int64_t kChunk = 1 << 20;
  int64_t done = 0;
  while (done < size) {
    const int64_t want = std::min(kChunk, size - done);
    const int got = gzread(file, out + done, static_cast<unsigned>(want));
    if (got < 0) return -1;
    if (got == 0) break;
    done += got;
  }
  return done;
}

std::string GzErrorText(gzFile_s* file) {
  int code = Z_OK;
  const char* text = gzerror(file, &code);
  return text != nullptr ? text : "read error";
}

// Reads an IDX file whose magic number must be `magic` and whose header holds `num_dims` sizes.
// On success `dims` holds the sizes and `payload` exactly prod(dims) bytes.
Status ReadIdx(const std::string& path, uint32_t magic, int num_dims, std::vector<int64_t>* dims,
               std::vector<uint8_t>* payload) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::BadInput(path + ": no such file");
  GzFile file(gzopen(path.c_str(), "rb"));
  if (file == nullptr) return Status::BadInput(path + ": cannot open");

  const int64_t header_bytes = 4 + 4 * int64_t{num_dims};
  std::array<uint8_t, 16> header{};
  const int64_t header_got = ReadUpTo(file.get(), header.data(), header_bytes);
  if (header_got < 0) return Status::BadInput(path + ": " + GzErrorText(file.get()));
  if (header_got >= 4 && BigEndian32(header.data()) != magic) {
    return Status::BadInput(path + ": bad magic number " +
                            std::to_string(BigEndian32(header.data())) + ", expected " +
                            std::to_string(magic));
  }
  if (header_got < header_bytes) {
    return Status::BadInput(path + ": truncated: expected at least " +
                            std::to_string(header_bytes) + " bytes, got " +
                            std::to_string(header_got));
  }

  dims->clear();
  int64_t body_bytes = 1;
  for (int d = 0; d < num_dims; ++d) {
    const int64_t size = BigEndian32(header.data() + 4 + 4 * d);
    if (__builtin_mul_overflow(body_bytes, size, &body_bytes) || body_bytes > (int64_t{1} << 40)) {
      return Status::BadInput(path + ": implausible dimensions in the header");
    }
    dims->push_back(size);
  }
  const int64_t expected = header_bytes + body_bytes;

  payload->resize(static_cast<size_t>(body_bytes));
  const int64_t body_got = ReadUpTo(file.get(), payload->data(), body_bytes);
  if (body_got < 0) return Status::BadInput(path + ": " + GzErrorText(file.get()));
  if (body_got < body_bytes) {
    return Status::BadInput(path + ": truncated: expected " + std::to_string(expected) +
                            " bytes, got " + std::to_string(header_bytes + body_got));
  }
  std::array<uint8_t, 4096> rest{};
  int64_t extra = 0;
  for (int64_t got; (got = ReadUpTo(file.get(), rest.data(), rest.size())) > 0;) extra += got;
  int code = Z_OK;
  gzerror(file.get(), &code);
  if (code != Z_OK) {
    return Status::BadInput(path + ": damaged gzip stream: " + GzErrorText(file.get()));
  }
  if (extra > 0) {
    return Status::BadInput(path + ": trailing data: expected " + std::to_string(expected) +
                            " bytes, got " + std::to_string(expected + extra));
  }
  return Status::Ok();
}

}  // namespace

Status ReadIdxImages(const std::string& path, IdxImages* images) {
  std::vector<int64_t> dims;
  HPO_RETURN_IF_ERROR(ReadIdx(path, kIdxImagesMagic, 3, &dims, &images->pixels));
  images->count = dims[0];
  images->rows = dims[1];
  images->cols = dims[2];
  return Status::Ok();
}

Status ReadIdxLabels(const std::string& path, std::vector<uint8_t>* labels) {
  std::vector<int64_t> dims;
  return ReadIdx(path, kIdxLabelsMagic, 1, &dims, labels);
}

Status ReadIdxDataset(const std::string& images_path, const std::string& labels_path, int64_t rows,
                      int64_t cols, int num_classes, IdxImages* images,
                      std::vector<uint8_t>* labels) {
  HPO_RETURN_IF_ERROR(ReadIdxImages(images_path, images));
  if (images->rows != rows || images->cols != cols) {
    return Status::BadInput(images_path + ": images are " + std::to_string(images->rows) + "x" +
                            std::to_string(images->cols) + ", expected " + std::to_string(rows) +
                            "x" + std::to_string(cols));
  }
  HPO_RETURN_IF_ERROR(ReadIdxLabels(labels_path, labels));
  if (static_cast<int64_t>(labels->size()) != images->count) {
    return Status::BadInput(labels_path + ": " + std::to_string(labels->size()) + " labels for " +
                            std::to_string(images->count) + " images in " + images_path);
  }
  for (size_t i = 0; i < labels->size(); ++i) {
    if ((*labels)[i] >= num_classes) {
      return Status::BadInput(labels_path + ": label " + std::to_string((*labels)[i]) +
                              " of item " + std::to_string(i) + " is not below " +
                              std::to_string(num_classes));
    }
  }
  return Status::Ok();
}

Status FindIdxFile(const std::string& folder, const std::string& name, std::string* path) {
  const std::filesystem::path base = std::filesystem::path(folder) / name;
  const std::string compressed = base.string() + ".gz";
  std::error_code ec;
  if (std::filesystem::exists(compressed, ec)) {
    *path = compressed;
    return Status::Ok();
  }
  if (std::filesystem::exists(base, ec)) {
    *path = base.string();
    return Status::Ok();
  }
  return Status::BadInput(compressed + ": no such file (nor " + base.string() + ")");
}

}  // namespace hpo
