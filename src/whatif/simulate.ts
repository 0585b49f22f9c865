/**
 * One policy replayed over a workload in virtual time: each request, in arrival order, is planned
 * by the product's own pure planner (`planRoute`, the code that routes live) from the world's
 * state at its arrival, tried down the plan as the attempt loop tries it (docs/routing.md#failures),
 * and served by the first account that takes it — which fills that account's windows and writes or
 * reads its prompt cache. Every decision goes to the report builder of src/routing/report.ts, so a
 * simulated run is measured exactly as a real log is. Pure. The model: docs/whatif.md.
 */
import { planCooldown } from '../quota/cooldown';
import { LearnedCosts, weightedTokens } from '../quota/learnedCosts';
import { SessionAffinityStore } from '../routing/affinity';
import { buildDecisionRecord, usageTokens, type AttemptRecord, type DecisionOutcome, type DecisionRecord, type UsageRecord } from '../routing/decision';
import { computeMetrics, type MetricsParams } from '../routing/metrics';
import { isEligible, planRoute, type PlanAccount, type RoutePlan } from '../routing/plan';
import { strategyFor } from '../routing/planner/strategies/registry';
import type { RoutingPolicy } from '../routing/policy';
import { ReportBuilder, type PolicyReport } from '../routing/report';
import { SessionWork } from '../routing/sessionWork';
import type { WeeklyReset } from '../routing/weeklyResets';
import { faultCooldown } from './faults';
import { VirtualLeases } from './leases';
import { WorldAccount } from './world';
import type { FaultKind, Workload, WorkloadRequest } from './workload';

/** A policy to replay: a routing policy, or `recorded` — every request under the policy it was recorded under. */
export interface SimPolicy {
  /** How the table names it (`fill-first:headroom-first`, a file name, …). */
  name: string;
  policy: Readonly<RoutingPolicy> | 'recorded';
}

/** What a replay gives. */
export interface SimulationResult {
  name: string;
  /** The seed's metrics over the simulated decisions; weekly resets are the world's own (with unused tokens). */
  report: PolicyReport;
}

export interface SimulateOptions {
  /** Receives each simulated decision as a full decision record (the workload generator writes logs with it). */
  onDecision?: (record: DecisionRecord) => void;
}

/** Server errors retried on other accounts before the request fails (src/proxy/pipeline/attempt.ts). */
const MAX_SERVER_ERROR_ROTATIONS = 2;

/** The HTTP status an attempt that met a fault of `kind` recorded. */
const FAULT_STATUS: Record<FaultKind, number> = { throttle: 429, overloaded: 529, server_error: 500, forbidden: 403 };

/** Replays `workload` under `sim`. Deterministic: the same workload and policy give the same result. */
export function simulate(workload: Workload, sim: SimPolicy, opts: SimulateOptions = {}): SimulationResult {
  const run = new Replay(workload, sim, opts);
  for (const req of workload.requests) run.request(req);
  return { name: sim.name, report: run.finish() };
}

class Replay {
  private readonly world: WorldAccount[];
  private readonly byLabel = new Map<string, WorldAccount>();
  private readonly leases = new VirtualLeases();
  private readonly report = new ReportBuilder();
  private readonly resets: WeeklyReset[] = [];
  private readonly affinity: SessionAffinityStore;
  /** What the router learns as it runs: window costs from the evidence, bound sessions' work (as live: src/proxy/state/routerState.ts). */
  private readonly learned = new LearnedCosts();
  private readonly work: SessionWork;
  private readonly onReset = (r: WeeklyReset) => this.resets.push(r);
  private cursor = 0;
  private affinityWasOn = false;

  constructor(
    private readonly workload: Workload,
    private readonly sim: SimPolicy,
    private readonly opts: SimulateOptions,
  ) {
    const faults = new Map<string, Workload['faults']>();
    for (const f of workload.faults) {
      let list = faults.get(f.account);
      if (!list) faults.set(f.account, (list = []));
      list.push(f);
    }
    this.world = workload.accounts.map((a) => new WorldAccount(a, workload.cacheTtlMs, faults.get(a.label) ?? []));
    for (const w of this.world) this.byLabel.set(w.label, w);
    const first = this.policyOf(workload.requests[0]);
    this.affinity = new SessionAffinityStore(first?.sessionAffinityIdleTtlMs ?? 3_600_000);
    this.work = new SessionWork(first?.sessionAffinityIdleTtlMs ?? 3_600_000);
    for (const s of workload.sessionStarts) {
      const w = this.byLabel.get(s.account);
      if (!w) continue;
      if (s.cachedTokens > 0) w.cache.commit(s.session, s.cachedTokens, s.atMs);
      if (s.bound && !w.fallback) this.affinity.bind(s.session, s.account, s.atMs);
    }
  }

  private policyOf(req: WorkloadRequest | undefined): Readonly<RoutingPolicy> | undefined {
    if (this.sim.policy !== 'recorded') return this.sim.policy;
    return req && this.workload.recordedPolicies[req.policyIndex];
  }

  request(req: WorkloadRequest): void {
    const t = req.atMs;
    this.leases.release(t);
    for (const w of this.world) w.roll(t, this.onReset);
    const policy = this.policyOf(req)!;
    const strategy = strategyFor(policy.strategy);
    const useAffinity = policy.sessionAffinity && strategy.bindsSessions;
    // As live: switching affinity off clears the bindings; a new idle TTL applies to those held.
    if (this.affinityWasOn && !policy.sessionAffinity) this.affinity.clear();
    this.affinityWasOn = policy.sessionAffinity;
    this.affinity.setIdleTtl(policy.sessionAffinityIdleTtlMs);
    this.work.setIdleTtl(policy.sessionAffinityIdleTtlMs);
    const forecasting = strategy.readsForecast === true;

    const params: MetricsParams = {
      sessionSoftLimit: policy.sessionSoftLimit,
      sessionResetToleranceMs: policy.sessionResetToleranceMs,
      allowOverage: policy.allowOverage,
      modelFamily: req.modelFamily,
    };
    const spec = this.workload.accounts;
    const accounts: PlanAccount[] = this.world.map((w, i) => {
      const cooldown = w.cooldownAt(t);
      return {
        id: w.label,
        index: spec[i].index,
        isPrimary: policy.primaryAccount === w.label,
        fallback: w.fallback,
        inflight: w.fallback ? 0 : w.inflight,
        metrics: computeMetrics({ snapshot: w.quota(t), cooldown }, params, t),
        cooldownReason: cooldown && cooldown.untilMs > t ? cooldown.reason : undefined,
        priority: spec[i].priority,
        costTier: spec[i].costTier,
        ...(forecasting && !w.fallback && this.forecastInputs(w, t)),
      };
    });
    const binding = useAffinity && req.session ? this.affinity.get(req.session, t) : undefined;
    const plan = planRoute({
      accounts,
      policy,
      sessionId: req.session,
      binding,
      roundRobinCursor: this.cursor++,
      requestId: req.requestId,
      nowMs: t,
      modelFamily: req.modelFamily,
      ...(forecasting && { sessionTokensPerMs: this.work.expectedRate(req.session), sessionHorizonMs: this.work.expectedLifeMs() }),
    });

    const attempts: AttemptRecord[] | undefined = this.opts.onDecision ? [] : undefined;
    const attempted = new Set<string>();
    let served: PlanAccount | undefined;
    let usage: UsageRecord | null = null;
    let gaveUp = false;
    let serverErrors = 0;
    const cap = policy.maxInflightPerAccount;
    for (const a of plan.order) {
      if (!a.metrics.usable) continue;
      const w = this.byLabel.get(a.id)!;
      if (cap > 0 && !a.fallback && w.inflight >= cap) continue;
      attempted.add(a.id);
      const fault = w.takeFault(t, req.requestId);
      if (fault) {
        w.coolDown(faultCooldown(fault.kind, fault.cooldownMs, t + fault.answerMs));
        attempts?.push({ account: a.id, status: FAULT_STATUS[fault.kind], result: fault.kind, ms: 0 });
        if (fault.kind === 'server_error' && serverErrors++ >= MAX_SERVER_ERROR_ROTATIONS) {
          gaveUp = true;
          break;
        }
        continue;
      }
      if (w.refuses()) {
        w.coolDown(planCooldown({ kind: 'window_exhausted', untilMs: w.refusalEndsAtMs(), windows: [] }, t)!);
        attempts?.push({ account: a.id, status: 429, result: 'window_exhausted', ms: 0 });
        continue;
      }
      // The answer's head brings the account's quota evidence as the router last saw it; then its usage counts.
      const evidence = a.fallback ? undefined : w.quota(t);
      if (evidence) this.learned.observe(a.id, evidence);
      usage = w.serve(req.session, req.promptTokens, req.tailTokens, req.outputTokens, t, t + req.headMs);
      attempts?.push({ account: a.id, status: 200, result: 'success', ms: req.headMs });
      if (!a.fallback) {
        const tokens = usageTokens(usage);
        this.leases.hold(w, t + req.durationMs, tokens);
        this.learned.served(a.id, tokens, req.modelFamily);
        if (req.session) this.work.served(req.session, a.id, weightedTokens(tokens), t);
      }
      served = a;
      break;
    }
    if (served && useAffinity) this.bind(req, plan, served, attempted, accounts, t);

    // Counted over the plan, as the decision record counts it (single-account offers one account).
    let usable = 0;
    for (const a of plan.order) if (!a.fallback && a.metrics.usable) usable++;
    const outcome: DecisionOutcome = served ? 'success' : gaveUp ? 'upstream_error' : 'no_usable_account';
    this.report.add({
      atMs: t,
      path: '/v1/messages',
      selectionReason: plan.selectionReason,
      outcome,
      servedBy: served?.id ?? null,
      servedByFallback: served?.fallback ?? false,
      stickyKeyHash: req.session,
      usableAccounts: usable,
      usage,
    });
    this.opts.onDecision?.(
      buildDecisionRecord(
        {
          ts: new Date(t).toISOString(),
          requestId: req.requestId,
          stickyKeySource: req.session ? 'header' : 'none',
          stickyKind: req.session ? 'session' : 'none',
          stickyKeyHash: req.session,
          path: '/v1/messages',
          model: req.model,
          stream: req.stream,
        },
        plan,
        policy,
        {
          servedBy: served?.id ?? null,
          servedByFallback: served?.fallback ?? false,
          attempts: attempts!,
          outcome,
          status: served ? 200 : gaveUp ? 500 : 429,
          usage,
          durationMs: served ? req.durationMs : 0,
        },
      ),
    );
  }

  /** What `forecast` reads of a world account at `t`: its reservations, learned costs and bound work (each only when there is some). */
  private forecastInputs(w: WorldAccount, t: number): Pick<PlanAccount, 'reserved' | 'learnedCosts' | 'boundWork'> {
    const learnedCosts = this.learned.costs(w.label);
    const boundWork = this.work.accountWork(w.label, t);
    return {
      ...(w.inflight > 0 && { reserved: { ...w.reserved } }),
      ...(learnedCosts && { learnedCosts }),
      ...(boundWork && { boundWork }),
    };
  }

  /** Binds the session to its serving account, as the router binds at commit (src/proxy/pipeline/bind.ts); an auxiliary request never binds. */
  private bind(req: WorkloadRequest, plan: RoutePlan, served: PlanAccount, attempted: ReadonlySet<string>, accounts: readonly PlanAccount[], t: number): void {
    if (!req.session || served.fallback || req.auxiliary === true) return;
    const bound = this.affinity.get(req.session, t);
    const reallocated = plan.affinity.skippedReason === 'over_sticky_threshold';
    if (bound && bound.account !== served.id && !reallocated && !attempted.has(bound.account)) {
      const b = accounts.find((a) => a.id === bound.account);
      if (b && isEligible(b.metrics)) {
        this.affinity.bind(req.session, bound.account, t);
        return;
      }
    }
    this.affinity.bind(req.session, served.id, t);
  }

  finish(): PolicyReport {
    for (const w of this.world) w.roll(this.workload.endMs, this.onReset);
    return this.report.finish(this.resets);
  }
}
