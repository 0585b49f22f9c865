/**
 * The control API under `/_sim/`: `GET state`, `POST fault`, `POST clear`, `POST advance`,
 * `POST concurrency` (`{label, limit}`, limit null lifts it)
 * (JSON bodies; a bad one answers 400 with its reason). Not recorded as requests.
 */
import type { Exchange } from '../http';
import type { SimFault } from '../types';
import type { SimHost } from './host';

/** Answers one control request (`method`, `path` under `/_sim/`, `buf` the raw body). */
export function control(host: SimHost, ex: Exchange, method: string, path: string, buf: Buffer): void {
  const parse = (): Record<string, unknown> => {
    if (buf.length === 0) return {};
    const j: unknown = JSON.parse(buf.toString('utf8'));
    if (!j || typeof j !== 'object' || Array.isArray(j)) throw new Error('body must be a JSON object');
    return j as Record<string, unknown>;
  };
  try {
    if (method === 'GET' && path === '/_sim/state') return ex.json(200, host.publicState());
    if (method === 'POST' && path === '/_sim/fault') {
      const b = parse();
      if (typeof b.label !== 'string') throw new Error('label must be a string');
      const count = b.count === undefined ? 1 : Number(b.count);
      host.injectFault(b.label, b.fault as SimFault, count);
      return ex.json(200, { ok: true, pendingFaults: host.acct(b.label).faults.kinds() });
    }
    if (method === 'POST' && path === '/_sim/clear') {
      const b = parse();
      if (b.label !== undefined && typeof b.label !== 'string') throw new Error('label must be a string');
      host.clearFaults(b.label);
      return ex.json(200, { ok: true });
    }
    if (method === 'POST' && path === '/_sim/concurrency') {
      const b = parse();
      if (typeof b.label !== 'string') throw new Error('label must be a string');
      host.setConcurrencyLimit(b.label, b.limit as number | null);
      return ex.json(200, { ok: true });
    }
    if (method === 'POST' && path === '/_sim/advance') {
      host.advanceClock(Number(parse().ms));
      return ex.json(200, { ok: true, now: host.now() });
    }
    return ex.json(404, { error: `no control endpoint ${method} ${path}` });
  } catch (e) {
    return ex.json(400, { error: e instanceof Error ? e.message : String(e) });
  }
}
