/**
 * Proof of identity between a client that holds the local key and whatever listens on the
 * router's port, without revealing the key (docs/security.md#sharing-one-port).
 *
 * The client picks a random nonce (32 bytes, 64 lowercase hex digits) and asks
 * `GET /identity?nonce=<nonce>`; the router answers `{"proof": "<hex>"}` with
 * `HMAC-SHA256(key, "claude-router identity v2\n" + <its address> + "\n" + <its port> + "\n" + <the client's port> + "\n" + nonce)`,
 * both ends of the connection as the router sees them. Only a holder of the key can compute it;
 * the client checks it against the ends of its own socket, so a program that relays the
 * challenge to a real router — on another port, another loopback address, or the same port of
 * another address family — fails: its own connection to the router has other ends. The client
 * compares in constant time and sends the key only on the same connection afterwards (a second
 * connection is never opened), so a holder that changes in between never receives it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import { buildConnector, Client } from 'undici';

/** The endpoint that answers the challenge (open: no client key). */
export const IDENTITY_PATH = '/identity';
/** The nonce: 32 random bytes as 64 lowercase hex digits, nothing else. */
const NONCE = /^[0-9a-f]{64}$/;
/** Separates these proofs from any other use of the key. */
const CONTEXT = 'claude-router identity v2\n';
/** The most bytes of an answer to the challenge a client reads (a proof answer is ~80). */
const MAX_ANSWER_BYTES = 1024;

/** The two ends of the connection a proof is given on, as the router sees them. */
export interface ConnectionEnds {
  /** The router's address on this connection (`127.0.0.1`, `::1`, …). */
  routerAddress: string;
  /** The port the router accepted the connection on. */
  routerPort: number;
  /** The port the client connected from. */
  clientPort: number;
}

/** An IPv4 address seen through a dual-stack socket (`::ffff:127.0.0.1`) as plain IPv4, lowercase. */
function plainAddress(address: string): string {
  const a = address.toLowerCase();
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

/**
 * The proof for one challenge.
 * @param key the local client key
 * @param ends both ends of the connection, as the router sees them
 * @param nonce 64 lowercase hex digits
 * @returns 64 lowercase hex digits
 */
export function identityProof(key: string, ends: ConnectionEnds, nonce: string): string {
  return createHmac('sha256', key)
    .update(`${CONTEXT}${plainAddress(ends.routerAddress)}\n${ends.routerPort}\n${ends.clientPort}\n${nonce}`)
    .digest('hex');
}

/** The ends of the connection a router accepted as `socket`. */
export function endsAtRouter(socket: Socket): ConnectionEnds {
  return { routerAddress: socket.localAddress ?? '', routerPort: socket.localPort ?? 0, clientPort: socket.remotePort ?? 0 };
}

/** The ends of a client's connection `socket`, as the router at its other end sees them. */
function endsAtClient(socket: Socket): ConnectionEnds {
  return { routerAddress: socket.remoteAddress ?? '', routerPort: socket.remotePort ?? 0, clientPort: socket.localPort ?? 0 };
}

/**
 * The router's answer to `GET /identity?<query>` on a connection with the ends `ends`: the
 * proof, or a refusal when the nonce is not exactly 64 lowercase hex digits. Fixed size, nothing else.
 */
export function answerIdentity(query: string, key: string, ends: ConnectionEnds): { ok: true; json: string } | { ok: false; message: string } {
  const params = new URLSearchParams(query);
  const nonce = params.get('nonce');
  if (nonce === null || !NONCE.test(nonce) || [...params.keys()].length !== 1) return { ok: false, message: 'Claude Router: /identity takes one nonce of 64 hex digits.' };
  return { ok: true, json: JSON.stringify({ proof: identityProof(key, ends, nonce) }) };
}

/** Who holds the port: our router (with the connection it proved itself on), another program, or nobody. */
export type PortHolder = { kind: 'ours'; client: Client } | { kind: 'foreign'; why: string } | { kind: 'free' };

export interface VerifyOptions {
  /** How long the holder may take to answer, ms (default 3000). */
  timeoutMs?: number;
}

/**
 * Challenges whoever listens at `url` (`http://host:port`) and returns the connection it proved
 * itself on. The client of an `ours` answer sends nothing over another connection: if that one
 * closes, later requests fail instead of reaching whoever holds the port by then. The caller
 * closes it. Never throws; never sends the key.
 */
export async function verifyHolder(url: string, key: string, opts: VerifyOptions = {}): Promise<PortHolder> {
  const origin = new URL(url);
  const timeoutMs = opts.timeoutMs ?? 3_000;
  const connection: { socket?: Socket } = {};
  const client = new Client(origin.origin, { connect: oneConnection(timeoutMs, connection), pipelining: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const nonce = randomBytes(32).toString('hex');
  try {
    // One deadline for the whole answer: a holder that trickles bytes cannot keep the client waiting.
    const res = await client.request({ method: 'GET', path: `${IDENTITY_PATH}?nonce=${nonce}`, signal: AbortSignal.timeout(timeoutMs) });
    const text = await readCapped(res.body, MAX_ANSWER_BYTES);
    if (res.statusCode !== 200 || text === undefined) throw new NotProven(`it answered ${IDENTITY_PATH} with ${text === undefined ? 'too much' : `status ${res.statusCode}`}`);
    const proof = (JSON.parse(text) as { proof?: unknown }).proof;
    if (typeof proof !== 'string') throw new NotProven('its answer carries no proof');
    if (!connection.socket) throw new NotProven('its connection could not be seen');
    // A well-formed proof for another key: most often a router whose key is not the one the caller
    // read (a relay's proof, made for the ends of its own connection, lands here too).
    if (!sameProof(proof, identityProof(key, endsAtClient(connection.socket), nonce)))
      throw new NotProven(
        /^[0-9a-f]{64}$/.test(proof)
          ? 'it answers as a router, but for another client key than this one — the key of another state directory, an old CLAUDE_ROUTER_KEY, or a program relaying this port to a router elsewhere?'
          : 'its proof does not match the client key',
      );
    return { kind: 'ours', client };
  } catch (err) {
    void client.destroy().catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code ?? (err as { cause?: NodeJS.ErrnoException }).cause?.code;
    if (code === 'ECONNREFUSED') return { kind: 'free' };
    return { kind: 'foreign', why: err instanceof NotProven ? err.message : 'it did not answer the identity challenge' };
  }
}

/** A reason the holder failed the challenge (safe to show: no key, no proof). */
class NotProven extends Error {}

/** Constant-time equality of two proofs (a candidate of another length is unequal, in the same time). */
function sameProof(candidate: string, want: string): boolean {
  const got = Buffer.from(candidate);
  const expected = Buffer.from(want);
  const sameLength = got.length === expected.length;
  return timingSafeEqual(sameLength ? got : expected, expected) && sameLength;
}

/** The body as text, or undefined (and the rest discarded) past `limit` bytes. */
async function readCapped(body: AsyncIterable<Buffer>, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) return undefined; // leaving the loop destroys the body
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A connector that connects once: a second connection would reach whoever holds the port by
 * then. The socket it opened is left in `seen` (the proof names its ends).
 */
function oneConnection(timeoutMs: number, seen: { socket?: Socket }): buildConnector.connector {
  const connect = buildConnector({ timeout: timeoutMs });
  let used = false;
  return (options, callback) => {
    if (used) return callback(new Error('the verified connection to the router closed'), null);
    used = true;
    connect(options, (...result) => {
      if (result[1]) seen.socket = result[1];
      callback(...result);
    });
  };
}

/**
 * GETs `paths` from the router at `url`, sending `key` only on the connection its holder proved
 * itself on (pipelined, in order).
 * @returns each path's status code, body text and headers
 * @throws Error naming the holder's failure (no key in it) when the holder is not our router or does not answer
 */
export function fetchFromRouter(
  url: string,
  key: string,
  paths: string[],
  opts: VerifyOptions = {},
): Promise<{ statusCode: number; text: string; headers: Record<string, string | string[] | undefined> }[]> {
  return askRouter(url, key, 'GET', paths, opts);
}

/**
 * POSTs to `path` of the router at `url` (no body), sending `key` only on the connection its
 * holder proved itself on — e.g. `/accounts/<label>/reset-cooldown`.
 * @returns the status code and body text
 * @throws Error as {@link fetchFromRouter}
 */
export async function postToRouter(url: string, key: string, path: string, opts: VerifyOptions = {}): Promise<{ statusCode: number; text: string }> {
  const [answer] = await askRouter(url, key, 'POST', [path], opts);
  return answer;
}

async function askRouter(
  url: string,
  key: string,
  method: 'GET' | 'POST',
  paths: string[],
  opts: VerifyOptions,
): Promise<{ statusCode: number; text: string; headers: Record<string, string | string[] | undefined> }[]> {
  const holder = await verifyHolder(url, key, opts);
  if (holder.kind === 'free') throw new Error(`no proxy answers at ${url} (nothing listens there)`);
  if (holder.kind === 'foreign') throw new Error(`the program at ${url} could not prove it is Claude Router (${holder.why}); the client key was not sent to it`);
  const { client } = holder;
  try {
    const headers = { 'x-claude-router-key': key };
    return await Promise.all(
      paths.map(async (path) => {
        const res = await client.request({ method, path, headers });
        return { statusCode: res.statusCode, text: await res.body.text(), headers: res.headers };
      }),
    );
  } finally {
    await client.close().catch(() => undefined);
  }
}
