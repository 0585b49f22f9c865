/**
 * Pools the rounds of several paired runs (`BENCH_BASELINE=… BENCH_JSON=FILE node out/bench/run.js`)
 * into one judgement of the c=32 CPU ratio change against the baseline: a single run's verdict
 * moves by about ±0.07, runs of one pair of builds by up to 0.18 (docs/performance.md, "Judging a
 * change"), so a change near the +0.05 budget is judged on the rounds of several runs together.
 *
 *   node out/bench/pool.js RUN.json [RUN.json …]
 *
 * Per cell it prints the number of rounds, the median of their differences (proxy ÷ bare −
 * baseline ÷ bare, each round's three windows adjacent in time), a 90 % bootstrap interval of that
 * median (4,000 resamples, seeded: the same files give the same interval), the share of rounds in
 * which the proxy was dearer, and the verdict: within the budget when the interval's upper end is.
 * Exit status 1 when a file cannot be read or holds no baseline rounds.
 */
import * as fs from 'node:fs';
import { median, prng, sortedCopy } from './common';

/** The budget for the CPU ratio change (docs/performance.md; run.ts judges one run by it). */
const BUDGET = 0.05;
const RESAMPLES = 4000;

interface TargetStats {
  target: string;
  cpuUsPerReqRounds: number[];
  errors: number;
}

/**
 * The per-round CPU ratio differences of each c=32 cell with a baseline in one BENCH_JSON file, by
 * cell id. Rounds of a target with errors are left out (run.ts fails such a verdict too).
 * @throws Error naming the file when it cannot be read, is not JSON, or is not a bench JSON
 */
export function roundDifferences(file: string): Map<string, number[]> {
  let json: { cells?: Record<string, { stats?: TargetStats[] }> };
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof json;
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`, { cause: err });
  }
  if (!json?.cells) throw new Error(`${file}: not a BENCH_JSON file of out/bench/run.js (no "cells")`);
  const out = new Map<string, number[]>();
  for (const [id, cell] of Object.entries(json.cells)) {
    const of = (name: string) => cell.stats?.find((s) => s.target === name);
    const [p, b, l] = [of('proxy'), of('bare'), of('baseline')];
    if (!p || !b || !l || p.errors + b.errors + l.errors > 0) continue;
    out.set(
      id,
      p.cpuUsPerReqRounds.map((v, i) => v / b.cpuUsPerReqRounds[i] - l.cpuUsPerReqRounds[i] / b.cpuUsPerReqRounds[i]),
    );
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
  const byCell = new Map<string, number[]>();
  for (const f of files) {
    try {
      for (const [id, d] of roundDifferences(f)) byCell.set(id, [...(byCell.get(id) ?? []), ...d]);
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      return 1;
    }
  }
  if (byCell.size === 0) {
    process.stderr.write('no cell with a baseline in these files: run them with BENCH_BASELINE set\n');
    return 1;
  }
  const sign = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(3)}`;
  for (const [id, diffs] of byCell) {
    const p = pool(diffs);
    const verdict = p.high <= BUDGET ? 'PASS' : p.median <= BUDGET ? 'NEAR' : 'FAIL';
    process.stdout.write(
      `${verdict}  CPU ratio change ≤ +${BUDGET} · ${id}: ${sign(p.median)} over ${p.rounds} rounds of ${files.length} run(s), ` +
        `90 % interval ${sign(p.low)} to ${sign(p.high)}; the proxy dearer in ${(100 * p.dearer).toFixed(0)} % of rounds\n`,
    );
  }
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
