"""`cgp mcp` as an agent's MCP client meets it, with the official Python MCP SDK.

Run by the Rust tests in tests/it/mcp_startup.rs as
    python startup_mcp.py CGP WORKDIR CHECK [ARGV_JSON]
where CHECK is one of:
  progress   initialize and tools/list are answered while the index build is
             held (the CGP_TEST_HOLD_INDEX hook: no file is read until the
             file it names exists); a get_context with a progress token gets
             progress notifications, and is answered once the build is let go
  notice     the build held for good and --index-wait 1: get_context answers
             with how far indexing is instead of waiting
  orphan     the build held for good: closing stdin ends the server at once
  refusal    started in / and in $HOME without --dir: initialize is answered
             and get_context says to pass --dir
  sizes      the default result (text + structured) fits 10k tokens, one at
             the cap 25k, a turn that resends nothing has a structured part
             under 1k; then a compaction: the repeat lists blocks by label
             and says how to recover, and `fresh: true` sends them in full
  argv       every server command of README.md's "Use it from your agent"
             (ARGV_JSON is the README's path), with `cgp` and the repository
             path filled in, initializes and answers
Exits non-zero with a message on the first failed check.
"""

import asyncio
import json
import os
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CGP, WORK, CHECK = sys.argv[1], sys.argv[2], sys.argv[3]
WS = os.path.join(WORK, "ws")
HOME = os.path.join(WORK, "home")
HOLD = os.path.join(WORK, "release-the-index")
ENV = {**os.environ, "CI": "true", "HOME": HOME,
       "XDG_CONFIG_HOME": os.path.join(HOME, ".config"),
       "XDG_DATA_HOME": os.path.join(HOME, ".local", "share"),
       "CONTEXTGRAPH_WORKSPACE_CACHE": os.path.join(WORK, "cache")}
ENV.pop("CGP_CONFIG", None)


def fail(message, result=None):
    detail = ""
    if result is not None:
        detail = "\n" + text_of(result)[:3000]
    print(f"FAILED: {message}{detail}", file=sys.stderr)
    sys.exit(1)


def check(cond, message, result=None):
    if not cond:
        fail(message, result)


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def tokens(result):
    """The server's own conservative estimate: ceil(bytes * 1.35 / 4), text and structured apart."""
    text = sum(len(c.text.encode()) for c in result.content if getattr(c, "type", "") == "text")
    structured = len(json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False).encode())
    est = lambda b: -(-b * 27 // 80)
    return est(text), est(structured)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def workspace(files):
    os.makedirs(os.path.join(WS, ".git"), exist_ok=True)
    words = ["retry", "backoff", "config", "loader", "parser", "budget", "session", "cache"]
    for n in range(files):
        a, b = words[n % 8], words[(n * 3 + 1) % 8]
        body = "".join(
            f"/// {a} {b} helper {i}: doubles the delay between retries.\n"
            f"pub fn {a}_{b}_{n}_{i}(attempt: u32) -> u64 {{\n    1u64 << attempt.min({i} + 3)\n}}\n\n"
            for i in range(8))
        write(os.path.join(WS, "src", f"m{n // 50}", f"{a}_{n}.rs"), body)


def params(args, cwd=None, env=None):
    return StdioServerParameters(command=CGP, args=args, env=env or ENV, cwd=cwd)


async def session_of(p, body):
    async with stdio_client(p) as (read, write_):
        async with ClientSession(read, write_) as s:
            started = time.monotonic()
            await s.initialize()
            await body(s, started)


async def progress():
    workspace(3)
    env = {**ENV, "CGP_TEST_HOLD_INDEX": HOLD}
    seen = []

    async def on_progress(done, total, message):
        seen.append((done, total, message))
        # Released once a notification arrived: before it, nothing is indexed.
        if not os.path.exists(HOLD):
            write(HOLD, "")

    async def body(s, started):
        tools = await s.list_tools()
        check(not os.path.exists(HOLD), "initialize and tools/list are answered before the index exists")
        check([t.name for t in tools.tools] == ["get_context", "list_providers"], "both tools are listed")
        r = await s.call_tool("get_context", {"goal": "retry backoff delay"}, progress_callback=on_progress)
        check(seen, "progress notifications reach the client")
        check(all("cgp is indexing" in (m or "") or "cgp is" in (m or "") for _, _, m in seen),
              f"each notification says what is happening: {seen}")
        values = [d for d, _, _ in seen]
        check(values == sorted(values) and len(set(values)) == len(values), f"progress grows with each notification: {values}")
        check(not r.is_error, "get_context is answered once the index is built", r)
        check("retry" in text_of(r), "with the workspace's evidence", r)

    await session_of(params(["mcp", "--dir", WS], env=env), body)


async def notice():
    workspace(3)
    env = {**ENV, "CGP_TEST_HOLD_INDEX": HOLD}

    async def body(s, started):
        r = await s.call_tool("get_context", {"goal": "retry backoff delay"})
        check(r.is_error, "a call that outwaits --index-wait is a tool error", r)
        t = text_of(r)
        check("cgp is indexing" in t and "of 3 files (0%)" in t and "No context yet" in t,
              "it says how far indexing is", r)
        r = await s.call_tool("list_providers", {})
        check(r.is_error and "cgp is indexing" in text_of(r), "list_providers says so too", r)

    await session_of(params(["mcp", "--dir", WS, "--index-wait", "1"], env=env), body)


def orphan():
    workspace(3)
    env = {**ENV, "CGP_TEST_HOLD_INDEX": HOLD}
    p = subprocess.Popen([CGP, "mcp", "--dir", WS], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "orphan-test", "version": "1"}}}
    p.stdin.write((json.dumps(init) + "\n").encode())
    p.stdin.flush()
    line = p.stdout.readline()
    check(b'"result"' in line, f"initialize is answered while the index is held: {line[:200]!r}")
    # The client goes away: stdin closes. The build is held for good, so a
    # server that waited for it would never exit.
    p.stdin.close()
    try:
        code = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("the orphaned server kept running (its index build was still held)")
    check(code == 0, f"the orphaned server exits cleanly, got {code}: {p.stderr.read()[-2000:]!r}")


async def refusal():
    os.makedirs(HOME, exist_ok=True)
    for cwd, place in (("/", "the root directory"), (HOME, "your home directory")):
        async def body(s, started):
            check(time.monotonic() - started < 10, "initialize is answered at once")
            r = await s.call_tool("get_context", {"goal": "anything"})
            t = text_of(r)
            check(r.is_error and place in t and "cgp mcp --dir /path/to/repo" in t,
                  f"started in {cwd} without --dir, it says to pass --dir", r)
        await session_of(params(["mcp"], cwd=cwd), body)


async def sizes():
    workspace(300)

    async def body(s, started):
        goal = {"goal": "retry backoff delay helper"}
        r1 = await s.call_tool("get_context", goal)
        check(not r1.is_error, "the first call answers", r1)
        t, st = tokens(r1)
        n1 = len(r1.structured_content["frames"])
        print(f"default result: text ≈{t} + structured ≈{st} = {t + st} tokens, {n1} frames")
        check(t + st <= 10_000, f"the default result fits 10k tokens: text {t} + structured {st}", r1)
        check(n1 > 10, f"a many-frame answer measures the worst case ({n1} frames)", r1)
        check("retry_backoff" not in json.dumps(r1.structured_content["frames"][0].get("text", "")),
              "structured content carries no text")

        r2 = await s.call_tool("get_context", goal)
        t2, st2 = tokens(r2)
        print(f"no-resend turn: text ≈{t2}, structured ≈{st2} tokens")
        check(not r2.structured_content["frames"] and r2.structured_content["session"]["unchanged"] == n1,
              "the repeat resends nothing", r2)
        check(st2 <= 1000, f"a turn that resends nothing has a structured part under 1k tokens: {st2}", r2)
        text2 = text_of(r2)
        check("Already in context, unchanged (not resent" in text2 and '"fresh": true' in text2,
              "the repeat lists the blocks by label and says how to get them again", r2)

        # The client compacted the conversation: the model lost the blocks.
        # It asks again as the result told it to.
        r3 = await s.call_tool("get_context", {**goal, "fresh": True})
        check(len(r3.structured_content["frames"]) == n1 and "1u64 << attempt" in text_of(r3),
              "fresh: true sends every block in full again", r3)
        check("Already in context" not in text_of(r3), "and lists nothing as held", r3)

        cap = await s.call_tool("get_context", {**goal, "budget": 25_000})
        tc, sc = tokens(cap)
        print(f"at the cap: text ≈{tc} + structured ≈{sc} = {tc + sc} tokens")
        check(tc + sc <= 25_000, f"a result at the cap fits 25k tokens: {tc} + {sc}", cap)

    await session_of(params(["mcp", "--dir", WS]), body)


def readme_commands(readme):
    """Every server command the README's "Use it from your agent" section
    gives: `claude mcp add … -- <command>` lines, mcp.json blocks
    (`mcpServers` or `servers`) and Codex's config.toml block."""
    import re
    import tomllib
    text = open(readme, encoding="utf-8").read()
    start = text.index("\n## Use it from your agent")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end >= 0 else len(text)]
    found = []
    for lang, block in re.findall(r"```(\w*)\n(.*?)```", section, re.S):
        if lang == "sh":
            for line in block.splitlines():
                if line.startswith("claude mcp add ") and " -- " in line:
                    found.append(("claude", line.split(" -- ", 1)[1].split()))
        elif lang == "json":
            config = json.loads(block)
            for server in (config.get("mcpServers") or config.get("servers") or {}).values():
                found.append(("mcp.json", [server["command"], *server.get("args", [])]))
        elif lang == "toml":
            for server in tomllib.loads(block).get("mcp_servers", {}).values():
                found.append(("codex", [server["command"], *server.get("args", [])]))
    return found


async def argv():
    workspace(3)
    commands = readme_commands(sys.argv[4])
    kinds = {k for k, _ in commands}
    check({"claude", "mcp.json", "codex"} <= kinds, f"the README gives Claude Code, mcp.json and Codex snippets: {commands}")
    for kind, command in commands:
        check(command[:2] == ["cgp", "mcp"], f"the {kind} snippet runs `cgp mcp`: {command}")
        # `cgp` is on PATH once installed; the repository is the test's.
        argv = [CGP] + [WS if a == "/path/to/repo" else a for a in command[1:]]

        async def body(s, started, command=command):
            tools = await s.list_tools()
            check([t.name for t in tools.tools] == ["get_context", "list_providers"], "both tools are listed")
            r = await s.call_tool("get_context", {"goal": "retry backoff delay"})
            check(not r.is_error and "retry" in text_of(r), f"{command} answers get_context", r)

        await session_of(StdioServerParameters(command=argv[0], args=argv[1:], env=ENV), body)
        print(f"ok: the README's {kind} snippet: {' '.join(command)}")


if CHECK == "orphan":
    orphan()
else:
    asyncio.run({"progress": progress, "notice": notice, "refusal": refusal,
                 "sizes": sizes, "argv": argv}[CHECK]())
print(f"ok: {CHECK}")
