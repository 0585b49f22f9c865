/**
 * The HTTP listener around a request handler (a RouterEngine's `handle`).
 * Loopback only; long responses allowed, requests that never finish arriving are not.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendUnparsedError } from '../relay/clientAnswer';

export interface ProxyServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  server: http.Server;
  /**
   * Stops accepting, ends idle keep-alive sockets, waits up to `graceMs` (default 2,000) for
   * running requests, calls `beforeCut` (ending what it can in good order), then cuts the rest.
   */
  close(graceMs?: number, beforeCut?: () => void): Promise<void>;
}

/** How long what `beforeCut` ended has to reach its client before the remaining sockets are cut, ms. */
const CUT_FLUSH_MS = 200;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * How long a request's head may take to arrive, ms, from its first byte (a new connection: from
 * its opening). A client sends its head at once; only the body may take long (a 32 MB upload is
 * bounded by `requestTimeout`), so a connection that sends half a head and waits is cut soon.
 */
export const HEADERS_TIMEOUT_MS = 5_000;
/** How often Node checks the head and request timeouts, ms (its default, 30 s, would let a half-sent head live 35 s). */
const CHECK_INTERVAL_MS = 1_000;
/**
 * Client connections open at once: Claude Code keeps a few per session, a VS Code window one for
 * its `/events`; far below a process's usual file-descriptor limit, so the router keeps room for
 * its upstream connections and files whatever a local program opens.
 */
export const MAX_CONNECTIONS = 1024;

/**
 * @param host a loopback address
 * @param port 0 picks a free port
 * @throws Error when `host` is not loopback, or the port is taken (saying so; its `code` stays EADDRINUSE)
 */
export function listen(handler: http.RequestListener, host: string, port: number): Promise<ProxyServer> {
  if (!LOOPBACK.has(host)) return Promise.reject(new Error(`refusing to listen on ${host}: loopback only`));
  // requestTimeout bounds receiving the request (a body that never completes), not the
  // response: long streams are unaffected.
  // requireHostHeader off: a request without `Host` reaches the guard, which answers it in
  // Anthropic's envelope (Node's own refusal is an empty 400).
  const server = http.createServer(
    { requestTimeout: 120_000, headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: CHECK_INTERVAL_MS, keepAliveTimeout: 65_000, requireHostHeader: false },
    handler,
  );
  // Sockets past this are closed as they come: a flood of idle or half-sent connections cannot take every file descriptor.
  server.maxConnections = MAX_CONNECTIONS;
  // `Expect: 100-continue` goes through the same checks; the engine sends 100 only once it reads the body.
  server.on('checkContinue', handler);
  // Requests Node cannot even parse still get an Anthropic-shaped answer.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return sendUnparsedError(socket, 408, 'Claude Router: the request did not arrive in time.');
    sendUnparsedError(socket, err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400, `Claude Router could not parse the request (${err.code ?? 'bad request'}).`);
  });
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? Object.assign(
              new Error(`port ${port} on ${host} is taken by another program (EADDRINUSE; another proxy?): stop it, or choose another port (0 picks a free one)`, { cause: err }),
              {
                code: err.code,
              },
            )
          : err,
      );
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      const addr = server.address() as AddressInfo;
      const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve({
        url: `http://${shownHost}:${addr.port}`,
        port: addr.port,
        server,
        close: (graceMs = 2_000, beforeCut?: () => void) =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
            setTimeout(() => {
              beforeCut?.();
              // What beforeCut ended gets a moment to reach its client before the sockets go.
              setTimeout(() => server.closeAllConnections(), beforeCut ? CUT_FLUSH_MS : 0).unref();
            }, graceMs).unref();
          }),
      });
    });
  });
}
