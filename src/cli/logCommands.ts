/**
 * `claude-router report <decisions.jsonl…>` and
 * `claude-router replay <decisions.jsonl…> --ranking expiry-first [--all]`.
 */
import type { DecisionRecord } from '../routing/decision';
import { readDecisionRecord } from '../routing/decisionRead';
import { computeReport, formatReport } from '../routing/report';
import { replayDecisions } from '../routing/replay';
import { UsageError } from './args';
import { LogReadError, readLogLines, tooLongText } from './logFile';

/**
 * Reads JSONL decision logs (schema version 1 or 2, see readDecisionRecord), streamed line by line;
 * lines that are not decision records are counted, not fatal. A line over the length cap is
 * skipped unread, and the first one is named in a warning on standard error.
 * @throws UsageError when a file cannot be read, or the files hold no decision record at all
 */
export async function readDecisionLogs(files: readonly string[]): Promise<{ records: DecisionRecord[]; badLines: number }> {
  const records: DecisionRecord[] = [];
  let badLines = 0;
  let warned = false;
  for (const file of files) {
    try {
      for await (const line of readLogLines(file)) {
        if (line.text === null) {
          badLines++;
          if (!warned) process.stderr.write(`claude-router: ${file}:${line.n}: ${tooLongText(line)}, skipped\n`);
          warned = true;
          continue;
        }
        if (!line.text.trim()) continue;
        try {
          const r = readDecisionRecord(JSON.parse(line.text));
          if (r) records.push(r);
          else badLines++;
        } catch {
          badLines++;
        }
      }
    } catch (err) {
      if (err instanceof LogReadError) throw new UsageError(err.message);
      throw err;
    }
  }
  if (records.length === 0) {
    throw new UsageError(`no decision records in ${files.join(', ')}${badLines ? ` (${badLines} line(s) that are not decision records)` : ' (empty)'}`);
  }
  return { records, badLines };
}

export async function runReport(positionals: string[], values: { json?: boolean }): Promise<number> {
  if (positionals.length === 0) throw new UsageError('report <decisions.jsonl> [more files…] [--json]');
  const { records, badLines } = await readDecisionLogs(positionals);
  const report = computeReport(records);
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : formatReport(report));
  if (badLines) process.stderr.write(`skipped ${badLines} line(s) that are not decision records\n`);
  return 0;
}

export async function runReplay(positionals: string[], values: { ranking?: string; all?: boolean }): Promise<number> {
  const ranking = values.ranking ?? 'expiry-first';
  if (ranking !== 'expiry-first' && ranking !== 'headroom-first') throw new UsageError('--ranking: expiry-first or headroom-first');
  if (positionals.length === 0) throw new UsageError('replay <decisions.jsonl> [more files…] --ranking expiry-first [--all]');
  const { records, badLines } = await readDecisionLogs(positionals);
  const result = replayDecisions(records, ranking, values.all ?? false);
  for (const d of result.differences) {
    process.stdout.write(`${d.ts} ${d.requestId}: recorded ${d.recorded.join(' > ')} | replayed ${d.replayed.join(' > ')}\n`);
  }
  process.stdout.write(`compared: ${result.compared}, skipped: ${result.skipped}${badLines ? `, unreadable lines: ${badLines}` : ''}\n`);
  process.stdout.write(`differences: ${result.differences.length}\n`);
  return result.differences.length === 0 ? 0 : 1;
}
