/**
 * Judging a change against another build of the CLI (BENCH_BASELINE, docs/performance.md,
 * "Judging a change"): the proxy, the bare pass-through and the baseline build are measured in
 * adjacent windows of every round (proxy, bare, baseline; the next round reversed), so each
 * round gives one difference of the two builds' ratios to the same bare windows. bench/run.ts
 * prints one verdict per cell and measure from one run; bench/pool.ts pools the rounds of
 * several runs' BENCH_JSON files. Both read the rounds through {@link roundChanges}.
 */
import { median } from './common';
import { concurrencyOf } from './cells';

/** Most a change may raise a watched ratio to the bare pass-through (ratio units: +0.05 = five hundredths of the bare's figure). */
export const CHANGE_BUDGET = 0.05;

/**
 * The per-round figures of one target in one cell that a change is judged on: a subset of
 * run.ts's Stats, and what each `cells[id].stats[]` entry of a BENCH_JSON file holds.
 */
export interface RoundFigures {
  target: string;
  /** Failed requests over all rounds; any makes the cell's verdict a FAIL and pool.ts skip it. */
  errors: number;
  /** CPU per request (user + kernel), µs, one value per round. */
  cpuUsPerReqRounds: number[];
  /** Its kernel-mode part, µs per request, per round (absent in files older than the split). */
  kernelUsPerReqRounds?: number[];
  /** Time to completion p50 of each round's window, ms. */
  totalP50Rounds?: number[];
}

/** What a change is judged on: CPU per request, or (at concurrency 1) the time to completion p50; both as ratios to the bare's. */
export type Measure = 'cpu' | 'ttc';

export const MEASURE_LABEL: Record<Measure, string> = { cpu: 'CPU ratio', ttc: 'time-to-completion p50 ratio' };

/** The measures judged in a cell: the CPU ratio everywhere, and the time-to-completion ratio at concurrency 1 (the latency a single session feels). */
export function measuresOf(cellId: string): Measure[] {
  return concurrencyOf(cellId) === 1 ? ['cpu', 'ttc'] : ['cpu'];
}

/** One cell and measure's rounds: each build's ratio to the bare per round, and their differences (proxy − baseline). */
export interface RoundChanges {
  mine: number[];
  theirs: number[];
  diffs: number[];
  /** CPU only: the kernel-mode part of each difference, in the same unit (bare CPU per request of the round); empty when not recorded. */
  kernel: number[];
  /** True when a target had failed requests (the figures are then not a verdict). */
  errors: boolean;
}

/**
 * The per-round ratio differences of `measure` in one cell's figures, or undefined when the cell
 * has no baseline (or no such rounds). Rounds are paired by index; a round missing in one target
 * ends the pairing there.
 */
export function roundChanges(stats: readonly RoundFigures[], measure: Measure): RoundChanges | undefined {
  const of = (name: string) => stats.find((s) => s.target === name);
  const [p, b, l] = [of('proxy'), of('bare'), of('baseline')];
  if (!p || !b || !l) return undefined;
  const pick = (s: RoundFigures) => (measure === 'cpu' ? s.cpuUsPerReqRounds : (s.totalP50Rounds ?? []));
  const [pv, bv, lv] = [pick(p), pick(b), pick(l)];
  const n = Math.min(pv.length, bv.length, lv.length);
  if (n === 0) return undefined;
  const mine: number[] = [];
  const theirs: number[] = [];
  const kernel: number[] = [];
  const [pk, lk] = [p.kernelUsPerReqRounds ?? [], l.kernelUsPerReqRounds ?? []];
  for (let i = 0; i < n; i++) {
    mine.push(pv[i] / bv[i]);
    theirs.push(lv[i] / bv[i]);
    if (measure === 'cpu' && i < pk.length && i < lk.length) kernel.push((pk[i] - lk[i]) / bv[i]);
  }
  return { mine, theirs, diffs: mine.map((r, i) => r - theirs[i]), kernel: kernel.length === n ? kernel : [], errors: p.errors + b.errors + l.errors > 0 };
}

/** A PASS/FAIL line of run.ts. */
export interface ChangeVerdict {
  pass: boolean;
  text: string;
}

const sign = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)}`;

function verdictLine(cellId: string, measure: Measure, r: RoundChanges): ChangeVerdict {
  const change = median(r.diffs);
  const where = cellId.replace(/\//g, ' ').replace(/ c(\d+)$/, ' c=$1');
  let text =
    `${MEASURE_LABEL[measure]} change ≤ +${CHANGE_BUDGET} against the baseline · ${where}: ${sign(change)} ` +
    `(median of the rounds' differences ${r.diffs.map(sign).join('/')}); proxy ${median(r.mine).toFixed(2)}× vs baseline ${median(r.theirs).toFixed(2)}× the bare's (medians of rounds)`;
  // Where a CPU change lies: in the process's own code (user mode) or in its syscalls (kernel mode), as the same round differences.
  if (r.kernel.length) text += `; of which user mode ${sign(median(r.diffs.map((d, i) => d - r.kernel[i])))}, kernel mode ${sign(median(r.kernel))}`;
  if (r.errors) text += '; NOT A VERDICT: failed requests';
  return { pass: change <= CHANGE_BUDGET && !r.errors, text };
}

/**
 * One verdict line per cell with a baseline and per measure of it ({@link measuresOf}): the
 * median of the rounds' differences against {@link CHANGE_BUDGET}, the rounds' differences, each
 * build's median ratio and, for CPU, the user/kernel split.
 * @param results the figures of each measured cell, by cell id, in the order measured
 */
export function changeVerdicts(results: ReadonlyMap<string, readonly RoundFigures[]>): ChangeVerdict[] {
  const out: ChangeVerdict[] = [];
  for (const [id, stats] of results)
    for (const measure of measuresOf(id)) {
      const r = roundChanges(stats, measure);
      if (r) out.push(verdictLine(id, measure, r));
    }
  return out;
}

/**
 * The order of a cell's targets in its first round (the next round runs it reversed). With a
 * baseline the two builds sit on either side of the bare pass-through — proxy, bare, baseline —
 * so each build's window is adjacent to a bare one; without one: bare, proxy.
 */
export function alternationOrder<T>(t: { direct: T; bare: T; proxy: T; store?: T; baseline?: T }): T[] {
  const store = t.store ? [t.store] : [];
  return t.baseline ? [t.direct, ...store, t.proxy, t.bare, t.baseline] : [t.direct, t.bare, t.proxy, ...store];
}

/** The baseline build's configuration: the proxy's YAML with its own state directory (absolute path). */
export function baselineConfigYaml(proxyYaml: string, stateDir: string): string {
  return proxyYaml.replace(/^state-dir: .*$/m, `state-dir: ${JSON.stringify(stateDir)}`);
}
