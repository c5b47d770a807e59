// `run(provider, argv)`: one main for both transports.
//   node my-provider.js                                 # stdio (a host spawns it)
//   node my-provider.js --http 127.0.0.1:8700           # HTTP on loopback
//   node my-provider.js --http 127.0.0.1:0 --token-env CGP_TOKEN
// The token comes from an environment variable or a file, never the command line.

import { readFileSync } from "node:fs";
import { serveHttp } from "./http.js";
import { serveStdio } from "./stdio.js";
import { diag } from "./session.js";

function fail(message) {
  diag(`error: ${message}`);
  process.exit(2);
}

/** Serve as the command line says (stdio by default). */
export async function run(provider, argv = process.argv.slice(2)) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : fail(`${flag} needs a value`));
    if (flag === "--http") opts.http = value();
    else if (flag === "--token-env") opts.tokenEnv = value();
    else if (flag === "--token-file") opts.tokenFile = value();
    else if (flag === "--tls-cert") opts.tlsCert = value();
    else if (flag === "--tls-key") opts.tlsKey = value();
    else if (flag === "--path") opts.path = value();
    else fail(`unknown argument ${JSON.stringify(flag)}; expected --http HOST:PORT, --token-env VAR, --token-file FILE, --tls-cert PEM, --tls-key PEM, --path PATH`);
  }
  if (opts.http === undefined) {
    if (opts.tokenEnv || opts.tokenFile || opts.tlsCert) fail("--token-env, --token-file and --tls-cert need --http");
    return serveStdio(provider);
  }
  const m = /^(.+):([0-9]+)$/.exec(opts.http);
  if (!m) fail("expected --http HOST:PORT, e.g. 127.0.0.1:8700 (port 0 picks a free one)");
  let token;
  if (opts.tokenEnv) {
    token = process.env[opts.tokenEnv];
    if (!token) fail(`environment variable ${opts.tokenEnv} is unset or empty`);
  } else if (opts.tokenFile) {
    try {
      token = readFileSync(opts.tokenFile, "utf8").trim();
    } catch (e) {
      fail(`cannot read --token-file: ${e.code ?? e.message}`);
    }
  }
  try {
    const server = await serveHttp(provider, {
      host: m[1],
      port: Number(m[2]),
      path: opts.path,
      token,
      tlsCert: opts.tlsCert ? readFileSync(opts.tlsCert) : undefined,
      tlsKey: opts.tlsKey ? readFileSync(opts.tlsKey) : undefined,
    });
    diag(`${provider.name}: listening on ${server.url}`);
    const stop = () => server.close().then(() => process.exit(0));
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  } catch (e) {
    diag(`error: ${e.message}`);
    process.exit(1);
  }
}
