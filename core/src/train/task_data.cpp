#include "train/task_data.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "train/distributed_sampler.hpp"
#include "train/idx_reader.hpp"

namespace hpo {
namespace {

constexpr char kDefaultFashionMnistFolder[] = "/usr/share/datasets/fashion-mnist";
constexpr int64_t kImageSide = 28;
constexpr int kFashionClasses = 10;
constexpr double kFashionMean = 0.2860;
constexpr double kFashionStd = 0.3530;
// The validation split's shuffle: a constant, so every trial of every sweep sees the same split.
constexpr uint64_t kSplitSeed = 0x6d6e6973742d7661ULL;
// Mixed into the sweep seed for the synthetic task's data.
constexpr uint64_t kSyntheticDataStream = 0x73796e7468ULL;

Status ReadSplit(const std::string& folder, const std::string& prefix, IdxImages* images,
                 std::vector<uint8_t>* labels) {
  std::string images_path;
  std::string labels_path;
  HPO_RETURN_IF_ERROR(FindIdxFile(folder, prefix + "-images-idx3-ubyte", &images_path));
  HPO_RETURN_IF_ERROR(FindIdxFile(folder, prefix + "-labels-idx1-ubyte", &labels_path));
  return ReadIdxDataset(images_path, labels_path, kImageSide, kImageSide, kFashionClasses, images,
                        labels);
}

// The rows `indices` of the images and labels, as normalised float32 [N, 1, 28, 28] and int64.
LabeledTensors Select(const torch::Tensor& pixels, const torch::Tensor& labels,
                      const torch::Tensor& indices) {
  LabeledTensors out;
  out.inputs = pixels.index_select(0, indices)
                   .to(torch::kFloat32)
                   .div_(255.0)
                   .sub_(kFashionMean)
                   .div_(kFashionStd)
                   .unsqueeze(1)
                   .contiguous();
  out.labels = labels.index_select(0, indices).to(torch::kInt64);
  return out;
}

LabeledTensors All(const torch::Tensor& pixels, const torch::Tensor& labels) {
  return Select(pixels, labels, torch::arange(labels.size(0), torch::kInt64));
}

Status LoadFashionMnist(const ExecutionSpec& execution, TaskData* data) {
  const std::string folder = execution.data.empty() ? kDefaultFashionMnistFolder : execution.data;
  IdxImages train_images;
  std::vector<uint8_t> train_labels;
  HPO_RETURN_IF_ERROR(ReadSplit(folder, "train", &train_images, &train_labels));
  IdxImages test_images;
  std::vector<uint8_t> test_labels;
  HPO_RETURN_IF_ERROR(ReadSplit(folder, "t10k", &test_images, &test_labels));

  const int64_t total = train_images.count;
  if (execution.validation_samples < 1 || execution.validation_samples >= total) {
    return Status::BadInput("validation_samples must be in [1, " + std::to_string(total - 1) +
                            "] for the " + std::to_string(total) + " training images in " + folder +
                            ", got " + std::to_string(execution.validation_samples));
  }
  if (execution.train_samples < 0) {
    return Status::BadInput("train_samples must be >= 0, got " +
                            std::to_string(execution.train_samples));
  }

  const auto as_tensor = [](std::vector<uint8_t>& bytes, std::vector<int64_t> shape) {
    return torch::from_blob(bytes.data(), shape, torch::kUInt8);
  };
  const torch::Tensor train_pixels =
      as_tensor(train_images.pixels, {total, kImageSide, kImageSide});
  const torch::Tensor train_targets = as_tensor(train_labels, {total});

  const std::vector<int64_t> shuffled = ShuffledIndices(kSplitSeed, 0, total);
  const int64_t available = total - execution.validation_samples;
  const int64_t train_count =
      execution.train_samples > 0 ? std::min(execution.train_samples, available) : available;
  const torch::Tensor order = torch::tensor(shuffled, torch::kInt64);
  data->train = Select(train_pixels, train_targets, order.narrow(0, 0, train_count));
  data->validation =
      Select(train_pixels, train_targets, order.narrow(0, available, total - available));
  data->test = All(as_tensor(test_images.pixels, {test_images.count, kImageSide, kImageSide}),
                   as_tensor(test_labels, {test_images.count}));
  data->num_classes = kFashionClasses;
  return Status::Ok();
}

Status GenerateSynthetic(const ExecutionSpec& execution, TaskData* data) {
  const SyntheticOptions& options = execution.synthetic;
  if (options.features < 1 || options.classes < 2 || options.train_samples < 1 ||
      options.val_samples < 1 || options.test_samples < 0 || !(options.noise >= 0.0) ||
      !std::isfinite(options.noise)) {
    return Status::BadInput(
        "synthetic: needs features >= 1, classes >= 2, train_samples >= 1, val_samples >= 1, "
        "test_samples >= 0 and a finite noise >= 0");
  }
  at::Generator generator = at::detail::createCPUGenerator(execution.seed ^ kSyntheticDataStream);
  const torch::Tensor teacher =
      torch::randn({options.features, options.classes}, generator, torch::kFloat32)
          .div_(std::sqrt(static_cast<double>(options.features)));
  const auto generate = [&](int64_t count) {
    LabeledTensors split;
    split.inputs = torch::randn({count, options.features}, generator, torch::kFloat32);
    const torch::Tensor noise = torch::randn({count, options.classes}, generator, torch::kFloat32);
    split.labels = split.inputs.matmul(teacher).add_(noise.mul_(options.noise)).argmax(1);
    return split;
  };
  data->train = generate(options.train_samples);
  data->validation = generate(options.val_samples);
  data->test = generate(options.test_samples);
  data->num_classes = options.classes;
  return Status::Ok();
}

}  // namespace

Status LoadTaskData(const ExecutionSpec& execution, TaskData* data) {
  try {
    *data = TaskData();
    if (execution.task == "fashion_mnist") return LoadFashionMnist(execution, data);
    return GenerateSynthetic(execution, data);
  } catch (const std::exception& error) {
    return Status::Failure(std::string("loading the task data: ") + error.what());
  }
}

}  // namespace hpo
