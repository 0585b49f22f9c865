/**
 * `claude-router report <decisions.jsonl…>` and
 * `claude-router replay <decisions.jsonl…> --ranking expiry-first [--all]`.
 */
import { readFileSync } from 'node:fs';
import type { DecisionRecord } from '../routing/decision';
import { readDecisionRecord } from '../routing/decisionRead';
import { computeReport, formatReport } from '../routing/report';
import { replayDecisions } from '../routing/replay';
import { UsageError } from './args';

const READ_ERRORS: Record<string, string> = { ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'it is a directory' };

/**
 * Reads JSONL decision logs (schema version 1 or 2, see readDecisionRecord); lines that are not
 * decision records are counted, not fatal.
 * @throws UsageError when a file cannot be read, or the files hold no decision record at all
 */
export function readDecisionLogs(files: readonly string[]): { records: DecisionRecord[]; badLines: number } {
  const records: DecisionRecord[] = [];
  let badLines = 0;
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UsageError(`cannot read ${file}: ${(code && READ_ERRORS[code]) ?? code ?? (err as Error).message}`);
    }
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const r = readDecisionRecord(JSON.parse(line));
        if (r) records.push(r);
        else badLines++;
      } catch {
        badLines++;
      }
    }
  }
  if (records.length === 0) {
    throw new UsageError(`no decision records in ${files.join(', ')}${badLines ? ` (${badLines} line(s) that are not decision records)` : ' (empty)'}`);
  }
  return { records, badLines };
}

export function runReport(positionals: string[], values: { json?: boolean }): number {
  if (positionals.length === 0) throw new UsageError('report <decisions.jsonl> [more files…] [--json]');
  const { records, badLines } = readDecisionLogs(positionals);
  const report = computeReport(records);
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : formatReport(report));
  if (badLines) process.stderr.write(`skipped ${badLines} line(s) that are not decision records\n`);
  return 0;
}

export function runReplay(positionals: string[], values: { ranking?: string; all?: boolean }): number {
  const ranking = values.ranking ?? 'expiry-first';
  if (ranking !== 'expiry-first' && ranking !== 'headroom-first') throw new UsageError('--ranking: expiry-first or headroom-first');
  if (positionals.length === 0) throw new UsageError('replay <decisions.jsonl> [more files…] --ranking expiry-first [--all]');
  const { records, badLines } = readDecisionLogs(positionals);
  const result = replayDecisions(records, ranking, values.all ?? false);
  for (const d of result.differences) {
    process.stdout.write(`${d.ts} ${d.requestId}: recorded ${d.recorded.join(' > ')} | replayed ${d.replayed.join(' > ')}\n`);
  }
  process.stdout.write(`compared: ${result.compared}, skipped: ${result.skipped}${badLines ? `, unreadable lines: ${badLines}` : ''}\n`);
  process.stdout.write(`differences: ${result.differences.length}\n`);
  return result.differences.length === 0 ? 0 : 1;
}
