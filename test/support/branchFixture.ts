/**
 * Builds the synthetic decision log `test/fixtures/ranking-branches.jsonl`:
 * one recorded decision for every comparator branch of both rankings, made
 * by the real metrics, planner and record code. Run after `tsc`:
 *
 *   node out/test/support/branchFixture.js test/fixtures/ranking-branches.jsonl
 *
 * The committed file is the reference the replay test holds the ranking to.
 */
import { writeFileSync } from 'node:fs';
import type { Cooldown, QuotaSnapshot } from '../../src/quota/types';
import { stickyKeyHash } from '../../src/routing/identify';
import { computeMetrics } from '../../src/routing/metrics';
import { planRoute, type PlanAccount } from '../../src/routing/plan';
import { DEFAULT_POLICY, type RoutingPolicy } from '../../src/routing/policy';
import { buildDecisionRecord, type DecisionRecord } from '../../src/routing/decision';
import type { AccountRanking } from '../../src/routing/ranking';

const T0 = Date.UTC(2026, 9, 1, 12, 0, 0);
const H = 3_600_000;
const D = 24 * H;

interface Acct {
  snap?: Partial<Omit<QuotaSnapshot, 'scoped'>> & { scoped?: QuotaSnapshot['scoped'] };
  cooldownMs?: number;
  primary?: boolean;
}

function snapshot(p: Acct['snap']): QuotaSnapshot | undefined {
  if (!p) return undefined;
  return { observedAtMs: T0 - 60_000, source: 'headers', scoped: {}, ...p };
}

const win = (used: number, resetInMs: number, status = used >= 1 ? 'rejected' : 'allowed') => ({ utilization: used, resetAtMs: T0 + resetInMs, status });
const plain = (s = 0.3, sReset = 3 * H, w = 0.4, wReset = 3 * D) => ({ session: win(s, sReset), weekly: win(w, wReset) });

/** Branch cases: name, expected selection reason, accounts in configured order, model. */
interface Case {
  ranking: AccountRanking;
  expect: string;
  accounts: Acct[];
  model?: string;
}

const scoped = (used: number) => ({ sonnet: { ...win(used, 4 * D), observedAtMs: T0 - 60_000 } });
const cooldown = (ms: number): Cooldown => ({ untilMs: T0 + ms, reason: 'throttle', setAtMs: T0 - 1000 });

function commonCases(ranking: AccountRanking): Case[] {
  return [
    { ranking, expect: 'single_account', accounts: [{ snap: plain() }] },
    { ranking, expect: 'availability', accounts: [{ snap: plain(), cooldownMs: 60_000 }, { snap: plain() }] },
    {
      ranking,
      expect: 'cooldown_recovery',
      accounts: [
        { snap: plain(), cooldownMs: 10 * 60_000 },
        { snap: plain(), cooldownMs: 60_000 },
      ],
    },
    { ranking, expect: 'insertion_order', accounts: [{ snap: plain(0.3, 3 * H, 1.0, 2 * D) }, { snap: plain(0.3, 3 * H, 1.0, 1 * D) }] },
    { ranking, expect: 'quota_evidence', accounts: [{}, { snap: plain() }] },
    { ranking, expect: 'session_headroom', accounts: [{ snap: plain(0.98) }, { snap: plain(0.5) }] },
    { ranking, expect: 'scoped_headroom', model: 'claude-sonnet-4-5', accounts: [{ snap: { ...plain(), scoped: scoped(0.98) } }, { snap: { ...plain(), scoped: scoped(0.5) } }] },
    { ranking, expect: 'configured_primary', accounts: [{ snap: plain() }, { snap: plain(), primary: true }] },
    { ranking, expect: 'insertion_order', accounts: [{ snap: plain() }, { snap: plain() }] },
  ];
}

export const CASES: Case[] = [
  ...commonCases('expiry-first'),
  { ranking: 'expiry-first', expect: 'weekly_reset', accounts: [{ snap: plain(0.3, 3 * H, 0.4, 4 * D) }, { snap: plain(0.3, 3 * H, 0.4, 2 * D) }] },
  { ranking: 'expiry-first', expect: 'session_reset', accounts: [{ snap: plain(0.3, 4 * H, 0.4, 3 * D) }, { snap: plain(0.3, 1 * H, 0.4, 3 * D) }] },
  // Two session-saturated accounts: the 5h reset decides before the weekly reset.
  { ranking: 'expiry-first', expect: 'session_reset', accounts: [{ snap: plain(0.99, 4 * H, 0.4, 1 * D) }, { snap: plain(0.99, 1 * H, 0.4, 5 * D) }] },
  { ranking: 'expiry-first', expect: 'weekly_reset', accounts: [{ snap: plain(0.99, 2 * H, 0.4, 5 * D) }, { snap: plain(0.99, 2 * H, 0.4, 1 * D) }] },
  {
    ranking: 'expiry-first',
    expect: 'scoped_utilization',
    model: 'claude-sonnet-4-5',
    accounts: [{ snap: { ...plain(), scoped: scoped(0.2) } }, { snap: { ...plain(), scoped: scoped(0.6) } }],
  },
  { ranking: 'expiry-first', expect: 'weekly_utilization', accounts: [{ snap: plain(0.3, 3 * H, 0.2) }, { snap: plain(0.3, 3 * H, 0.7) }] },
  // Stale-but-known evidence ranks like fresh; a refresh_due snapshot ranks after both.
  {
    ranking: 'expiry-first',
    expect: 'quota_evidence',
    accounts: [{ snap: { ...plain(0.3, 3 * H, 1.0, 2 * D), observedAtMs: T0 - 20 * 60_000 } }, { snap: { ...plain(), observedAtMs: T0 - 20 * 60_000 } }],
  },
  ...commonCases('headroom-first'),
  { ranking: 'headroom-first', expect: 'headroom', accounts: [{ snap: plain(0.6, 3 * H, 0.3) }, { snap: plain(0.2, 3 * H, 0.3) }] },
  { ranking: 'headroom-first', expect: 'headroom', accounts: [{ snap: { session: win(0.1, 3 * H) } }, { snap: plain(0.5, 3 * H, 0.5) }] },
  { ranking: 'headroom-first', expect: 'weekly_reset', accounts: [{ snap: plain(0.3, 3 * H, 0.4, 4 * D) }, { snap: plain(0.3, 3 * H, 0.4, 2 * D) }] },
];

/** Runs one case through the real metrics, planner and record code. */
export function recordFor(c: Case, i: number): DecisionRecord {
  const labels = ['alpha', 'bravo', 'charlie'];
  const primary = c.accounts.findIndex((a) => a.primary);
  const policy: RoutingPolicy = { ...DEFAULT_POLICY, accountRanking: c.ranking, primaryAccount: primary >= 0 ? labels[primary] : undefined };
  const accounts: PlanAccount[] = c.accounts.map((a, index) => ({
    id: labels[index],
    index,
    isPrimary: index === primary,
    fallback: false,
    inflight: 0,
    metrics: computeMetrics(
      { snapshot: snapshot(a.snap), cooldown: a.cooldownMs ? cooldown(a.cooldownMs) : undefined },
      { sessionSoftLimit: policy.sessionSoftLimit, sessionResetToleranceMs: policy.sessionResetToleranceMs, allowOverage: false, modelFamily: c.model ? 'sonnet' : undefined },
      T0,
    ),
  }));
  const plan = planRoute({ accounts, policy, sessionId: `session-${i}`, binding: undefined, roundRobinCursor: 0 });
  return buildDecisionRecord(
    {
      ts: new Date(T0 + i * 1000).toISOString(),
      requestId: `req_fixture_${String(i).padStart(3, '0')}_${c.ranking}_${c.expect}`,
      stickyKeySource: 'header',
      stickyKind: 'session',
      stickyKeyHash: stickyKeyHash(`session-${i}`),
      path: '/v1/messages',
      model: c.model ?? 'claude-opus-4-1',
      stream: true,
    },
    plan,
    policy,
    { servedBy: plan.order[0]?.id ?? null, servedByFallback: false, attempts: [], outcome: 'success', status: 200, usage: null, durationMs: 0 },
  );
}

if (require.main === module) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: branchFixture.js <output.jsonl>');
  const records = CASES.map(recordFor);
  for (const [i, r] of records.entries()) {
    if (r.selectionReason !== CASES[i].expect) throw new Error(`case ${r.requestId}: got ${r.selectionReason}`);
  }
  writeFileSync(out, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  process.stdout.write(`wrote ${records.length} decisions to ${out}\n`);
}
