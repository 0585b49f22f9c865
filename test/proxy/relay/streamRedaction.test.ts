import { strict as assert } from 'node:assert';
import type * as http from 'node:http';
import { request } from 'undici';
import { messagesBody } from '../../support/routerHarness';
import { withRawUpstream } from '../../support/rawUpstream';

const TOKEN = 'sk-ant-oat01-stream-echo-secret-0123456789';
const start =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":1}}}\n\n';

/** The credential the router sent upstream, as a hostile upstream or gateway would echo it. */
function sentToken(req: http.IncomingMessage): string {
  return String(req.headers['x-api-key'] ?? req.headers.authorization ?? '').replace(/^Bearer /, '');
}

/** A stream that echoes the token in a text delta cut in the middle of the token, then in an `event: error`. */
function echoingStream(req: http.IncomingMessage, res: http.ServerResponse): void {
  const token = sentToken(req);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(start);
  const delta = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"your header: Bearer ${token} ok"}}\n\n`;
  const cut = delta.indexOf(token) + 10;
  setTimeout(() => res.write(delta.slice(0, cut)), 20);
  setTimeout(() => res.write(delta.slice(cut)), 60);
  setTimeout(() => res.end(`event: error\ndata: {"type":"error","error":{"type":"api_error","message":"gateway saw x-api-key=${token}"}}\n\n`), 100);
}

async function streamOnce(url: string, key: string): Promise<string> {
  const res = await request(`${url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-claude-code-session-id': 's1' },
    body: messagesBody({ stream: true }),
  });
  assert.equal(res.statusCode, 200);
  return res.body.text();
}

describe('redaction of relayed event streams', () => {
  it('a token echoed in a text delta (split across chunks) and in an error event after the first event never reaches the client', async () => {
    let echoed = 0;
    await withRawUpstream(
      (req, res) => {
        if (sentToken(req) === TOKEN) echoed++;
        echoingStream(req, res);
      },
      async (router) => {
        const text = await streamOnce(router.url, router.clientKey);
        assert.equal(echoed, 1, 'the upstream got the token and echoed it');
        assert.ok(!text.includes(TOKEN), 'the token is not in the stream');
        assert.ok(!text.includes(TOKEN.slice(0, 20)), 'nor its first half');
        assert.match(text, /your header: Bearer \[redacted\] ok/);
        assert.match(text, /event: error\ndata: .*gateway saw x-api-key=\[redacted\]/);
        assert.match(text, /^event: message_start/);
      },
      [{ label: 'a', accessToken: TOKEN }],
    );
  });
});
