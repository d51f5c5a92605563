#!/usr/bin/python3
"""Training throughput of the text_classification Transformer in Python PyTorch eager, to compare
with the C++ model (bench/text_transformer_throughput.cpp, same flags).

The same architecture as core/src/train/text_transformer.cpp: token + learned position
embeddings, dropout, pre-LN encoder layers (multi-head self-attention with a key padding mask,
GELU feed-forward, dropout 0.1), a final LayerNorm, mean pooling over the non-pad positions,
dropout, a linear classifier; BERT initialisation. --attention picks the encoder layers:
  torch_nn  nn.TransformerEncoderLayer(batch_first=True, norm_first=True, activation="gelu")
  fused     the C++ model's layer op for op (fused QKV linear, one copy to [3, B*H, L, D],
            baddbmm with the key-padding bias, softmax, bmm), except dropout: F.dropout here,
            the C++ model's own CounterDropout there
The same training step: zero_grad, forward, mean cross-entropy, backward, Adam (lr 1e-3) step, on
a fixed batch of random token ids (lengths uniform in [L/2, L], right-padded with id 0) and
random labels.

What is timed: --warmup untimed steps, then --steps steps, each on its own, as in the C++
benchmark: samples_per_s = batch x steps / time; samples_per_s_p50 = batch / the median step time,
step_ms_p50 and step_ms_min; cpu_s_per_step, the process's user + system CPU time per timed step.
Check: every loss finite.
  OMP_NUM_THREADS=1 /usr/bin/python3 bench/python_eager_text.py [--threads T] [--attention A]
"""
import argparse
import math
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0
INIT_STD = 0.02
MASKED_SCORE = -1e9


class FusedEncoderLayer(nn.Module):
    """The C++ EncoderLayerImpl: pre-LN, fused QKV, key-padding bias added by baddbmm."""

    def __init__(self, d_model, heads, ff_dim, dropout):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.attention_norm = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.attention_out = nn.Linear(d_model, d_model)
        self.feed_forward_norm = nn.LayerNorm(d_model)
        self.feed_forward_in = nn.Linear(d_model, ff_dim)
        self.feed_forward_out = nn.Linear(ff_dim, d_model)

    def attention(self, x, key_bias):
        batch, length, width = x.shape
        head_width = width // self.heads
        qkv = (self.qkv(x).view(batch, length, 3, self.heads, head_width)
               .permute(2, 0, 3, 1, 4).contiguous()
               .view(3, batch * self.heads, length, head_width))
        scores = torch.baddbmm(key_bias, qkv[0], qkv[1].transpose(1, 2),
                               alpha=1.0 / math.sqrt(head_width))
        weights = F.dropout(torch.softmax(scores, -1), self.dropout, self.training)
        return (torch.bmm(weights, qkv[2]).view(batch, self.heads, length, head_width)
                .transpose(1, 2).reshape(batch, length, width))

    def forward(self, x, key_bias):
        x = x + F.dropout(self.attention_out(self.attention(self.attention_norm(x), key_bias)),
                          self.dropout, self.training)
        hidden = F.dropout(F.gelu(self.feed_forward_in(self.feed_forward_norm(x))), self.dropout,
                           self.training)
        return x + F.dropout(self.feed_forward_out(hidden), self.dropout, self.training)


class TextTransformer(nn.Module):
    def __init__(self, args, num_classes=2, dropout=0.1):
        super().__init__()
        self.heads, self.dropout, self.fused = args.heads, dropout, args.attention == "fused"
        self.token_embedding = nn.Embedding(args.vocab, args.d_model)
        self.position_embedding = nn.Embedding(args.seq_length, args.d_model)
        if self.fused:
            layers = [FusedEncoderLayer(args.d_model, args.heads, args.ff_dim, dropout)
                      for _ in range(args.layers)]
        else:
            layers = [nn.TransformerEncoderLayer(args.d_model, args.heads, args.ff_dim, dropout,
                                                 activation="gelu", batch_first=True,
                                                 norm_first=True)
                      for _ in range(args.layers)]
        self.layers = nn.ModuleList(layers)
        self.final_norm = nn.LayerNorm(args.d_model)
        self.classifier = nn.Linear(args.d_model, num_classes)
        with torch.no_grad():
            for module in self.modules():
                if isinstance(module, (nn.Linear, nn.Embedding)):
                    module.weight.normal_(0.0, INIT_STD)
                if isinstance(module, nn.Linear):
                    module.bias.zero_()
                if isinstance(module, nn.MultiheadAttention):
                    module.in_proj_weight.normal_(0.0, INIT_STD)
                    module.in_proj_bias.zero_()

    def forward(self, tokens):
        batch, length = tokens.shape
        is_pad = tokens.eq(PAD)
        x = self.token_embedding(tokens) + self.position_embedding.weight[:length]
        x = F.dropout(x, self.dropout, self.training)
        if self.fused:
            key_bias = (torch.zeros(batch, 1, 1, length)
                        .masked_fill_(is_pad.view(batch, 1, 1, length), MASKED_SCORE)
                        .expand(batch, self.heads, 1, length)
                        .reshape(batch * self.heads, 1, length))
            for layer in self.layers:
                x = layer(x, key_bias)
        else:
            for layer in self.layers:
                x = layer(x, src_key_padding_mask=is_pad)
        x = self.final_norm(x)
        is_real = is_pad.logical_not().to(x.dtype)
        weights = is_real / is_real.sum(1, keepdim=True).clamp_min(1.0)
        pooled = torch.bmm(weights.unsqueeze(1), x).squeeze(1)
        return self.classifier(F.dropout(pooled, self.dropout, self.training))


def process_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--attention", choices=["torch_nn", "fused"], default="torch_nn")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-length", type=int, default=128)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--ff-dim", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=30522)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(42)

    model = TextTransformer(args)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(1, args.vocab, (args.batch, args.seq_length))
    lengths = torch.randint(args.seq_length // 2, args.seq_length + 1, (args.batch, 1))
    tokens.masked_fill_(torch.arange(args.seq_length).unsqueeze(0).ge(lengths), PAD)
    labels = torch.randint(0, 2, (args.batch,))

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(tokens), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    for _ in range(args.warmup):
        step()
    losses, step_times = [], []
    start, start_cpu = time.perf_counter(), process_cpu_seconds()
    for _ in range(args.steps):
        step_start = time.perf_counter()
        losses.append(step())
        step_times.append(time.perf_counter() - step_start)
    elapsed, cpu = time.perf_counter() - start, process_cpu_seconds() - start_cpu
    step_p50 = statistics.median(step_times)
    check = all(math.isfinite(x) for x in losses)
    print(f"bench=python_eager_text torch={torch.__version__} attention={args.attention} "
          f"threads={torch.get_num_threads()} batch={args.batch} seq_length={args.seq_length} "
          f"d_model={args.d_model} heads={args.heads} layers={args.layers} ff_dim={args.ff_dim} "
          f"vocab={args.vocab} steps={args.steps} time_s={elapsed:.3f} "
          f"samples_per_s={args.batch * args.steps / elapsed:.1f} "
          f"samples_per_s_p50={args.batch / step_p50:.1f} step_ms_p50={1e3 * step_p50:.1f} "
          f"step_ms_min={1e3 * min(step_times):.1f} "
          f"cpu_s_per_step={cpu / args.steps:.4g} "
          f"check={'ok' if check else 'FAILED'}")
    return 0 if check else 1


if __name__ == "__main__":
    sys.exit(main())
