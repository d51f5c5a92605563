#include "tasks/fashion_mnist/model_runtime/task.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "hpo/task_runner.hpp"
#include "tasks/builtin_tasks.hpp"
#include "train/distributed_sampler.hpp"
#include "train/idx_reader.hpp"

namespace hpo {
namespace {

constexpr int64_t kImageSide = 28;
constexpr int kFashionClasses = 10;
constexpr double kFashionMean = 0.2860;
constexpr double kFashionStd = 0.3530;
constexpr int64_t kHiddenUnits = 128;
// The validation split's shuffle: a constant, so every trial of every sweep sees the same split.
constexpr uint64_t kSplitSeed = 0x6d6e6973742d7661ULL;

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

Status LoadFashionMnistFiles(const FashionMnistOptions& options, TaskData* data) {
  const std::string& folder = options.folder;
  IdxImages train_images;
  std::vector<uint8_t> train_labels;
  HPO_RETURN_IF_ERROR(ReadSplit(folder, "train", &train_images, &train_labels));
  IdxImages test_images;
  std::vector<uint8_t> test_labels;
  HPO_RETURN_IF_ERROR(ReadSplit(folder, "t10k", &test_images, &test_labels));

  const int64_t total = train_images.count;
  if (options.validation_samples < 1 || options.validation_samples >= total) {
    return Status::BadInput("validation_samples must be in [1, " + std::to_string(total - 1) +
                            "] for the " + std::to_string(total) + " training images in " + folder +
                            ", got " + std::to_string(options.validation_samples));
  }
  if (options.train_samples < 0) {
    return Status::BadInput("train_samples must be >= 0, got " +
                            std::to_string(options.train_samples));
  }

  const auto as_tensor = [](std::vector<uint8_t>& bytes, std::vector<int64_t> shape) {
    return torch::from_blob(bytes.data(), shape, torch::kUInt8);
  };
  const torch::Tensor train_pixels =
      as_tensor(train_images.pixels, {total, kImageSide, kImageSide});
  const torch::Tensor train_targets = as_tensor(train_labels, {total});

  const std::vector<int64_t> shuffled = ShuffledIndices(kSplitSeed, 0, total);
  const int64_t available = total - options.validation_samples;
  const int64_t train_count =
      options.train_samples > 0 ? std::min(options.train_samples, available) : available;
  const torch::Tensor order = torch::tensor(shuffled, torch::kInt64);
  data->train = Select(train_pixels, train_targets, order.narrow(0, 0, train_count));
  data->validation =
      Select(train_pixels, train_targets, order.narrow(0, available, total - available));
  data->test = All(as_tensor(test_images.pixels, {test_images.count, kImageSide, kImageSide}),
                   as_tensor(test_labels, {test_images.count}));
  data->num_classes = kFashionClasses;
  return Status::Ok();
}

// Every rank loads the data once; each trial builds its CNN.
Status MakeTask(const SweepConfig& config, std::unique_ptr<ModelTask>* task) {
  FashionMnistOptions options;
  HPO_RETURN_IF_ERROR(ReadFashionMnistOptions(config.task_options, &options));
  TaskData data;
  HPO_RETURN_IF_ERROR(LoadFashionMnist(options, &data));
  *task = MakeFashionMnistClassifier(data);
  return Status::Ok();
}

}  // namespace

Status LoadFashionMnist(const FashionMnistOptions& options, TaskData* data) {
  try {
    *data = TaskData();
    return LoadFashionMnistFiles(options, data);
  } catch (const std::exception& error) {
    return Status::Failure(std::string("loading the task data: ") + error.what());
  }
}

torch::nn::Sequential BuildFashionCnn(int64_t width, double dropout, int64_t classes) {
  namespace nn = torch::nn;
  const int64_t w = width;
  const int64_t pooled = kImageSide / 4;
  return nn::Sequential(
      nn::Conv2d(nn::Conv2dOptions(1, w, 3).padding(1)), nn::BatchNorm2d(w), nn::ReLU(),
      nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Conv2d(nn::Conv2dOptions(w, 2 * w, 3).padding(1)),
      nn::BatchNorm2d(2 * w), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(),
      nn::Dropout(dropout), nn::Linear(2 * w * pooled * pooled, kHiddenUnits), nn::ReLU(),
      nn::Dropout(dropout), nn::Linear(kHiddenUnits, classes));
}

std::unique_ptr<TensorClassifier> MakeFashionMnistClassifier(const TaskData& data) {
  std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  if (data.num_classes != kFashionClasses) names = NumberedClassNames(data.num_classes);
  return std::make_unique<TensorClassifier>(data, std::move(names), BuildFashionCnn);
}

namespace tasks::fashion_mnist {

void Register(TaskRegistry* registry) { AddModelTask(registry, Describe(), MakeTask); }

}  // namespace tasks::fashion_mnist
}  // namespace hpo
