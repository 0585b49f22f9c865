/**
 * The cells of `npm run bench` (bench/run.ts) and the ones the regression rule watches
 * (docs/performance.md, "Judging a change"). A cell is a kind of answer × a request body ×
 * a concurrency; its id reads `kind/body/cN`, e.g. `json/small/c1`, `sse-burst/250KB/c32`.
 */

/** The answer the fake upstream gives: JSON, SSE in one burst, SSE events 1 ms apart. */
export type Kind = 'json' | 'sse-burst' | 'sse-1ms';
/** The request body: 0.4 KiB, or the ~250 KB (244 KiB) Claude-Code-shaped one. */
export type BodySize = 'small' | '250KB';

/** One benchmark cell; `c` is the number of requests in flight at once (closed loop). */
export interface Cell {
  kind: Kind;
  body: BodySize;
  c: number;
  id: string;
}

export const KINDS: Kind[] = ['json', 'sse-burst', 'sse-1ms'];
export const BODIES: BodySize[] = ['small', '250KB'];
export const CONCURRENCY = [1, 32, 256];
export const ALL_CELLS: Cell[] = KINDS.flatMap((kind) => BODIES.flatMap((body) => CONCURRENCY.map((c) => ({ kind, body, c, id: `${kind}/${body}/c${c}` }))));

/**
 * The cells the regression rule watches: a change to the request path may raise the CPU ratio
 * to the bare pass-through by at most +0.05 in each, and in the c=1 ones also the time-to-
 * completion ratio. JSON and SSE (burst) at 1 and 32 at a time with the small body, and the
 * SSE burst with the ~250 KB body at 1 at a time (the "251 KB" cell of issue 34's outside harness).
 */
export const RULE_CELLS: readonly string[] = ['json/small/c1', 'sse-burst/small/c1', 'json/small/c32', 'sse-burst/small/c32', 'sse-burst/250KB/c1'];

/** The word of BENCH_CELLS that stands for {@link RULE_CELLS}. */
export const RULE_WORD = 'rule';

/**
 * The cells a run measures, by BENCH_CELLS: a comma-separated list of strings, a cell taken
 * when its id contains one of them; the word `rule` stands for the rule's cells
 * ({@link RULE_CELLS}). An empty list takes every cell, or with a baseline build
 * (`withBaseline`) the rule's cells, since the alternation is for judging a change.
 * @param filter BENCH_CELLS as given (may be empty)
 * @returns the selected cells in the run's order (JSON, SSE burst, SSE 1 ms; small first; c ascending)
 */
export function selectCells(filter: string, withBaseline: boolean): Cell[] {
  const parts = filter
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (parts.length === 0 && withBaseline) parts.push(RULE_WORD);
  if (parts.length === 0) return ALL_CELLS;
  return ALL_CELLS.filter((c) => parts.some((f) => (f === RULE_WORD ? RULE_CELLS.includes(c.id) : c.id.includes(f))));
}

/** The concurrency of a cell id (`json/small/c32` → 32); NaN for an id not of that form. */
export function concurrencyOf(id: string): number {
  const m = /\/c(\d+)$/.exec(id);
  return m ? Number(m[1]) : NaN;
}
