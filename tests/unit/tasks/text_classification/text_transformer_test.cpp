#include "tasks/text_classification/model_runtime/text_transformer.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hpo {
namespace {

using Pooling = TextTransformerSpec::Pooling;

constexpr int64_t kPad = 0;

TextTransformerSpec SmallSpec(Pooling pooling) {
  TextTransformerSpec spec;
  spec.vocab_size = 20;
  spec.max_seq_length = 32;
  spec.num_classes = 3;
  spec.d_model = 16;
  spec.heads = 2;
  spec.layers = 2;
  spec.ff_dim = 32;
  spec.pooling = pooling;
  spec.pad_id = kPad;
  return spec;
}

// `ids` right-padded with kPad to `length` tokens, as one row [1, length].
torch::Tensor Padded(const std::vector<int64_t>& ids, int64_t length) {
  torch::Tensor row = torch::full({1, length}, kPad, torch::kInt64);
  row.narrow(1, 0, static_cast<int64_t>(ids.size())).copy_(torch::tensor(ids, torch::kInt64));
  return row;
}

TEST(CounterDropout, IsTheIdentityInEvalModeOrWithoutDropout) {
  const torch::Tensor input = torch::randn({4, 5});
  EXPECT_TRUE(CounterDropout(input, 0.5, /*training=*/false).is_same(input));
  EXPECT_TRUE(CounterDropout(input, 0.0, /*training=*/true).is_same(input));
}

TEST(CounterDropout, DropsAboutPAndScalesTheRest) {
  torch::manual_seed(6);
  const torch::Tensor output = CounterDropout(torch::ones({200000}), 0.25, /*training=*/true);
  const torch::Tensor kept = output.ne(0);
  EXPECT_NEAR(1.0 - kept.to(torch::kFloat64).mean().item<double>(), 0.25, 0.005);
  EXPECT_TRUE(output.masked_select(kept).eq(1.0f / 0.75f).all().item<bool>());
}

TEST(CounterDropout, GradientUsesTheForwardMask) {
  torch::manual_seed(7);
  const torch::Tensor input = torch::randn({64, 33}).transpose(0, 1).requires_grad_();
  const torch::Tensor output = CounterDropout(input, 0.4, /*training=*/true);
  const torch::Tensor upstream = torch::randn({33, 64});
  output.backward(upstream);
  const torch::Tensor expected = upstream * output.ne(0).to(torch::kFloat32) / 0.6;
  EXPECT_TRUE(torch::allclose(input.grad(), expected));
  EXPECT_TRUE(torch::allclose(output, input.detach() * output.ne(0).to(torch::kFloat32) / 0.6));
}

TEST(CounterDropout, MaskDependsOnTheSeedNotOnTheThreadCount) {
  const torch::Tensor input = torch::ones({300000});
  auto mask = [&input](int threads, uint64_t seed) {
    torch::set_num_threads(threads);
    torch::manual_seed(seed);
    return CounterDropout(input, 0.5, /*training=*/true).ne(0);
  };
  const torch::Tensor one_thread = mask(1, 8);
  EXPECT_TRUE(torch::equal(one_thread, mask(2, 8)));
  EXPECT_FALSE(torch::equal(one_thread, mask(1, 9)));
  torch::set_num_threads(1);
}

TEST(TextTransformer, MapsTokenBatchToLogits) {
  torch::manual_seed(1);
  TextTransformer model(SmallSpec(Pooling::kMean));
  const torch::Tensor logits = model(torch::randint(1, 20, {4, 10}, torch::kInt64));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(logits.scalar_type(), torch::kFloat32);
}

TEST(TextTransformer, LogitsDoNotDependOnPadding) {
  const std::vector<int64_t> sequence = {1, 7, 3, 12, 19, 4};
  for (const Pooling pooling : {Pooling::kMean, Pooling::kCls}) {
    SCOPED_TRACE(pooling == Pooling::kMean ? "mean pooling" : "cls pooling");
    torch::manual_seed(2);
    TextTransformer model(SmallSpec(pooling));
    model->eval();
    torch::NoGradGuard no_grad;
    const torch::Tensor short_padding = model(Padded(sequence, 8));
    // Padded to 32 in a batch beside a longer sequence.
    const torch::Tensor long_padding = model(torch::cat(
        {Padded(sequence, 32), Padded({5, 5, 6, 8, 9, 10, 11, 2, 3, 4, 13, 14, 15, 16, 17}, 32)}));
    EXPECT_TRUE(torch::allclose(short_padding[0], long_padding[0], /*rtol=*/0, /*atol=*/1e-5))
        << short_padding << long_padding;
  }
}

TEST(TextTransformer, SequenceOfOnlyPaddingGivesFiniteLogits) {
  torch::manual_seed(3);
  TextTransformer model(SmallSpec(Pooling::kMean));
  EXPECT_TRUE(torch::isfinite(model(torch::full({1, 8}, kPad, torch::kInt64))).all().item<bool>());
}

TEST(TextTransformer, SameSeedSameWeights) {
  torch::manual_seed(4);
  TextTransformer first(SmallSpec(Pooling::kMean));
  torch::manual_seed(4);
  TextTransformer second(SmallSpec(Pooling::kMean));
  const std::vector<torch::Tensor> first_parameters = first->parameters();
  const std::vector<torch::Tensor> second_parameters = second->parameters();
  ASSERT_EQ(first_parameters.size(), second_parameters.size());
  for (size_t i = 0; i < first_parameters.size(); ++i) {
    EXPECT_TRUE(torch::equal(first_parameters[i], second_parameters[i])) << i;
  }
}

// Sequences of 3 to 12 ids from [2, 16) after a [CLS] id 1, right-padded to 13; half contain id 5
// (label 1), the others never do (label 0).
std::pair<torch::Tensor, torch::Tensor> TokenPresenceTask(int64_t count) {
  constexpr int64_t kCls = 1, kMarker = 5, kLength = 13;
  torch::Tensor tokens = torch::full({count, kLength}, kPad, torch::kInt64);
  torch::Tensor labels = torch::arange(count, torch::kInt64).remainder(2);
  for (int64_t row = 0; row < count; ++row) {
    const int64_t length = torch::randint(3, kLength, {1}).item<int64_t>();
    torch::Tensor ids = torch::randint(2, 15, {length}, torch::kInt64);
    ids = ids + ids.ge(kMarker).to(torch::kInt64);  // skips kMarker
    if (labels[row].item<int64_t>() == 1) {
      ids[torch::randint(0, length, {1}).item<int64_t>()] = kMarker;
    }
    tokens[row][0] = kCls;
    tokens[row].narrow(0, 1, length).copy_(ids);
  }
  return {tokens, labels};
}

TEST(TextTransformer, LearnsWhetherATokenAppears) {
  for (const Pooling pooling : {Pooling::kMean, Pooling::kCls}) {
    SCOPED_TRACE(pooling == Pooling::kMean ? "mean pooling" : "cls pooling");
    torch::manual_seed(5);
    const auto [tokens, labels] = TokenPresenceTask(256);
    TextTransformerSpec spec = SmallSpec(pooling);
    spec.num_classes = 2;
    spec.d_model = 32;
    spec.ff_dim = 64;
    spec.layers = 1;
    spec.dropout = 0.0;
    TextTransformer model(spec);
    torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
    constexpr int64_t kBatch = 32;
    for (int64_t step = 0; step < 300; ++step) {
      const int64_t begin = (step * kBatch) % tokens.size(0);
      optimizer.zero_grad();
      torch::nn::functional::cross_entropy(model(tokens.narrow(0, begin, kBatch)),
                                           labels.narrow(0, begin, kBatch))
          .backward();
      optimizer.step();
    }
    model->eval();
    torch::NoGradGuard no_grad;
    const double accuracy =
        model(tokens).argmax(1).eq(labels).to(torch::kFloat64).mean().item<double>();
    EXPECT_GT(accuracy, 0.95);
  }
}

TEST(ValidateTextTransformerSpec, AcceptsTheDefaultsWithAVocabulary) {
  TextTransformerSpec spec;
  spec.vocab_size = 100;
  EXPECT_TRUE(ValidateTextTransformerSpec(spec).ok());
}

TEST(ValidateTextTransformerSpec, NamesTheBadHyperparameter) {
  const std::vector<std::pair<std::function<void(TextTransformerSpec&)>, std::string>> cases = {
      {[](TextTransformerSpec& s) { s.vocab_size = 0; }, "vocab_size must be >= 1, got 0"},
      {[](TextTransformerSpec& s) { s.max_seq_length = 0; }, "max_seq_length must be >= 1"},
      {[](TextTransformerSpec& s) { s.num_classes = 0; }, "num_classes must be >= 1"},
      {[](TextTransformerSpec& s) { s.d_model = -8; }, "d_model must be >= 1, got -8"},
      {[](TextTransformerSpec& s) { s.heads = 0; }, "heads must be >= 1"},
      {[](TextTransformerSpec& s) { s.layers = 0; }, "layers must be >= 1"},
      {[](TextTransformerSpec& s) { s.ff_dim = 0; }, "ff_dim must be >= 1"},
      {[](TextTransformerSpec& s) { s.heads = 3; }, "d_model (16) must be divisible by heads (3)"},
      {[](TextTransformerSpec& s) { s.dropout = 1.0; }, "dropout must be in [0, 1)"},
      {[](TextTransformerSpec& s) { s.dropout = -0.1; }, "dropout must be in [0, 1)"},
      {[](TextTransformerSpec& s) { s.pad_id = 20; }, "pad_id must be in [0, vocab_size), got 20"},
  };
  for (const auto& [breaks, message] : cases) {
    TextTransformerSpec spec = SmallSpec(Pooling::kMean);
    breaks(spec);
    const Status status = ValidateTextTransformerSpec(spec);
    EXPECT_EQ(status.code(), Status::Code::kBadInput) << message;
    EXPECT_NE(status.message().find(message), std::string::npos) << status.message();
  }
}

TEST(TextTransformer, RejectsAnInvalidSpecAndTooLongSequences) {
  TextTransformerSpec spec = SmallSpec(Pooling::kMean);
  spec.heads = 3;
  EXPECT_THROW(TextTransformer{spec}, c10::Error);
  TextTransformer model(SmallSpec(Pooling::kMean));
  EXPECT_THROW(model(Padded({1, 2}, 33)), c10::Error);
}

}  // namespace
}  // namespace hpo
