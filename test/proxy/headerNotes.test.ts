import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import type { Logger } from '../../src/proxy/log';
import { callRouter, type Harness } from '../support/routerHarness';

describe('odd quota headers from the upstream', () => {
  let upstream: http.Server;
  let router: RunningRouter;
  let stateDir: string;
  const warnings: string[] = [];

  before(async () => {
    upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, {
          'content-type': 'application/json',
          'anthropic-ratelimit-unified-status': 'allowed',
          // A percent where a fraction belongs, and a reset that is no time.
          'anthropic-ratelimit-unified-5h-utilization': '45',
          'anthropic-ratelimit-unified-5h-reset': 'soon',
          'anthropic-ratelimit-unified-7d-utilization': '0.1',
        });
        res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 3, output_tokens: 1 } }));
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-header-notes-'));
    const log: Logger = { debug: () => undefined, info: () => undefined, warn: (m) => warnings.push(m), error: () => undefined };
    router = await startRouter({
      config: {
        listen: { host: '127.0.0.1', port: 0 },
        upstream: { baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` },
        stateDir,
        clientKey: 'test-client-key-0123456789',
        accounts: [{ label: 'work', accessToken: 'sk-ant-oat01-header-notes' }],
      },
      log,
      pollUsage: false,
      env: {},
    });
  });
  after(async () => {
    await router.close();
    await new Promise((r) => upstream.close(r));
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('are logged once per account and kind, naming the header, however many answers carry them', async () => {
    const h = { router } as Harness;
    for (let i = 0; i < 3; i++) assert.equal((await callRouter(h)).status, 200);
    const notes = warnings.filter((w) => w.startsWith('quota headers of work: '));
    assert.equal(notes.length, 2, notes.join('\n'));
    assert.match(notes.join('\n'), /5h-utilization: 45 exceeds 1\.5 \(percent sent as a fraction\?\)/);
    assert.match(notes.join('\n'), /5h-reset: unparseable reset \("soon"\)/);
  });
});
