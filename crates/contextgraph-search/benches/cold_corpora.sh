#!/bin/sh
# Builds the two corpora of the cold_build bench (README: "Cold build")
# and runs it, this build against a baseline binary, interleaved.
#
#   crates/contextgraph-search/benches/cold_corpora.sh [BASELINE_BINARY] [ROUNDS]
#
# The corpora are whole crates of the cargo registry source
# (`~/.cargo/registry/src/<index>`, or `$CGP_BENCH_CORPUS`), copied in name
# order until the walk admits 6,000 and 16,000 files; they go under
# `target/` and are never committed. BASELINE_BINARY is the cold_build
# bench built at the revision to compare with (its file copied into that
# checkout: it uses only APIs that revision has).
set -eu
cd "$(dirname "$0")/../../.."
cargo bench -p contextgraph-search --bench cold_build --no-run
bench=$(ls -t target/release/deps/cold_build-* | grep -v '\.d$' | head -n 1)
[ -d target/corpus-6k ] || "$bench" --make-corpus 6000 target/corpus-6k
[ -d target/corpus-16k ] || "$bench" --make-corpus 16000 target/corpus-16k
baseline=${1:+--baseline $1}
# shellcheck disable=SC2086
"$bench" --tree target/corpus-6k --tree target/corpus-16k $baseline \
    --rounds "${2:-5}" --work target/cold-work
