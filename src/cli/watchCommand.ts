/**
 * `claude-router status --watch`: the pool as a live view. It follows the proxy's `/events`
 * stream (one `changed` event at most every 250 ms, on the connection the proxy proved itself
 * on) and reads `/status` after each change. On a terminal it redraws in place, and every second
 * for the countdowns; otherwise it prints the table again, plain, after each change that changes it. It ends with
 * Ctrl-C (exit 0) or when the proxy stops (exit 1).
 */
import { verifyHolder } from '../proxy/http/identity';
import type { StatusReport } from '../proxy/status/status';
import { waitForSignal } from './args';
import { paintFor, terminalWidth } from './color';
import { getJson, proxyTarget, type ProxyTarget } from './proxyClient';
import { formatStatusTable, type StatusOptions } from './statusCommand';

/** Redraw of the countdowns on a terminal, ms. */
const TICK_MS = 1_000;
/** Cursor home, and the escape codes that clear the rest of a line and of the screen. */
const HOME = '\x1b[H';
const CLEAR_LINE = '\x1b[K';
const CLEAR_BELOW = '\x1b[J';

/** @returns 0 after Ctrl-C, 1 when the proxy stopped or could not be followed */
export async function runWatch(values: StatusOptions, out: NodeJS.WriteStream = process.stdout): Promise<number> {
  const target = await proxyTarget(values);
  const tty = out.isTTY === true;
  const paint = paintFor(out, values.color);
  let last: StatusReport | undefined;
  /** The last table printed in plain mode: a change event that changes nothing drawn prints nothing. */
  let printed = '';

  const draw = () => {
    if (!last) return;
    const now = Date.now();
    const head = `${paint.bold('claude-router status --watch')}  ${target.url}  ${new Date(now).toTimeString().slice(0, 8)}${tty ? '  (Ctrl-C quits)' : ''}`;
    const table = formatStatusTable(last, now, { paint, bars: tty, width: terminalWidth(out) });
    if (tty) out.write(HOME + [head, '', ...table.trimEnd().split('\n')].map((l) => l + CLEAR_LINE).join('\n') + '\n' + CLEAR_BELOW);
    else if (table !== printed) {
      printed = table;
      out.write(`${head}\n${table}\n`);
    }
  };
  let refreshing: Promise<void> = Promise.resolve();
  const refresh = () =>
    (refreshing = refreshing.then(async () => {
      last = await getJson<StatusReport>(target, '/status');
      draw();
    }));

  if (tty) out.write('\x1b[?25l\x1b[2J'); // hide the cursor, clear the screen once
  const tick = tty ? setInterval(draw, TICK_MS) : undefined;
  try {
    await refresh();
    const ended = await Promise.race([
      followChanges(target, () => void refresh().catch(() => undefined)).then(() => 'stopped' as const),
      waitForSignal().then(() => 'signal' as const),
    ]);
    await refreshing.catch(() => undefined);
    if (ended === 'signal') return 0;
    process.stderr.write(`claude-router: the proxy at ${target.url} stopped\n`);
    return 1;
  } finally {
    clearInterval(tick);
    if (tty) out.write('\x1b[?25h'); // the cursor back
  }
}

/**
 * Calls `onChange` for every `changed` event of the proxy's `/events` stream until it ends.
 * @throws Error when the holder of the port cannot prove it is the router (it got no key)
 */
async function followChanges(target: ProxyTarget, onChange: () => void): Promise<void> {
  const holder = await verifyHolder(target.url, target.key, { timeoutMs: 5_000 });
  if (holder.kind !== 'ours')
    throw new Error(
      holder.kind === 'free'
        ? `no proxy answers at ${target.url}`
        : `the program at ${target.url} could not prove it is Claude Router (${holder.why}); the client key was not sent to it`,
    );
  const { client } = holder;
  try {
    const res = await client.request({ method: 'GET', path: '/events', headers: { 'x-claude-router-key': target.key }, bodyTimeout: 0 });
    if (res.statusCode !== 200) throw new Error(`${target.url}/events answered ${res.statusCode}`);
    // Only the event names matter: the tail of a chunk is kept so a name split between two chunks is seen.
    let carry = '';
    for await (const chunk of res.body) {
      const text = carry + (chunk as Buffer).toString('utf8');
      if (text.includes('event: changed')) onChange();
      carry = text.slice(-32).replace(/event: changed/g, '');
    }
  } catch (err) {
    // The proxy closing mid-stream ends the view like a clean end does.
    if ((err as NodeJS.ErrnoException).code !== 'UND_ERR_SOCKET' && (err as NodeJS.ErrnoException).code !== 'ECONNRESET') throw err;
  } finally {
    await client.close().catch(() => undefined);
  }
}
