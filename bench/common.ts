/**
 * Shared helpers of the benchmarks: process accounting from /proc, percentiles, argument
 * parsing and the request bodies (a small one and a ~250 KB Claude-Code-shaped one).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

// ---- /proc accounting --------------------------------------------------------------------

let clkTck = 0;

/** Clock ticks per second of /proc/<pid>/stat (CLK_TCK, almost always 100). */
export function clockTicks(): number {
  if (clkTck) return clkTck;
  try {
    clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    clkTck = 100;
  }
  return clkTck;
}

/**
 * CPU time (user + system) the whole process has used so far, in microseconds, from
 * /proc/<pid>/stat fields 14 and 15 (every thread of the process: JS, GC, libuv pool).
 * Resolution is one clock tick (10 ms at CLK_TCK=100); measurement windows are long enough
 * that a tick is a few per cent at most.
 */
export function procCpuMicros(pid: number): number {
  const f = procStat(pid);
  return ((Number(f[STAT.utime]) + Number(f[STAT.stime])) * 1e6) / clockTicks();
}

/** Kernel-mode CPU time of a process so far, µs (/proc/<pid>/stat field 15, `stime`): syscalls such as the sockets' writev and reads. */
export function procSysMicros(pid: number): number {
  return (Number(procStat(pid)[STAT.stime]) * 1e6) / clockTicks();
}

/** Minor page faults of the process so far (/proc/<pid>/stat field 10). */
export function procMinorFaults(pid: number): number {
  return Number(procStat(pid)[STAT.minflt]);
}

/** Indexes into {@link procStat}'s fields (field 3, `state`, is index 0; proc(5) numbers them from 1). */
const STAT = { minflt: 7, utime: 11, stime: 12 } as const;

/** The fields of /proc/<pid>/stat after the command name (field 2, which may contain spaces), from field 3 on. */
function procStat(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** A value in kB from /proc/<pid>/status (`VmRSS`, `VmHWM`), or NaN. */
export function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/**
 * Resets the kernel's peak-RSS mark (VmHWM) of a process (`echo 5 > /proc/<pid>/clear_refs`),
 * so VmHWM afterwards is the peak of one measurement window. False when not permitted.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

// ---- statistics --------------------------------------------------------------------------

/** Nearest-rank percentile of an ascending array (p in 0..100); NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function sortedCopy(values: ArrayLike<number>): Float64Array {
  return Float64Array.from(values).sort();
}

/** The median (mean of the two middle values for an even count); NaN when empty. */
export function median(values: number[]): number {
  const s = sortedCopy(values);
  if (s.length === 0) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

// ---- arguments ---------------------------------------------------------------------------

/** `--name value` from argv, or the default. */
export function argValue(argv: string[], name: string, dflt?: string): string {
  const i = argv.indexOf(`--${name}`);
  if (i !== -1 && i + 1 < argv.length) return argv[i + 1];
  if (dflt === undefined) throw new Error(`missing --${name}`);
  return dflt;
}

// ---- request bodies ----------------------------------------------------------------------

/** The model every benchmark request asks for (the sim answers any model). */
export const BENCH_MODEL = 'claude-sonnet-4-5-20250929';

/** A small deterministic PRNG (mulberry32), so bodies are the same in every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  'const let return function async await import export interface type string number boolean undefined null if else for while switch case break continue throw try catch finally class extends implements new this super yield true false'.split(
    ' ',
  );

/** Source-code-looking text of about `bytes` characters (quotes, backslashes, tabs, some non-ASCII). */
function codeText(rand: () => number, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  let n = 0;
  while (size < bytes) {
    const indent = '  '.repeat(Math.floor(rand() * 4));
    const w = () => WORDS[Math.floor(rand() * WORDS.length)];
    let line: string;
    switch (n++ % 7) {
      case 0:
        line = `${indent}// ${w()} ${w()} ${w()} — handles the "${w()}" case ✓`;
        break;
      case 1:
        line = `${indent}const ${w()}${n} = await ${w()}("${w()}\\n", { path: 'src/${w()}/${w()}.ts', line: ${n} });`;
        break;
      case 2:
        line = `${indent}if (${w()} !== ${w()}) throw new Error(\`unexpected \${${w()}}\`);`;
        break;
      case 3:
        line = `${indent}\treturn ${w()}.map((x) => x.${w()} ?? ${Math.floor(rand() * 1e6)});`;
        break;
      default:
        line = `${indent}${w()} ${w()}(${w()}, ${w()}) { ${w()} = '${w()}\\\\${w()}'; }`;
    }
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

const TOOL_NAMES = ['Read', 'Edit', 'Write', 'Bash', 'Grep', 'Glob', 'TodoWrite', 'WebFetch', 'Task', 'NotebookEdit', 'MultiEdit', 'LS', 'WebSearch', 'ExitPlanMode'];

function toolDefinitions(rand: () => number, count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => ({
    name: TOOL_NAMES[i % TOOL_NAMES.length] + (i >= TOOL_NAMES.length ? String(i) : ''),
    description: codeText(rand, 1_400).replace(/\n/g, ' '),
    input_schema: {
      type: 'object',
      properties: {
        file_path: { type: 'string', description: 'The absolute path to the file' },
        offset: { type: 'number', description: 'The line number to start reading from' },
        limit: { type: 'number', description: 'The number of lines to read' },
        command: { type: 'string', description: 'The command to execute' },
      },
      required: ['file_path'],
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    },
  }));
}

export interface BodyOptions {
  stream: boolean;
  sessionId: string;
}

/**
 * A Claude-Code-shaped request body of about `targetBytes` (0 = the small body): `model` first,
 * system blocks with cache_control, tool definitions, a conversation of tool_use/tool_result
 * pairs, and `metadata` (the JSON user_id with the session id) last. Deterministic.
 */
export function claudeCodeBody(targetBytes: number, opts: BodyOptions): Buffer {
  const rand = prng(0xc1a0de);
  const userId = JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: opts.sessionId });
  const head = {
    model: BENCH_MODEL,
    max_tokens: targetBytes > 0 ? 32_000 : 1_024,
  };
  const tail = {
    metadata: { user_id: userId },
  };
  if (targetBytes <= 0) {
    // The small body: one user turn.
    return Buffer.from(
      JSON.stringify({
        ...head,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello in one short sentence.' }] }],
        system: [{ type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK." }],
        stream: opts.stream,
        ...tail,
      }),
    );
  }
  const system = [
    { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.328.593; cc_entrypoint=cli;' },
    { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral', ttl: '1h' } },
    { type: 'text', text: codeText(rand, 12_000), cache_control: { type: 'ephemeral', ttl: '1h' } },
  ];
  const tools = toolDefinitions(rand, 16);
  const messages: Array<{ role: string; content: unknown[] }> = [{ role: 'user', content: [{ type: 'text', text: 'Fix the failing test in src/proxy.' }] }];
  const build = () =>
    JSON.stringify({
      ...head,
      messages,
      system,
      tools,
      thinking: { type: 'adaptive', display: 'omitted' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'medium' },
      stream: opts.stream,
      ...tail,
    });
  // Tool_use / tool_result pairs until the body reaches the target size.
  for (let turn = 0; Buffer.byteLength(build()) < targetBytes - 3_000 && turn < 10_000; turn++) {
    const id = `toolu_01${Math.floor(rand() * 1e12)
      .toString(36)
      .padStart(20, 'x')}`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Let me look at file ${turn}.` },
        { type: 'tool_use', id, name: 'Read', input: { file_path: `/work/project/src/module${turn}.ts` } },
      ],
    });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: codeText(rand, 2_000 + Math.floor(rand() * 6_000)) }] });
  }
  const last = messages[messages.length - 1].content;
  (last[last.length - 1] as Record<string, unknown>).cache_control = { type: 'ephemeral', ttl: '1h' };
  return Buffer.from(build());
}

/** The headers Claude Code 2.1.328 sends besides content type and credentials (docs/claude-code-client.md). */
export function claudeCodeHeaders(sessionId: string): Record<string, string> {
  return {
    'anthropic-dangerous-direct-browser-access': 'true',
    'user-agent': 'claude-cli/2.1.328 (external, cli)',
    'x-app': 'cli',
    'x-stainless-lang': 'js',
    'x-stainless-runtime': 'node',
    'x-stainless-runtime-version': 'v26.12.1',
    'x-stainless-package-version': '0.128.0',
    'x-stainless-os': 'Linux',
    'x-stainless-arch': 'x64',
    'x-stainless-retry-count': '0',
    'x-stainless-timeout': '600',
    'accept-encoding': 'gzip, deflate, br, zstd',
    'x-claude-code-session-id': sessionId,
  };
}
