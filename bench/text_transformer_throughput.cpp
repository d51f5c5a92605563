// Training throughput of the text_classification Transformer (core/src/train/text_transformer.cpp)
// in C++, to compare with bench/python_eager_text.py (same flags, same model, same step):
//   hpo_bench_text_transformer [--threads T] [--batch B] [--seq-length L] [--d-model E]
//                              [--heads H] [--layers N] [--ff-dim F] [--vocab V] [--warmup W]
//                              [--steps S]
// The model: mean pooling, dropout 0.1, 2 classes. One step: zero_grad, forward, mean
// cross-entropy, backward, Adam (lr 1e-3) step, on a fixed batch of random token ids (lengths
// uniform in [L/2, L], right-padded with id 0) and random labels.
// What is timed: W untimed steps, then S steps, each on its own: samples_per_s = B x S / time_s;
// samples_per_s_p50 = B / the median step time, step_ms_p50 and step_ms_min, which a shared
// machine's bursts of other load disturb less; cpu_s_per_step, the process's user + system CPU time
// per timed step (all threads).
// Check: every loss finite.
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.hpp"
#include "tasks/text_classification/model_runtime/text_transformer.hpp"

namespace {

constexpr int64_t kPad = 0;

struct Options {
  int64_t threads = 1;
  int64_t batch = 32;
  int64_t seq_length = 128;
  int64_t d_model = 128;
  int64_t heads = 4;
  int64_t layers = 2;
  int64_t ff_dim = 256;
  int64_t vocab = 30522;
  int64_t warmup = 5;
  int64_t steps = 30;
};

bool ParseOptions(int argc, char** argv, Options* options) {
  return hpo::bench::ParseIntegerFlags(argc, argv,
                                       {{"--threads", {&options->threads, 1}},
                                        {"--batch", {&options->batch, 1}},
                                        {"--seq-length", {&options->seq_length, 2}},
                                        {"--d-model", {&options->d_model, 1}},
                                        {"--heads", {&options->heads, 1}},
                                        {"--layers", {&options->layers, 1}},
                                        {"--ff-dim", {&options->ff_dim, 1}},
                                        {"--vocab", {&options->vocab, 2}},
                                        {"--warmup", {&options->warmup, 0}},
                                        {"--steps", {&options->steps, 1}}});
}

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& time) { return time.tv_sec + time.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: hpo_bench_text_transformer [--threads T] [--batch B] [--seq-length L] "
                 "[--d-model E] [--heads H] [--layers N] [--ff-dim F] [--vocab V] [--warmup W] "
                 "[--steps S]\n");
    return 2;
  }
  torch::set_num_threads(static_cast<int>(options.threads));
  torch::manual_seed(42);

  hpo::TextTransformerSpec spec;
  spec.vocab_size = options.vocab;
  spec.max_seq_length = options.seq_length;
  spec.d_model = options.d_model;
  spec.heads = options.heads;
  spec.layers = options.layers;
  spec.ff_dim = options.ff_dim;
  const hpo::Status valid = hpo::ValidateTextTransformerSpec(spec);
  if (!valid.ok()) {
    std::fprintf(stderr, "hpo_bench_text_transformer: %s\n", valid.message().c_str());
    return 2;
  }
  hpo::TextTransformer model(spec);
  model->train();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  torch::Tensor tokens = torch::randint(1, options.vocab, {options.batch, options.seq_length});
  const torch::Tensor lengths =
      torch::randint(options.seq_length / 2, options.seq_length + 1, {options.batch, 1});
  tokens.masked_fill_(torch::arange(options.seq_length).unsqueeze(0).ge(lengths), kPad);
  const torch::Tensor labels = torch::randint(0, 2, {options.batch});

  auto step = [&] {
    optimizer.zero_grad();
    const torch::Tensor loss = torch::nn::functional::cross_entropy(model(tokens), labels);
    loss.backward();
    optimizer.step();
    return loss.item<double>();
  };
  for (int64_t i = 0; i < options.warmup; ++i) step();
  bool finite = true;
  std::vector<double> step_times;
  const double start = hpo::bench::NowSeconds();
  const double start_cpu = ProcessCpuSeconds();
  for (int64_t i = 0; i < options.steps; ++i) {
    const double step_start = hpo::bench::NowSeconds();
    finite = std::isfinite(step()) && finite;
    step_times.push_back(hpo::bench::NowSeconds() - step_start);
  }
  const double elapsed = hpo::bench::NowSeconds() - start;
  const double cpu = ProcessCpuSeconds() - start_cpu;
  const hpo::bench::Summary step_summary = hpo::bench::Summarize(step_times);

  using hpo::bench::Number;
  const auto steps = static_cast<double>(options.steps);
  hpo::bench::PrintResult(
      "text_transformer_throughput",
      {{"threads", std::to_string(torch::get_num_threads())},
       {"batch", std::to_string(options.batch)},
       {"seq_length", std::to_string(options.seq_length)},
       {"d_model", std::to_string(options.d_model)},
       {"heads", std::to_string(options.heads)},
       {"layers", std::to_string(options.layers)},
       {"ff_dim", std::to_string(options.ff_dim)},
       {"vocab", std::to_string(options.vocab)},
       {"steps", std::to_string(options.steps)},
       {"time_s", Number(elapsed)},
       {"samples_per_s", Number(static_cast<double>(options.batch) * steps / elapsed)},
       {"samples_per_s_p50", Number(static_cast<double>(options.batch) / step_summary.p50)},
       {"step_ms_p50", Number(1e3 * step_summary.p50)},
       {"step_ms_min", Number(1e3 * step_summary.min)},
       {"cpu_s_per_step", Number(cpu / steps)}},
      finite);
  return finite ? 0 : 1;
}
