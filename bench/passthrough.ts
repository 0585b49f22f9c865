/**
 * The reference: a bare Node pass-through, the practical limit for a Node proxy. A node:http
 * server pipes each request body into an undici `Pool.stream()` to the upstream and the
 * upstream's response back, unbuffered, chunk by chunk; the only change it makes is the
 * credential (the client's `x-claude-router-key` out, the account's bearer token in) and
 * dropping hop-by-hop headers (which undici and node:http refuse or set themselves).
 * No routing, no body inspection, no logging. Its own process.
 *
 *   node out/bench/passthrough.js --upstream URL --token ACCESS_TOKEN
 *
 * Prints `passthrough listening on URL`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import { argValue } from './common';

const argv = process.argv.slice(2);
const upstream = argValue(argv, 'upstream');
const bearer = `Bearer ${argValue(argv, 'token')}`;

// The same connection settings as the router's upstream agent (src/proxy/upstream/agent.ts).
const pool = new Pool(upstream, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 600_000, bodyTimeout: 300_000 });

const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'x-claude-router-key']);

const server = http.createServer({ requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 65_000 }, (req, res) => {
  const headers: Record<string, string | string[]> = {};
  for (const name in req.headers) if (!HOP.has(name)) headers[name] = req.headers[name]!;
  headers.authorization = bearer;
  const method = req.method as Dispatcher.HttpMethod;
  pool
    .stream({ path: req.url ?? '/', method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : req }, ({ statusCode, headers: up }) => {
      const out: Record<string, string | string[]> = {};
      for (const name in up) if (!HOP.has(name)) out[name] = up[name]!;
      res.writeHead(statusCode, out);
      return res;
    })
    .catch(() => {
      if (!res.headersSent) {
        res.writeHead(502);
        res.end();
      } else res.destroy();
    });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`passthrough listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
const stop = (): void => {
  server.close();
  server.closeAllConnections();
  void pool.close().finally(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
