/**
 * Sample traffic for the simulated accounts: a few Claude-Code-shaped conversations sent to the
 * router (not to the fake upstream), each a session whose prompt grows turn by turn, started one
 * after another — so a person trying the router sees sessions bind, bars fill and requests spread.
 * A client only: it speaks HTTP to a URL with the local key, and imports nothing of the engine.
 */

export interface SampleTrafficOptions {
  /** The router's base URL, e.g. `http://127.0.0.1:48290`. */
  url: string;
  /** The local client key (sent as `x-claude-router-key`). */
  clientKey: string;
  /** Conversations (default 8). */
  sessions?: number;
  /** Requests per conversation (default 4). */
  turns?: number;
  /** Time between the starts of two conversations, and between a conversation's turns, ms (default 1500). */
  gapMs?: number;
  /** Called once when half the conversations have started (the demo throttles an account there). */
  halfway?: () => void;
  signal?: AbortSignal;
}

/** What the traffic did: requests sent, and how many each account served (`x-claude-router-account`). */
export interface SampleTrafficResult {
  requests: number;
  failed: number;
  byAccount: Record<string, number>;
}

/** About 5,000 tokens of system prompt (the fake upstream counts 4 bytes a token). */
const SYSTEM = `You are a coding assistant working in a sample repository. ${'Follow the project conventions and explain each change. '.repeat(350)}`;

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Sends the conversations; resolves when all are done or `signal` aborts (requests in flight end
 * with it). A request that fails is counted and its conversation goes on.
 */
export async function runSampleTraffic(opts: SampleTrafficOptions): Promise<SampleTrafficResult> {
  const sessions = opts.sessions ?? 8;
  const turns = opts.turns ?? 4;
  const gapMs = opts.gapMs ?? 1500;
  const result: SampleTrafficResult = { requests: 0, failed: 0, byAccount: {} };
  const run = Date.now().toString(36);

  const conversation = async (s: number) => {
    await sleep(s * gapMs, opts.signal);
    if (s === Math.floor(sessions / 2)) opts.halfway?.();
    const messages: Array<{ role: 'user' | 'assistant'; content: string }> = [];
    for (let turn = 0; turn < turns && !opts.signal?.aborted; turn++) {
      messages.push({ role: 'user', content: `Sample conversation ${s + 1}, step ${turn + 1}: ${'please look at the next file. '.repeat(40)}` });
      result.requests++;
      try {
        const res = await fetch(`${opts.url}/v1/messages?beta=true`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'anthropic-version': '2023-06-01',
            'x-claude-router-key': opts.clientKey,
            'x-claude-code-session-id': `sample-${run}-${s + 1}`,
          },
          body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 256, system: [{ type: 'text', text: SYSTEM }], messages }),
          signal: opts.signal,
        });
        await res.arrayBuffer();
        const account = res.headers.get('x-claude-router-account');
        if (res.ok && account) {
          result.byAccount[account] = (result.byAccount[account] ?? 0) + 1;
          messages.push({ role: 'assistant', content: 'Done.' });
        } else {
          result.failed++;
          messages.pop();
        }
      } catch {
        if (opts.signal?.aborted) return;
        result.failed++;
        messages.pop();
      }
      await sleep(gapMs, opts.signal);
    }
  };
  await Promise.all(Array.from({ length: sessions }, (_, s) => conversation(s)));
  return result;
}
