/**
 * Pools the rounds of several paired runs (`BENCH_BASELINE=… BENCH_JSON=FILE node out/bench/run.js`)
 * into one judgement per watched figure of the change against the baseline: a single run's verdict
 * moves by about ±0.07, runs of one pair of builds by up to 0.18 (docs/performance.md, "Judging a
 * change"), so a change near the +0.05 budget is judged on the rounds of several runs together.
 *
 *   node out/bench/pool.js RUN.json [RUN.json …]
 *
 * Per cell with a baseline it judges the CPU ratio and, in the c=1 cells, the time-to-completion
 * p50 ratio (bench/alternation.ts). For each it prints the number of rounds, the median of their
 * differences (proxy ÷ bare − baseline ÷ bare, each round's three windows adjacent in time), a 90 %
 * bootstrap interval of that median (4,000 resamples, seeded: the same files give the same
 * interval), the share of rounds in which the proxy was dearer, for CPU the kernel-mode part of
 * the median, and the verdict: PASS when the interval's upper end is within the budget, NEAR when
 * only the median is, FAIL otherwise. Exit status 1 when a file cannot be read or holds no
 * baseline rounds.
 */
import * as fs from 'node:fs';
import { median, prng, sortedCopy } from './common';
import { CHANGE_BUDGET, MEASURE_LABEL, measuresOf, roundChanges, type Measure, type RoundFigures } from './alternation';

const RESAMPLES = 4000;

/** One cell and measure's rounds pooled from the files read so far. */
export interface PooledRounds {
  cell: string;
  measure: Measure;
  diffs: number[];
  /** CPU: the kernel-mode part of each difference (empty when a file did not record it). */
  kernel: number[];
}

/**
 * The per-round ratio differences of each cell with a baseline in one BENCH_JSON file, by
 * `cell measure` (e.g. `json/small/c1 ttc`). Cells with failed requests are left out (run.ts
 * fails such a verdict too).
 * @throws Error naming the file when it cannot be read, is not JSON, or is not a bench JSON
 */
export function roundDifferences(file: string): Map<string, PooledRounds> {
  let json: { cells?: Record<string, { stats?: RoundFigures[] }> };
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof json;
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`, { cause: err });
  }
  if (!json?.cells) throw new Error(`${file}: not a BENCH_JSON file of out/bench/run.js (no "cells")`);
  const out = new Map<string, PooledRounds>();
  for (const [id, cell] of Object.entries(json.cells))
    for (const measure of measuresOf(id)) {
      const r = roundChanges(cell.stats ?? [], measure);
      if (r && !r.errors) out.set(`${id} ${measure}`, { cell: id, measure, diffs: r.diffs, kernel: r.kernel });
    }
  return out;
}

/** The pooled judgement of one cell's differences (ratio units, e.g. +0.03). */
export interface Pooled {
  rounds: number;
  median: number;
  /** The 90 % bootstrap interval of the median: [5th, 95th] percentile of the resampled medians. */
  low: number;
  high: number;
  /** Fraction (0–1) of rounds in which the proxy's ratio was higher than the baseline's. */
  dearer: number;
}

/** Median and bootstrap interval of `diffs` (non-empty). */
export function pool(diffs: number[]): Pooled {
  const random = prng(12345);
  const medians = new Float64Array(RESAMPLES);
  const sample = new Array<number>(diffs.length);
  for (let r = 0; r < RESAMPLES; r++) {
    for (let i = 0; i < diffs.length; i++) sample[i] = diffs[Math.floor(random() * diffs.length)];
    medians[r] = median(sample);
  }
  const sorted = sortedCopy(medians);
  return {
    rounds: diffs.length,
    median: median(diffs),
    low: sorted[Math.floor(0.05 * RESAMPLES)],
    high: sorted[Math.floor(0.95 * RESAMPLES)],
    dearer: diffs.filter((d) => d > 0).length / diffs.length,
  };
}

function main(files: string[]): number {
  if (files.length === 0) {
    process.stderr.write('usage: node out/bench/pool.js RUN.json [RUN.json …]   (files written by BENCH_JSON with BENCH_BASELINE set)\n');
    return 1;
  }
  const byCell = new Map<string, PooledRounds>();
  for (const f of files) {
    try {
      for (const [key, r] of roundDifferences(f)) {
        const held = byCell.get(key);
        // The kernel part is pooled only while every file recorded it for every round.
        if (held) byCell.set(key, { ...held, diffs: [...held.diffs, ...r.diffs], kernel: held.kernel.length && r.kernel.length ? [...held.kernel, ...r.kernel] : [] });
        else byCell.set(key, r);
      }
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      return 1;
    }
  }
  if (byCell.size === 0) {
    process.stderr.write('no cell with a baseline in these files: run them with BENCH_BASELINE set\n');
    return 1;
  }
  for (const r of byCell.values()) process.stdout.write(`${pooledLine(r, files.length)}\n`);
  return 0;
}

const sign = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(3)}`;

/** The verdict line of one cell and measure: PASS when the interval's upper end is within the budget, NEAR when the median is, else FAIL. */
function pooledLine(r: PooledRounds, runs: number): string {
  const p = pool(r.diffs);
  const verdict = p.high <= CHANGE_BUDGET ? 'PASS' : p.median <= CHANGE_BUDGET ? 'NEAR' : 'FAIL';
  const kernel = r.kernel.length === r.diffs.length ? `; kernel mode ${sign(median(r.kernel))} (median of the rounds' kernel-mode parts)` : '';
  return (
    `${verdict}  ${MEASURE_LABEL[r.measure]} change ≤ +${CHANGE_BUDGET} · ${r.cell}: ${sign(p.median)} over ${p.rounds} rounds of ${runs} run(s), ` +
    `90 % interval ${sign(p.low)} to ${sign(p.high)}; the proxy dearer in ${(100 * p.dearer).toFixed(0)} % of rounds${kernel}`
  );
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
