// The Transformer encoder text classifier of `task: text_classification`: token ids in, class
// logits out. Pre-LN encoder layers (LayerNorm before attention and before the feed-forward block,
// one final LayerNorm): unlike BERT's post-LN it is little sensitive to the learning-rate warm-up
// (Xiong et al. 2020), which matters when a sweep trains from scratch.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "hpo/status.hpp"

namespace hpo {

// The classifier's shape and hyperparameters. ValidateTextTransformerSpec says whether a spec can
// be built.
struct TextTransformerSpec {
  // How the encoder's output sequence becomes one vector per sequence.
  enum class Pooling {
    kMean,  // the mean over the non-pad positions
    kCls,   // position 0 (the caller prepends a [CLS] token)
  };

  int64_t vocab_size = 0;  // token ids lie in [0, vocab_size)
  int64_t max_seq_length = 128;
  int64_t num_classes = 2;
  int64_t d_model = 128;
  int64_t heads = 4;  // d_model / heads dimensions per head
  int64_t layers = 2;
  int64_t ff_dim = 256;  // the feed-forward block's hidden width
  double dropout = 0.1;  // on embeddings, attention weights, residual branches, pooled vector
  Pooling pooling = Pooling::kMean;
  int64_t pad_id = 0;  // the padding token; padded positions are never attended to
};

// Ok, or BadInput naming the first bad hyperparameter: every size must be >= 1, d_model divisible
// by heads, 0 <= dropout < 1 and 0 <= pad_id < vocab_size.
Status ValidateTextTransformerSpec(const TextTransformerSpec& spec);

// Inverted dropout (kept elements scaled by 1 / (1 - p)) whose keep mask is a pure function of a
// 64-bit seed, drawn per call from torch's global CPU generator, and the element's index (the
// index-th draw of a SplitMix64 stream). So the backward pass recomputes the mask instead of
// storing it, the mask does not depend on the thread count, and it costs one pass instead of
// torch::dropout's serial Bernoulli draws, a noise tensor and two more passes. Returns `input`
// itself when !training or p == 0, and torch::dropout's result for tensors other than CPU float and
// double. Precondition: 0 <= p < 1.
torch::Tensor CounterDropout(const torch::Tensor& input, double p, bool training);

// forward(tokens) maps int64 token ids [B, L] (L <= max_seq_length, each sequence right-padded
// with pad_id) to float logits [B, num_classes]:
//   x = token embedding + learned position embedding, dropout
//   `layers` times: x += dropout(out_proj(attention(LayerNorm(x))))
//                   x += dropout(linear(dropout(GELU(linear(LayerNorm(x))))))
//   LayerNorm, pooling, dropout, linear classifier.
// Attention is multi-head scaled dot-product self-attention (one fused QKV projection) whose keys
// exclude pad positions, so a sequence's logits do not depend on how far it is padded. A sequence
// of only pad_id yields finite logits. Every dropout is CounterDropout. Weights are drawn from
// torch's global generator (the caller seeds it), BERT-style: N(0, 0.02) for linear and embedding
// weights, zero biases. Precondition: ValidateTextTransformerSpec(spec).ok() (the constructor
// throws c10::Error if not).
class TextTransformerImpl : public torch::nn::Module {
 public:
  explicit TextTransformerImpl(const TextTransformerSpec& spec);

  torch::Tensor forward(const torch::Tensor& tokens);

  const TextTransformerSpec& spec() const { return spec_; }

 private:
  TextTransformerSpec spec_;
  torch::nn::Embedding token_embedding_{nullptr};
  torch::nn::Embedding position_embedding_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::LayerNorm final_norm_{nullptr};
  torch::nn::Linear classifier_{nullptr};
};
TORCH_MODULE(TextTransformer);

}  // namespace hpo
