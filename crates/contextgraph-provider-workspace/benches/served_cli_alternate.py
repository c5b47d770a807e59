#!/usr/bin/env python3
"""`cgp serve workspace` binaries of any revisions, alternated over stdio.

    python3 served_cli_alternate.py TREE ALTERNATIONS ROUNDS \
        LABEL=CGP_BINARY:CACHE_DIR [LABEL=CGP_BINARY:CACHE_DIR ...]

Where `served_alternate.sh` compares builds of `examples/served_query.rs`
(one process, the provider's own code), this drives the shipped command
the way a host does: it spawns `CGP_BINARY serve workspace TREE` with
`CONTEXTGRAPH_WORKSPACE_CACHE=CACHE_DIR`, sends the protocol's handshake,
then queries (30 frames, 8,000 tokens) as newline-delimited JSON, and times
each round trip from the request line written to the reply line read. Only
the wire is shared, so a binary from before a change can be measured
against one after it, which is how a figure recorded on another day (a
baseline in an issue) is compared with today's on a machine whose speed
drifts: the ratio of binaries run in the same minutes holds where their
absolute times do not.

Per alternation every binary is started once (its index already built:
run once beforehand, unmeasured, so that a cold build is not timed),
answers two unmeasured passes of the goals (file pages, the model's first
use, and, in a watching server, time for its watcher to be trusted), then
ROUNDS measured passes. Printed: each binary's median p50 and range over
the alternations, and against the first binary the median of the
per-alternation ratios and the alternations it was faster in.

With `CGP_ALT_MCP=1` each binary is started as `CGP_BINARY mcp --dir TREE`
instead (the MCP server an agent runs) and asked `tools/call get_context`
with `fresh: true` (every call a full answer, nothing reused from an
earlier call) and the default budget, after `initialize`.
"""

import json
import os
import statistics
import subprocess
import sys
import time

# The goals `examples/served_query.rs` asks: prose, identifiers, questions.
GOALS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "served_goals.txt")
with open(GOALS_FILE, encoding="utf-8") as goals_file:
    GOALS = [line.strip() for line in goals_file if line.strip()]

HANDSHAKE = '{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}\n'


def request(goal):
    query = {"goal": goal, "max_frames": 30, "max_tokens": 8000}
    return (json.dumps({"type": "query", "query": query}) + "\n").encode()


def mcp_call(i, goal):
    params = {"name": "get_context", "arguments": {"goal": goal, "fresh": True}}
    message = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}
    return (json.dumps(message) + "\n").encode()


MCP_INIT = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "served_cli_alternate", "version": "0"},
            },
        }
    )
    + "\n"
).encode()
MCP_INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def one_run(binary, cache, tree, rounds, settle):
    """p50 (ms) of one server process's measured round trips, and frames per pass."""
    env = dict(os.environ, CONTEXTGRAPH_WORKSPACE_CACHE=cache)
    mcp = os.environ.get("CGP_ALT_MCP") == "1"
    argv = [binary, "mcp", "--dir", tree] if mcp else [binary, "serve", "workspace", tree]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        def ask(line):
            proc.stdin.write(line)
            proc.stdin.flush()
            reply = proc.stdout.readline()
            if not reply:
                raise RuntimeError(f"{binary} closed its output")
            return reply

        if mcp:
            ask(MCP_INIT)
            proc.stdin.write(MCP_INITIALIZED)
            requests = [mcp_call(i + 1, g) for i, g in enumerate(GOALS)]
        else:
            ask(HANDSHAKE.encode())
            requests = [request(g) for g in GOALS]
        frames = 0
        for warm in range(2):
            for r in requests:
                reply = json.loads(ask(r))
                if warm == 1 and not mcp:
                    frames += len(reply.get("result", {}).get("frames", []))
                elif warm == 1 and reply.get("result", {}).get("isError") is False:
                    frames += 1
            time.sleep(settle)
        times = []
        for _ in range(rounds):
            for r in requests:
                started = time.perf_counter()
                ask(r)
                times.append((time.perf_counter() - started) * 1000.0)
        return statistics.median(times), frames
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def main():
    if len(sys.argv) < 5:
        sys.stderr.write(__doc__)
        sys.exit(2)
    tree, alternations, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    settle = float(os.environ.get("CGP_ALT_SETTLE", "2"))
    binaries = []
    for spec in sys.argv[4:]:
        label, rest = spec.split("=", 1)
        binary, cache = rest.split(":", 1)
        binaries.append((label, binary, cache))
    print("load average at start:", open("/proc/loadavg").read().split()[:3], flush=True)
    p50s = {label: [] for label, _, _ in binaries}
    for i in range(alternations):
        row = []
        for label, binary, cache in binaries:
            p50, frames = one_run(binary, cache, tree, rounds, settle)
            p50s[label].append(p50)
            unit = "answers" if os.environ.get("CGP_ALT_MCP") == "1" else "frames"
            row.append(f"{label} {p50:.2f} ms ({frames} {unit})")
        print(f"{i + 1}: " + ", ".join(row), flush=True)
    print("load average at end:", open("/proc/loadavg").read().split()[:3])
    first = binaries[0][0]
    for label, _, _ in binaries:
        runs = p50s[label]
        line = f"{label}: p50 median {statistics.median(runs):.2f} ms ({min(runs):.2f}-{max(runs):.2f})"
        if label != first:
            ratios = [n / o for n, o in zip(runs, p50s[first])]
            wins = sum(r < 1 for r in ratios)
            line += f"; over {first}: median ratio {statistics.median(ratios):.3f}, faster in {wins} of {len(ratios)}"
        print(line)


if __name__ == "__main__":
    main()
