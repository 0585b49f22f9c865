import { strict as assert } from 'node:assert';
import { accounts, callRouter, startHarness, type Harness } from '../support/routerHarness';

describe('redaction of account tokens from relayed bodies', () => {
  let h: Harness;
  /** Every access and refresh token account a has had during the test. */
  const seen = new Set<string>();
  const remember = () => {
    const a = h.sim.account('a');
    seen.add(a.accessToken);
    if (a.refreshToken) seen.add(a.refreshToken);
  };
  beforeEach(async () => {
    seen.clear();
    h = await startHarness(accounts('a'));
    remember();
  });
  afterEach(() => h.close());

  /** One call; the body the client got, after checking it carries none of the tokens but does carry the echo. */
  async function call(expectedStatus: number): Promise<unknown> {
    const r = await callRouter(h, { session: 's1' });
    remember();
    assert.equal(r.status, expectedStatus, r.text);
    for (const token of seen) assert.ok(!r.text.includes(token), `the ${r.status} body carries a token of the account`);
    assert.ok(r.text.includes('[redacted]'), 'the upstream echoed the headers (and the token was replaced)');
    return JSON.parse(r.text);
  }

  for (const status of [200, 400, 500] as const) {
    it(`replaces the bearer token an upstream echoes in a ${status} body, keeping the JSON valid`, async () => {
      h.sim.injectFault('a', { kind: 'echo_headers', status });
      const body = (await call(status)) as { content?: { text: string }[]; error?: { message: string } };
      const text = body.content?.[0].text ?? body.error?.message ?? '';
      assert.match(text, /"authorization":"Bearer \[redacted\]"/);
    });
  }

  it('redacts both the rejected and the refreshed token across a 401, a refresh and the retry', async () => {
    const before = h.sim.account('a').accessToken;
    h.sim.injectFault('a', { kind: 'echo_headers', status: 401 });
    h.sim.injectFault('a', { kind: 'echo_headers', status: 200 });
    await call(200);
    assert.notEqual(h.sim.account('a').accessToken, before, 'the 401 rotated the token');
    assert.equal(h.sim.refreshCount('a'), 1);

    // 401 after 401 through the attempt's three refreshes: the last 401, with the newest token echoed, is what the client gets.
    h.sim.injectFault('a', { kind: 'echo_headers', status: 401 }, 4);
    await call(401);
    assert.equal(h.sim.refreshCount('a'), 4);
  });
});
