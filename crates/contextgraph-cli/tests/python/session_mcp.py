"""A real MCP client session against `cgp mcp`, with the official Python MCP SDK.

Run by the Rust test `session::mcp_session_with_the_python_sdk` as
    python session_mcp.py CGP SESSION_PROVIDER WORKDIR
It builds a workspace (two source files for the built-in workspace provider,
which verifies) and two stdio providers from the `cgp-fixture-session-provider`
fixture: one without `verify`, one that answers `unknown`. Then, in one MCP
connection, it checks turn by turn: overlapping goals reuse; a provider
without verify is re-queried; `unknown` causes a resend; an edited file's frame
is resent with a replacement note; a deleted file's frame is withdrawn; the
structured output carries UR1 usage for the call and session totals.
Exits non-zero with a message on the first failed check.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CGP, FIXTURE, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
WS = os.path.join(WORK, "ws")
# A home of its own: trust and consent stores stay inside WORK.
ENV = {**os.environ, "CI": "true", "HOME": os.path.join(WORK, "home"),
       "XDG_CONFIG_HOME": os.path.join(WORK, "home", ".config"),
       "XDG_DATA_HOME": os.path.join(WORK, "home", ".local", "share")}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def setup():
    write(os.path.join(WS, "src", "retry.rs"),
          "pub fn retry_with_backoff(attempt: u32) -> u64 {\n"
          "    // exponential backoff delay between retries\n"
          "    1u64 << attempt.min(10)\n}\n")
    write(os.path.join(WS, "src", "config.rs"),
          "pub fn load_config(path: &str) -> String {\n"
          "    // read the config file from disk\n"
          "    std::fs::read_to_string(path).unwrap_or_default()\n}\n")
    write(os.path.join(WORK, "none", "alpha.md"), "Alpha notes: retries back off exponentially.\n")
    write(os.path.join(WORK, "unknown", "beta.md"), "Beta notes: the config file is TOML.\n")
    toml = "[providers.workspace]\n"
    for mode in ("none", "unknown"):
        toml += (f"[providers.files-{mode}]\ncommand = {json.dumps(FIXTURE)}\n"
                 f"args = [\"--dir\", {json.dumps(os.path.join(WORK, mode))}, \"--verify\", \"{mode}\"]\n")
    write(os.path.join(WS, "cgp.toml"), toml)
    # The stdio providers run programs: the workspace file must be trusted.
    subprocess.run([CGP, "trust", os.path.join(WS, "cgp.toml")], env=ENV, check=True,
                   stdout=subprocess.DEVNULL)


def check(cond, message, result=None):
    if not cond:
        detail = ""
        if result is not None:
            detail = "\n" + text_of(result) + "\n" + json.dumps(result.structured_content, indent=1)[:4000]
        print(f"FAILED: {message}{detail}", file=sys.stderr)
        sys.exit(1)


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def labels(items, provider=None):
    return [i["label"] for i in items if provider is None or i["frame"]["provider_id"] == provider]


def sent_of(s, provider):
    # One entry per block sent: label, provider, id, score, rank, tokens, reason.
    return [x for x in s["frames"] if x["provider"] == provider]


def unchanged_line(result):
    # The note naming the blocks already held (the structured part counts them).
    return next((l for l in text_of(result).splitlines() if l.startswith("Already in context, unchanged (not resent")), "")


async def main():
    setup()
    params = StdioServerParameters(command=CGP, args=["mcp", "--dir", WS], env=ENV)
    async with stdio_client(params) as (read, write_):
        async with ClientSession(read, write_) as session:
            await session.initialize()

            async def turn(goal, **extra):
                r = await session.call_tool("get_context", {"goal": goal, "budget": 4000, **extra})
                check(not r.is_error, f"get_context {goal!r} failed", r)
                return r

            # Turn 1: everything is new and sent in full.
            r1 = await turn("retry backoff delay")
            s1 = r1.structured_content
            check(s1["session"]["turn"] == 1, "the first call is turn 1", r1)
            ws1 = sent_of(s1, "workspace")
            check(any("retry.rs" in x["label"] for x in ws1), "retry.rs is sent on turn 1", r1)
            check(all("reason" not in x for x in s1["frames"]), "turn 1 sends only new frames", r1)
            check("retry_with_backoff" in text_of(r1), "the retry block is in the text", r1)
            usage = s1["usage"]
            check(usage["budget_consumed"] == sum(f["tokens"] for f in s1["frames"]),
                  "UR1: budget_consumed is the sum of the frames sent", r1)
            check(usage["budget_consumed"] == sum(p["token_cost"] for p in usage["providers"]),
                  "UR1: budget_consumed is the sum of the providers' costs", r1)
            retry_label = next(x["label"] for x in ws1 if "retry.rs" in x["label"])

            # Turn 2: an overlapping goal reuses the workspace frame (verify: valid),
            # resends the `unknown` provider's frame, re-queries the one without verify.
            r2 = await turn("retry backoff and config file loading")
            s2 = r2.structured_content
            check(retry_label in unchanged_line(r2) and s2["session"]["unchanged"] >= 1, "retry.rs is reused on turn 2", r2)
            check("already in context, unchanged" in text_of(r2).lower() and retry_label in text_of(r2),
                  "the text lists retry.rs as already in context", r2)
            check("retry_with_backoff(attempt" not in text_of(r2), "the reused block is not resent", r2)
            beta = sent_of(s2, "files-unknown")
            check(len(beta) == 1 and beta[0]["reason"] == "unconfirmed",
                  "the frame of the provider answering unknown is resent", r2)
            alpha = sent_of(s2, "files-none")
            check(len(alpha) == 1 and alpha[0]["reason"] == "unconfirmed" and "cannot verify" in alpha[0]["detail"],
                  "the frame of the provider without verify is resent after a re-query", r2)
            check(s2["session"]["figures"]["tokens_saved"] > 0, "reuse saves tokens", r2)
            totals = s2["session"]["totals"]
            for k in ("tokens_sent", "tokens_saved", "frames_revalidated", "frames_withdrawn"):
                check(k in totals, f"session totals carry {k}", r2)
            check(totals["turns"] == 2 and totals["frames_revalidated"] >= 3, "totals are cumulative", r2)

            # Turn 3: snippets only, so the doc providers are not asked for this
            # goal: their held frames are re-queried with the goal they came with.
            r3 = await turn("config file loading", kinds=["symbol", "snippet"])
            s3 = r3.structured_content
            alpha = sent_of(s3, "files-none")
            check(len(alpha) == 1 and "cannot verify" in alpha[0].get("detail", ""),
                  "a provider without verify is re-queried and its frame resent", r3)

            # Edit retry.rs, delete config.rs.
            write(os.path.join(WS, "src", "retry.rs"),
                  "pub fn retry_with_backoff(attempt: u32) -> u64 {\n"
                  "    // exponential backoff delay between retries, capped at a minute\n"
                  "    (1u64 << attempt.min(10)).min(60_000)\n}\n")
            os.remove(os.path.join(WS, "src", "config.rs"))

            r4 = await turn("retry backoff delay")
            s4 = r4.structured_content
            changed = [x for x in sent_of(s4, "workspace") if x.get("reason") == "changed"]
            check(any(x["replaces"] == retry_label for x in changed), "the edited file's frame is resent, replacing the earlier one", r4)
            check("replaces the earlier" in text_of(r4) and "min(60_000)" in text_of(r4), "the text carries the new body and the note", r4)
            check(retry_label not in unchanged_line(r4), "the edited frame is never called unchanged", r4)
            gone = [w for w in s4["session"]["withdrawn"] if "config.rs" in w["label"]]
            check(len(gone) == 1, "the deleted file's frame is withdrawn", r4)
            check("Withdrawn" in text_of(r4), "the text names the withdrawn frame", r4)

            # A named session is separate: it starts from nothing.
            r5 = await turn("retry backoff delay", session="other")
            s5 = r5.structured_content
            check(s5["session"]["turn"] == 1 and s5["session"]["unchanged"] == 0, "a named session is separate", r5)
    print("ok: MCP session checks passed")


asyncio.run(main())
