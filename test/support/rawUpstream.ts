/**
 * A raw HTTP server standing in for Anthropic, with the real router (startRouter) in front of
 * it: each test writes the upstream's bytes itself. Accounts are `tok-<label>` API keys unless
 * the test gives its own.
 */
import * as http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import { silentLogger } from '../../src/proxy/log';
import type { ConfigInput } from '../../src/config/schema';

/** Answers one upstream call (the body is read before it is called). */
export type RawHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * Runs `run` against a router whose upstream is `handler`, then closes both.
 * @param accounts the router's accounts (default one, `a`, with the access token `tok-a`)
 */
export async function withRawUpstream(handler: RawHandler, run: (router: RunningRouter) => Promise<void>, accounts?: ConfigInput['accounts']): Promise<void> {
  const upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-raw-'));
  let router: RunningRouter | undefined;
  try {
    router = await startRouter({
      config: {
        listen: { host: '127.0.0.1', port: 0 },
        upstream: { baseUrl: url, tokenUrl: `${url}/token` },
        stateDir,
        clientKey: 'raw-upstream-key-0123456789',
        accounts: accounts ?? [{ label: 'a', accessToken: 'tok-a' }],
      },
      log: silentLogger,
      pollUsage: false,
      env: {},
    });
    await run(router);
  } finally {
    await router?.close();
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
    rmSync(stateDir, { recursive: true, force: true });
  }
}
