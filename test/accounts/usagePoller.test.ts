import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsagePoller } from '../../src/accounts/usagePoller';

describe('usage poller log hygiene', () => {
  let server: http.Server;
  let url: string;
  const BODY = 'sk-ant-oat01-SECRETSECRET <html>not json';
  before(async () => {
    server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(BODY));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('logs a malformed 200 body by its size only, quoting none of its bytes', async () => {
    const lines: string[] = [];
    const recorded: string[] = [];
    const poller = new UsagePoller({
      baseUrl: () => url,
      accounts: () => ['a'],
      freshness: () => 'unknown',
      credentials: () => Promise.resolve({ accessToken: 'sk-ant-oat01-the-access-token' }),
      record: (label) => recorded.push(label),
      log: (m) => lines.push(m),
    });
    await poller.tick();
    assert.deepEqual(recorded, []);
    assert.deepEqual(lines, [`usage endpoint: a answered 200 with a body that is not JSON (${BODY.length} bytes)`]);
  });
});
