#!/bin/sh
# Old and new `served_query` binaries alternated on one tree, in the same
# minutes, and compared by the median of their runs' p50 and by the median
# of the per-alternation ratios (README of contextgraph-search, "Query
# latency": this machine's speed drifts by tens of percent within an hour,
# so only binaries run side by side compare).
#
#   crates/contextgraph-provider-workspace/benches/served_alternate.sh \
#       TREE N ROUNDS OLD_BINARY:OLD_CACHE NEW_BINARY:NEW_CACHE [MORE:CACHE ...]
#
# Each alternation runs every binary once (`served_query TREE CACHE
# ROUNDS`, the order fixed); the first binary is the reference of the
# ratios. A binary whose index format differs needs a cache of its own (a
# copy of the other's, or an empty directory: its first run then builds
# it, unmeasured only if run once beforehand). CGP_ALT_PRIORITY=rt runs
# each at real-time priority (`chrt -f 50`, root only): its threads then
# preempt every other process of the machine, the nearest a shared
# machine comes to a quiet one. Build a binary with
#   cargo build --release -p contextgraph-provider-workspace --example served_query
# and copy target/release/examples/served_query aside before building the
# other revision.
set -eu
if [ $# -lt 5 ]; then
    sed -n '2,21p' "$0" >&2
    exit 2
fi
tree=$1
n=$2
rounds=$3
shift 3
prefix=""
if [ "${CGP_ALT_PRIORITY:-}" = rt ]; then
    prefix="chrt -f 50"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
uptime
i=1
while [ "$i" -le "$n" ]; do
    k=1
    for pair in "$@"; do
        binary=${pair%%:*}
        cache=${pair#*:}
        # shellcheck disable=SC2086
        p50=$($prefix "$binary" "$tree" "$cache" "$rounds" 2>/dev/null |
            sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p')
        echo "$i $k ${p50:-nan}" >>"$out"
        k=$((k + 1))
    done
    i=$((i + 1))
done
uptime
# Per binary: median p50 and range; against the first: median ratio and
# the alternations it was faster in.
awk -v count=$# '
function median(a, m,    i, j, t) {
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
{ p[$1, $2] = $3; if ($1 > runs) runs = $1 }
END {
    for (k = 1; k <= count; k++) {
        m = 0; lo = ""; hi = ""; w = 0; r = 0
        for (i = 1; i <= runs; i++) {
            v = p[i, k]; if (v == "nan") continue
            a[++m] = v
            if (lo == "" || v < lo) lo = v
            if (hi == "" || v > hi) hi = v
            if (k > 1 && p[i, 1] != "nan") { b[++r] = v / p[i, 1]; if (v < p[i, 1]) w++ }
        }
        line = sprintf("binary %d: p50 median %.3f ms (%.2f-%.2f), %d runs", k, median(a, m), lo, hi, m)
        if (k > 1 && r > 0) line = line sprintf("; ratio to binary 1: median %.3f, faster in %d of %d", median(b, r), w, r)
        print line
        delete a; delete b
    }
}' "$out"
