/**
 * Programs that hold the router's port in the security tests: a squatter (a plain `node:http`
 * server that answers like the router without knowing the key and records every header it is
 * sent), and a fake leader that knows the key but misbehaves. Both compute the identity proof
 * themselves (docs/security.md#sharing-one-port), independently of the code under test.
 */
import { createHmac } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface PortHolder {
  port: number;
  url: string;
  /** Every request received: method, URL and headers as sent. */
  requests: { method: string; url: string; rawHeaders: string[] }[];
  /** Every header value received, joined (for "the key never arrived" checks). */
  allHeaderText(): string;
  close(): Promise<void>;
}

/** The proof a router holding `key` gives for `nonce` on the connection it accepted as `socket` (the identity protocol, written out). */
export function proofFor(key: string, socket: Socket, nonce: string): string {
  const address = (socket.localAddress ?? '').replace(/^::ffff:(?=\d)/, '');
  return createHmac('sha256', key).update(`claude-router identity v2\n${address}\n${socket.localPort}\n${socket.remotePort}\n${nonce}`).digest('hex');
}

/**
 * Starts a server on `port` (0: any free one) that records every request and answers it with
 * `answer`, or — by default — as a squatter would: `{"service":"claude-router"}` for everything,
 * and a made-up proof for `/identity`. The default squatter also takes orders from the test that
 * runs inside the extension host: `GET /__recorded` (the requests so far, as JSON) and
 * `GET /__leave` (it lets the port go).
 */
export async function startPortHolder(port = 0, answer?: (req: http.IncomingMessage, res: http.ServerResponse, port: number) => void): Promise<PortHolder> {
  const requests: PortHolder['requests'] = [];
  let bound = 0;
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', rawHeaders: req.rawHeaders });
    if (answer) return answer(req, res, bound);
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/__recorded') return res.end(JSON.stringify(requests.slice(0, -1)));
    if (req.url === '/__leave') {
      res.end('{}', () => void close());
      return;
    }
    res.end(req.url?.startsWith('/identity') ? JSON.stringify({ proof: 'ab'.repeat(32) }) : '{"service":"claude-router"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }));
  return {
    port: bound,
    url: `http://127.0.0.1:${bound}`,
    requests,
    allHeaderText: () => requests.map((r) => r.rawHeaders.join('\n')).join('\n'),
    close,
  };
}
