import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import { request } from 'undici';
import { messagesBody } from '../../support/routerHarness';
import { withRawUpstream } from '../../support/rawUpstream';

/** The raw answer to `text` written on a fresh socket to `url`'s port, read until the server closes. */
function rawExchange(url: string, text: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), '127.0.0.1', () => sock.write(text));
    let out = '';
    sock.on('data', (d: Buffer) => {
      out += d.toString();
      // One answer is enough: the server may keep the connection open.
      const end = out.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(out);
      if (end !== -1 && length && out.length >= end + 4 + Number(length[1])) sock.end();
    });
    sock.on('close', () => resolve(out));
    sock.on('error', reject);
  });
}

describe('HTTP edges of the router', () => {
  for (const [upstreamValue, seen] of [
    ['soon-ish', undefined],
    ['-5', '0'],
    ['1.5', '2'],
    ['7', '7'],
  ] as const) {
    it(`an upstream retry-after of ${upstreamValue} reaches the client as ${seen ?? 'nothing'}`, async () => {
      await withRawUpstream(
        (_req, res) => {
          res.writeHead(400, { 'content-type': 'application/json', 'retry-after': upstreamValue });
          res.end('{"type":"error","error":{"type":"invalid_request_error","message":"no"}}');
        },
        async (router) => {
          const res = await request(`${router.url}/v1/messages`, {
            method: 'POST',
            headers: { authorization: `Bearer ${router.clientKey}`, 'content-type': 'application/json', 'x-claude-code-session-id': 's1' },
            body: messagesBody(),
          });
          await res.body.text();
          assert.equal(res.statusCode, 400);
          assert.equal(res.headers['retry-after'], seen);
        },
      );
    });
  }

  it('an HTTP/1.1 request without Host gets a 400 in the Anthropic error shape', async () => {
    await withRawUpstream(
      (_req, res) => res.end(),
      async (router) => {
        const text = await rawExchange(router.url, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
        assert.match(text, /^HTTP\/1\.1 400/);
        const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { type: string; error: { type: string; message: string } };
        assert.equal(body.type, 'error');
        assert.equal(body.error.type, 'invalid_request_error');
        assert.match(body.error.message, /Host/);
      },
    );
  });
});
