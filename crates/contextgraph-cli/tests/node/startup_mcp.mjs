// `cgp mcp` as an agent built on the official TypeScript MCP SDK meets it
// (the SDK Claude Code, Cursor and VS Code's clients are built on).
//
// Run by the Rust tests in tests/it/mcp_startup_ts.rs as
//     node startup_mcp.mjs SDK_DIR CGP WORKDIR CHECK [README]
// where SDK_DIR is a directory whose node_modules holds
// @modelcontextprotocol/sdk, and CHECK is one of:
//   progress  initialize and tools/list are answered while the index build is
//             held (the CGP_TEST_HOLD_INDEX hook of the test-fixtures build: no
//             file is read until the file it names exists); a get_context with
//             an onprogress handler gets progress notifications, and is
//             answered once the build is let go, inside the SDK's default
//             60 s request timeout
//   argv      every server command of README.md's "Use it from your agent"
//             section, with `cgp` and the repository path filled in,
//             initializes and answers get_context
// Exits non-zero with a message on the first failed check.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [sdkDir, CGP, WORK, CHECK, README] = process.argv.slice(2);
const require = createRequire(path.join(sdkDir, "package.json"));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");

const WS = path.join(WORK, "ws");
const HOME = path.join(WORK, "home");
const HOLD = path.join(WORK, "release-the-index");
const ENV = {
  ...process.env,
  CI: "true",
  HOME,
  XDG_CONFIG_HOME: path.join(HOME, ".config"),
  XDG_DATA_HOME: path.join(HOME, ".local", "share"),
  CONTEXTGRAPH_WORKSPACE_CACHE: path.join(WORK, "cache"),
};
delete ENV.CGP_CONFIG;

function check(cond, message, result) {
  if (!cond) {
    const detail = result === undefined ? "" : "\n" + JSON.stringify(result).slice(0, 3000);
    console.error(`FAILED: ${message}${detail}`);
    process.exit(1);
  }
}

const textOf = (result) =>
  (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

function workspace(files) {
  fs.mkdirSync(path.join(WS, ".git"), { recursive: true });
  const words = ["retry", "backoff", "config", "loader", "parser", "budget", "session", "cache"];
  for (let n = 0; n < files; n++) {
    const a = words[n % 8];
    const b = words[(n * 3 + 1) % 8];
    let body = "";
    for (let i = 0; i < 8; i++) {
      body += `/// ${a} ${b} helper ${i}: doubles the delay between retries.\n`;
      body += `pub fn ${a}_${b}_${n}_${i}(attempt: u32) -> u64 {\n    1u64 << attempt.min(${i} + 3)\n}\n\n`;
    }
    write(path.join(WS, "src", `m${Math.floor(n / 50)}`, `${a}_${n}.rs`), body);
  }
}

async function withClient(command, args, env, body) {
  const transport = new StdioClientTransport({ command, args, env, stderr: "pipe" });
  const client = new Client({ name: "cgp-startup-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    await body(client);
  } finally {
    await client.close();
  }
}

async function progress() {
  workspace(3);
  const seen = [];
  await withClient(CGP, ["mcp", "--dir", WS], { ...ENV, CGP_TEST_HOLD_INDEX: HOLD }, async (client) => {
    const tools = await client.listTools();
    check(!fs.existsSync(HOLD), "initialize and tools/list are answered before the index exists");
    check(
      JSON.stringify(tools.tools.map((t) => t.name)) === JSON.stringify(["get_context", "list_providers"]),
      "both tools are listed",
      tools,
    );
    const result = await client.callTool(
      { name: "get_context", arguments: { goal: "retry backoff delay" } },
      undefined,
      {
        onprogress: (p) => {
          seen.push(p);
          // Let the build go once a notification arrived: before it, nothing is indexed.
          if (!fs.existsSync(HOLD)) write(HOLD, "");
        },
      },
    );
    check(seen.length > 0, "progress notifications reach the client");
    check(
      seen.every((p) => (p.message || "").includes("cgp is")),
      `each notification says what is happening: ${JSON.stringify(seen)}`,
    );
    const values = seen.map((p) => p.progress);
    check(
      values.every((v, i) => i === 0 || v > values[i - 1]),
      `progress grows with each notification: ${values}`,
    );
    check(!result.isError, "get_context is answered once the index is built", result);
    check(textOf(result).includes("retry"), "with the workspace's evidence", result);
    check(result.structuredContent && Array.isArray(result.structuredContent.frames),
      "structured content lists the frames", result);
  });
}

// Every server command the README's "Use it from your agent" section gives:
// `claude mcp add … -- <command>` lines, mcp.json blocks and Codex's TOML.
function readmeCommands(readme) {
  const text = fs.readFileSync(readme, "utf8");
  const start = text.indexOf("\n## Use it from your agent");
  check(start >= 0, "README.md has a \"Use it from your agent\" section");
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end >= 0 ? end : text.length);
  const found = [];
  for (const [, lang, block] of section.matchAll(/```(\w*)\n([\s\S]*?)```/g)) {
    if (lang === "sh") {
      for (const line of block.split("\n")) {
        if (line.startsWith("claude mcp add ") && line.includes(" -- ")) {
          found.push(["claude", line.split(" -- ")[1].trim().split(/\s+/)]);
        }
      }
    } else if (lang === "json") {
      const config = JSON.parse(block);
      for (const server of Object.values(config.mcpServers || config.servers || {})) {
        found.push(["mcp.json", [server.command, ...(server.args || [])]]);
      }
    } else if (lang === "toml") {
      // The Codex block: `command = "…"` and `args = [ … ]` (JSON-compatible).
      const command = /^command\s*=\s*"([^"]*)"/m.exec(block);
      const args = /^args\s*=\s*(\[.*\])/m.exec(block);
      check(command && args, `the TOML snippet has command and args: ${block}`);
      found.push(["codex", [command[1], ...JSON.parse(args[1])]]);
    }
  }
  return found;
}

async function argv() {
  workspace(3);
  const commands = readmeCommands(README);
  const kinds = new Set(commands.map(([k]) => k));
  check(["claude", "mcp.json", "codex"].every((k) => kinds.has(k)),
    `the README gives Claude Code, mcp.json and Codex snippets: ${JSON.stringify(commands)}`);
  for (const [kind, command] of commands) {
    check(command[0] === "cgp" && command[1] === "mcp", `the ${kind} snippet runs \`cgp mcp\`: ${command}`);
    const args = command.slice(1).map((a) => (a === "/path/to/repo" ? WS : a));
    await withClient(CGP, args, ENV, async (client) => {
      const result = await client.callTool({ name: "get_context", arguments: { goal: "retry backoff delay" } });
      check(!result.isError && textOf(result).includes("retry"), `${command.join(" ")} answers get_context`, result);
    });
    console.log(`ok: the README's ${kind} snippet: ${command.join(" ")}`);
  }
}

const checks = { progress, argv };
check(CHECK in checks, `unknown check ${CHECK}`);
await checks[CHECK]();
console.log(`ok: ${CHECK}`);
