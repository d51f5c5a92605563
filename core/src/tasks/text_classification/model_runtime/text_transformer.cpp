#include "tasks/text_classification/model_runtime/text_transformer.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <string>

namespace hpo {
namespace {

namespace nn = torch::nn;

constexpr double kInitStd = 0.02;  // BERT's initializer_range
constexpr double kLayerNormEps = 1e-5;
// Added to the attention scores of pad keys: exp() of it underflows to exactly 0, yet unlike -inf
// it keeps a row whose keys are all pad finite.
constexpr double kMaskedScore = -1e9;

// The index-th draw of the SplitMix64 stream that starts at `seed` (Steele, Lea and Flood 2014).
inline uint64_t SplitMix64Draw(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// `values` with CounterDropout's mask for `seed` applied: element i is kept, times 1 / (1 - p),
// when the high 32 bits of draw i are >= p * 2^32.
torch::Tensor ApplyCounterMask(const torch::Tensor& values, uint64_t seed, double p) {
  const torch::Tensor input = values.contiguous();
  torch::Tensor output = torch::empty_like(input, at::MemoryFormat::Contiguous);
  const auto drop_below = static_cast<uint64_t>(std::ldexp(p, 32));
  AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "ApplyCounterMask", [&] {
    const scalar_t* in = input.data_ptr<scalar_t>();
    scalar_t* out = output.data_ptr<scalar_t>();
    const auto scale = static_cast<scalar_t>(1.0 / (1.0 - p));
    at::parallel_for(0, input.numel(), at::internal::GRAIN_SIZE, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const bool keep = (SplitMix64Draw(seed, static_cast<uint64_t>(i)) >> 32) >= drop_below;
        out[i] = keep ? in[i] * scale : scalar_t(0);
      }
    });
  });
  return output;
}

uint64_t NextDropoutSeed() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();  // a shared handle
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get<at::CPUGeneratorImpl>()->random64();
}

// Forward and backward apply the same mask: the seed, not the mask, is saved for backward.
class CounterDropoutFunction : public torch::autograd::Function<CounterDropoutFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context,
                               const torch::Tensor& input, double p) {
    const uint64_t seed = NextDropoutSeed();
    context->saved_data["seed"] = static_cast<int64_t>(seed);
    context->saved_data["p"] = p;
    return ApplyCounterMask(input, seed, p);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* context,
                                               const torch::autograd::tensor_list& grad_outputs) {
    const auto seed = static_cast<uint64_t>(context->saved_data["seed"].toInt());
    return {ApplyCounterMask(grad_outputs[0], seed, context->saved_data["p"].toDouble()),
            torch::Tensor()};
  }
};

Status RequirePositive(const char* name, int64_t value) {
  if (value >= 1) return Status::Ok();
  return Status::BadInput(std::string(name) + " must be >= 1, got " + std::to_string(value));
}

// One pre-LN encoder layer on batch-first activations [B, L, d_model].
class EncoderLayerImpl : public nn::Module {
 public:
  explicit EncoderLayerImpl(const TextTransformerSpec& spec)
      : heads_(spec.heads),
        dropout_(spec.dropout),
        attention_norm_(register_module(
            "attention_norm",
            nn::LayerNorm(nn::LayerNormOptions({spec.d_model}).eps(kLayerNormEps)))),
        qkv_(register_module("qkv", nn::Linear(spec.d_model, 3 * spec.d_model))),
        attention_out_(register_module("attention_out", nn::Linear(spec.d_model, spec.d_model))),
        feed_forward_norm_(register_module(
            "feed_forward_norm",
            nn::LayerNorm(nn::LayerNormOptions({spec.d_model}).eps(kLayerNormEps)))),
        feed_forward_in_(register_module("feed_forward_in", nn::Linear(spec.d_model, spec.ff_dim))),
        feed_forward_out_(
            register_module("feed_forward_out", nn::Linear(spec.ff_dim, spec.d_model))) {}

  // `key_bias` [B * heads, 1, L]: 0 for a real key, kMaskedScore for a pad key.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& key_bias) {
    x = x + CounterDropout(attention_out_(Attention(attention_norm_(x), key_bias)), dropout_,
                           is_training());
    torch::Tensor hidden = CounterDropout(torch::gelu(feed_forward_in_(feed_forward_norm_(x))),
                                          dropout_, is_training());
    return x + CounterDropout(feed_forward_out_(hidden), dropout_, is_training());
  }

 private:
  // Multi-head self-attention of `x` [B, L, E] before the output projection: [B, L, E].
  torch::Tensor Attention(const torch::Tensor& x, const torch::Tensor& key_bias) {
    const int64_t batch = x.size(0), length = x.size(1), width = x.size(2);
    const int64_t head_width = width / heads_;
    // [B, L, 3, H, D] -> [3, B, H, L, D] in one copy, so q, k and v are [B * H, L, D] views.
    const torch::Tensor qkv = qkv_(x)
                                  .view({batch, length, 3, heads_, head_width})
                                  .permute({2, 0, 3, 1, 4})
                                  .contiguous()
                                  .view({3, batch * heads_, length, head_width});
    const torch::Tensor scores = torch::baddbmm(key_bias, qkv[0], qkv[1].transpose(1, 2),
                                                /*beta=*/1.0, 1.0 / std::sqrt(head_width));
    const torch::Tensor weights =
        CounterDropout(torch::softmax(scores, -1), dropout_, is_training());
    return torch::bmm(weights, qkv[2])
        .view({batch, heads_, length, head_width})
        .transpose(1, 2)
        .reshape({batch, length, width});
  }

  int64_t heads_;
  double dropout_;
  nn::LayerNorm attention_norm_;
  nn::Linear qkv_;
  nn::Linear attention_out_;
  nn::LayerNorm feed_forward_norm_;
  nn::Linear feed_forward_in_;
  nn::Linear feed_forward_out_;
};
TORCH_MODULE(EncoderLayer);

// BERT's initialisation: N(0, kInitStd) weights for linear and embedding layers, zero biases;
// LayerNorms keep their ones and zeros.
void InitializeWeights(nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (const std::shared_ptr<nn::Module>& module : model.modules(/*include_self=*/false)) {
    if (auto* linear = module->as<nn::Linear>()) {
      linear->weight.normal_(0.0, kInitStd);
      linear->bias.zero_();
    } else if (auto* embedding = module->as<nn::Embedding>()) {
      embedding->weight.normal_(0.0, kInitStd);
    }
  }
}

}  // namespace

torch::Tensor CounterDropout(const torch::Tensor& input, double p, bool training) {
  if (!training || p == 0.0) return input;
  const bool counter_kernel = input.device().is_cpu() && (input.scalar_type() == torch::kFloat32 ||
                                                          input.scalar_type() == torch::kFloat64);
  if (!counter_kernel) return torch::dropout(input, p, training);
  return CounterDropoutFunction::apply(input, p);
}

Status ValidateTextTransformerSpec(const TextTransformerSpec& spec) {
  HPO_RETURN_IF_ERROR(RequirePositive("vocab_size", spec.vocab_size));
  HPO_RETURN_IF_ERROR(RequirePositive("max_seq_length", spec.max_seq_length));
  HPO_RETURN_IF_ERROR(RequirePositive("num_classes", spec.num_classes));
  HPO_RETURN_IF_ERROR(RequirePositive("d_model", spec.d_model));
  HPO_RETURN_IF_ERROR(RequirePositive("heads", spec.heads));
  HPO_RETURN_IF_ERROR(RequirePositive("layers", spec.layers));
  HPO_RETURN_IF_ERROR(RequirePositive("ff_dim", spec.ff_dim));
  if (spec.d_model % spec.heads != 0) {
    return Status::BadInput("d_model (" + std::to_string(spec.d_model) +
                            ") must be divisible by heads (" + std::to_string(spec.heads) + ")");
  }
  if (!(spec.dropout >= 0.0 && spec.dropout < 1.0)) {
    return Status::BadInput("dropout must be in [0, 1), got " + std::to_string(spec.dropout));
  }
  if (spec.pad_id < 0 || spec.pad_id >= spec.vocab_size) {
    return Status::BadInput("pad_id must be in [0, vocab_size), got " +
                            std::to_string(spec.pad_id));
  }
  return Status::Ok();
}

TextTransformerImpl::TextTransformerImpl(const TextTransformerSpec& spec) : spec_(spec) {
  const Status valid = ValidateTextTransformerSpec(spec);
  TORCH_CHECK(valid.ok(), "TextTransformer: ", valid.message());
  token_embedding_ =
      register_module("token_embedding", nn::Embedding(spec.vocab_size, spec.d_model));
  position_embedding_ =
      register_module("position_embedding", nn::Embedding(spec.max_seq_length, spec.d_model));
  layers_ = register_module("layers", nn::ModuleList());
  for (int64_t layer = 0; layer < spec.layers; ++layer) layers_->push_back(EncoderLayer(spec));
  final_norm_ = register_module(
      "final_norm", nn::LayerNorm(nn::LayerNormOptions({spec.d_model}).eps(kLayerNormEps)));
  classifier_ = register_module("classifier", nn::Linear(spec.d_model, spec.num_classes));
  InitializeWeights(*this);
}

torch::Tensor TextTransformerImpl::forward(const torch::Tensor& tokens) {
  TORCH_CHECK(tokens.dim() == 2 && tokens.scalar_type() == torch::kInt64,
              "TextTransformer: tokens must be int64 [batch, length]");
  const int64_t batch = tokens.size(0), length = tokens.size(1);
  TORCH_CHECK(length <= spec_.max_seq_length, "TextTransformer: sequence length ", length,
              " exceeds max_seq_length ", spec_.max_seq_length);
  const torch::Tensor is_pad = tokens.eq(spec_.pad_id);
  const torch::Tensor key_bias = torch::zeros({batch, 1, 1, length}, torch::kFloat32)
                                     .masked_fill_(is_pad.view({batch, 1, 1, length}), kMaskedScore)
                                     .expand({batch, spec_.heads, 1, length})
                                     .reshape({batch * spec_.heads, 1, length});

  torch::Tensor x = token_embedding_(tokens) + position_embedding_->weight.narrow(0, 0, length);
  x = CounterDropout(x, spec_.dropout, is_training());
  for (const std::shared_ptr<nn::Module>& layer : *layers_) {
    x = layer->as<EncoderLayerImpl>()->forward(x, key_bias);
  }
  x = final_norm_(x);

  torch::Tensor pooled;
  if (spec_.pooling == TextTransformerSpec::Pooling::kCls) {
    pooled = x.select(1, 0);
  } else {
    // A batched [1, L] x [L, E] product with weights 1 / (number of real positions) or 0.
    const torch::Tensor is_real = is_pad.logical_not().to(x.scalar_type());
    const torch::Tensor weights = is_real / is_real.sum(1, /*keepdim=*/true).clamp_min(1.0);
    pooled = torch::bmm(weights.unsqueeze(1), x).squeeze(1);
  }
  return classifier_(CounterDropout(pooled, spec_.dropout, is_training()));
}

}  // namespace hpo
