/**
 * `GET /decisions` of the real proxy reads the decision log on disk (records from before this
 * process too), filtered and paged with a `link` header; `GET /preview` says how a request for a
 * model would be routed now.
 */
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { DecisionRecord } from '../../../src/routing/decision';
import { stickyKeyHash } from '../../../src/routing/identify';
import type { PreviewReport } from '../../../src/proxy/status/status';
import { accounts, callRouter, startHarness, type Harness } from '../../support/routerHarness';

describe('/decisions and /preview', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness(accounts('a', 'b'), { routing: { sessionAffinity: true } });
  });
  afterEach(() => h.close());

  const get = async (p: string) => {
    const r = await callRouter(h, { method: 'GET', path: p });
    return { status: r.status, link: r.headers.link, json: JSON.parse(r.text) as unknown };
  };

  it('serves records of an earlier run from disk, filtered by session, account and outcome, in pages linked by `link`', async () => {
    for (const s of ['s1', 's2', 's1']) assert.equal((await callRouter(h, { session: s })).status, 200);
    // Wait for the live records on disk, then add older ones as an earlier run left them.
    for (let i = 0; i < 50 && h.decisions().length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    const [template] = h.decisions();
    const earlier = [0, 1].map((i) => ({ ...template, requestId: `req-earlier-${i}`, ts: `2025-06-0${i + 1}T00:00:00.000Z`, stickyKeyHash: stickyKeyHash('old') }));
    const file = path.join(h.stateDir, 'decisions.jsonl');
    const live = h.decisions();
    // Earlier records belong before the live ones: write the file again in that order.
    writeFileSync(file, [...earlier, ...live].map((r) => JSON.stringify(r) + '\n').join(''));

    const all = await get('/decisions?limit=500');
    assert.equal(all.status, 200);
    assert.deepEqual(
      (all.json as DecisionRecord[]).map((r) => r.requestId),
      [...earlier, ...live].map((r) => r.requestId),
      'records only on disk are served too',
    );

    const s1 = (await get(`/decisions?session=${stickyKeyHash('s1')}`)).json as DecisionRecord[];
    assert.equal(s1.length, 2);
    assert.ok(s1.every((r) => r.stickyKeyHash === stickyKeyHash('s1')));
    const servedBy = s1[0].servedBy!;
    assert.ok(((await get(`/decisions?account=${servedBy}`)).json as DecisionRecord[]).every((r) => r.servedBy === servedBy || r.attempts.some((a) => a.account === servedBy)));
    assert.deepEqual((await get('/decisions?outcome=no_usable_account')).json, []);

    const first = await get('/decisions?limit=2');
    assert.deepEqual(
      (first.json as DecisionRecord[]).map((r) => r.requestId),
      live.slice(1).map((r) => r.requestId),
    );
    const next = /^<(\/decisions\?limit=2&before=\d+%3A\d+)>; rel="next"$/.exec(first.link ?? '');
    assert.ok(next, `a link to the next page: ${first.link}`);
    const second = await get(next[1]);
    assert.deepEqual(
      (second.json as DecisionRecord[]).map((r) => r.requestId),
      ['req-earlier-1', live[0].requestId],
    );
  });

  it('a bad parameter: 400 naming it', async () => {
    const r = await callRouter(h, { method: 'GET', path: '/decisions?since=last-tuesday' });
    assert.equal(r.status, 400);
    assert.equal(JSON.parse(r.text).error.message, 'Claude Router: /decisions since: expected an ISO-8601 time or epoch milliseconds.');
  });

  it('/preview: each account’s verdict for a new request of a model, and of a bound session', async () => {
    assert.equal((await callRouter(h, { session: 's1' })).status, 200);
    const p = (await get('/preview?model=claude-opus-4-1')).json as PreviewReport;
    assert.deepEqual(p.verdicts.map((v) => v.account).sort(), ['a', 'b']);
    assert.equal(p.verdicts.filter((v) => v.verdict === 'selected').length, 1);
    const bound = (await get(`/preview?session=${stickyKeyHash('s1')}`)).json as PreviewReport;
    assert.equal(bound.selectionReason, 'session_affinity');
    assert.equal((await callRouter(h, { method: 'GET', path: '/preview?session=s1' })).status, 400, 'only a hash, never a raw id');
  });
});
