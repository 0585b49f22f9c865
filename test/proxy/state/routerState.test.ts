import { strict as assert } from 'node:assert';
import { RouterState } from '../../../src/proxy/state/routerState';
import type { QuotaSnapshot } from '../../../src/quota/types';
import { stickyKeyHash } from '../../../src/routing/identify';

/** The store is keyed by session-key hashes, as the router fills it. */
const K = stickyKeyHash;

const allowed = (observedAtMs: number): QuotaSnapshot => ({
  observedAtMs,
  source: 'headers',
  unifiedStatus: 'allowed',
  session: { status: 'allowed', utilization: 0.2, resetAtMs: observedAtMs + 3_600_000 },
  weekly: { status: 'allowed', utilization: 0.3, resetAtMs: observedAtMs + 86_400_000 },
  scoped: {},
});

describe('RouterState evidence and cooldowns', () => {
  it('a success from a request already in flight when the account was throttled does not lift the throttle (no ping-pong)', () => {
    const s = new RouterState(3_600_000);
    s.setCooldown('a', { untilMs: 12_000, reason: 'throttle', setAtMs: 10_000 });
    s.recordEvidence('a', allowed(10_500), 9_000); // sent before the throttle, answered after
    assert.equal(s.cooldowns.get('a')?.untilMs, 12_000);
  });

  it('allowed evidence from a request sent after the cooldown clears it', () => {
    const s = new RouterState(3_600_000);
    s.setCooldown('a', { untilMs: 900_000, reason: 'window_exhausted', windows: ['5h'], setAtMs: 10_000 });
    s.recordEvidence('a', allowed(20_500), 20_000);
    assert.equal(s.cooldowns.has('a'), false);
  });

  it('a cooldown never shortens', () => {
    const s = new RouterState(3_600_000);
    s.setCooldown('a', { untilMs: 50_000, reason: 'window_exhausted', setAtMs: 1 });
    s.setCooldown('a', { untilMs: 20_000, reason: 'throttle', setAtMs: 2 });
    assert.equal(s.cooldowns.get('a')?.untilMs, 50_000);
  });

  it('saves and restores without secrets, dropping expired cooldowns', () => {
    const s = new RouterState(3_600_000);
    s.recordEvidence('a', allowed(1_000), 900);
    s.setCooldown('a', { untilMs: 5_000, reason: 'throttle', setAtMs: 1_000 });
    s.setCooldown('b', { untilMs: 50_000, reason: 'throttle', setAtMs: 1_000 });
    s.affinity.bind(K('sess'), 'a', 1_000);
    const saved = JSON.parse(JSON.stringify(s.toSaved(6_000)));
    const r = new RouterState(3_600_000);
    assert.equal(r.restore(saved, 6_000), true);
    assert.equal(r.cooldowns.has('a'), false);
    assert.equal(r.cooldowns.get('b')?.untilMs, 50_000);
    assert.equal(r.affinity.get(K('sess'), 6_000)?.account, 'a');
    assert.equal(r.snapshots.get('a')?.session?.utilization, 0.2);
    assert.equal(new RouterState(1).restore({ version: 2 }, 0), false, 'an unknown shape restores nothing');
  });

  it("folding in another router's saved state keeps the newer of each: evidence, the longer cooldown, the later binding; its own sign-in flags", () => {
    const other = new RouterState(3_600_000);
    other.recordEvidence('a', allowed(5_000), 4_900);
    other.setCooldown('b', { untilMs: 90_000, reason: 'throttle', setAtMs: 5_000 });
    other.affinity.bind(K('s1'), 'b', 5_000);
    other.affinity.bind(K('s2'), 'b', 1_000);
    other.markNeedsSignIn('c', 'refresh refused');
    const mine = new RouterState(3_600_000);
    mine.recordEvidence('a', allowed(2_000), 1_900);
    mine.setCooldown('b', { untilMs: 20_000, reason: 'throttle', setAtMs: 2_000 });
    mine.affinity.bind(K('s1'), 'a', 2_000);
    mine.affinity.bind(K('s2'), 'a', 3_000);
    assert.equal(mine.absorb(JSON.parse(JSON.stringify(other.toSaved(6_000))), 6_000), true);
    assert.equal(mine.snapshots.get('a')?.observedAtMs, 5_000);
    assert.equal(mine.cooldowns.get('b')?.untilMs, 90_000);
    assert.equal(mine.affinity.get(K('s1'), 6_000)?.account, 'b', 'served later by the other router');
    assert.equal(mine.affinity.get(K('s2'), 6_000)?.account, 'a', 'served later here');
    assert.equal(mine.needsSignIn.has('c'), false);
  });

  it('a state file of a version that kept raw session ids is converted on load: bindings by hash, the raw ids gone', () => {
    const raw = 'b3f0c7a2-5d1e-4c8b-9a6f-00000000abcd';
    const old = { version: 1, savedAtMs: 1_000, snapshots: {}, cooldowns: {}, needsSignIn: {}, bindings: [{ sessionId: raw, account: 'a', lastServedAtMs: 1_000 }] };
    for (const load of ['restore', 'replaceWith', 'absorb'] as const) {
      const s = new RouterState(3_600_000);
      assert.equal(s[load](old, 2_000), true);
      assert.equal(s.affinity.get(K(raw), 2_000)?.account, 'a', `${load}: the session keeps its account under its hash`);
      assert.equal(s.affinity.get(raw, 2_000), undefined, load);
      const saved = JSON.stringify(s.toSaved(2_000));
      assert.ok(!saved.includes(raw), `${load}: the next save holds no raw id`);
      assert.ok(saved.includes(K(raw)));
    }
  });

  it('replacing with a saved state drops what this copy had and the saved one does not', () => {
    const s = new RouterState(3_600_000);
    s.affinity.bind(K('stale'), 'a', 1_000);
    s.setCooldown('a', { untilMs: 50_000, reason: 'throttle', setAtMs: 1_000 });
    const saved = new RouterState(3_600_000);
    saved.affinity.bind(K('fresh'), 'b', 2_000);
    assert.equal(s.replaceWith(JSON.parse(JSON.stringify(saved.toSaved(2_000))), 2_000), true);
    assert.equal(s.affinity.get(K('stale'), 2_000), undefined);
    assert.equal(s.affinity.get(K('fresh'), 2_000)?.account, 'b');
    assert.equal(s.cooldowns.size, 0);
    assert.equal(s.replaceWith({ version: 2 }, 2_000), false, 'an unknown shape changes nothing');
    assert.equal(s.affinity.get(K('fresh'), 2_000)?.account, 'b');
  });
});
