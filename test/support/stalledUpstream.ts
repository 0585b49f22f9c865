/**
 * A slow upstream for memory tests: it reads (and drops) each request's body, then holds the
 * answer until the test lets it go; every answer is a small 200 JSON message.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StalledUpstream {
  url: string;
  /** Messages requests whose body arrived whole and whose answer is held (the router's own usage reads are held too, not counted). */
  held(): number;
  /** Answers every held request, and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

const ANSWER = JSON.stringify({
  id: 'msg_stalled',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [{ type: 'text', text: 'late' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 1, output_tokens: 1 },
});

export async function startStalledUpstream(): Promise<StalledUpstream> {
  const waiting: http.ServerResponse[] = [];
  let messages = 0;
  let open = false;
  const answer = (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER);
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (open) return answer(res);
      waiting.push(res);
      if ((req.url ?? '').startsWith('/v1/messages')) messages++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => messages,
    release() {
      open = true;
      messages = 0;
      for (const res of waiting.splice(0)) answer(res);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
