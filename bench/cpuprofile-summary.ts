/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`) by self time: the top functions and the
 * top source files, with bundled locations (dist/cli.js) mapped back to src/ through the bundle's
 * source map. Also reads a `.heapprofile` (allocation sampling, e.g. from bench/allocprof.cjs):
 * bytes allocated by function, self and inclusive.
 *
 *   node out/bench/cpuprofile-summary.js FILE.cpuprofile|FILE.heapprofile [--top N] [--requests N]
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface SelfTimeRow {
  name: string;
  where: string;
  ms: number;
  pct: number;
}

const maps = new Map<string, SourceMap | null>();

function sourceMapFor(url: string): SourceMap | null {
  if (maps.has(url)) return maps.get(url)!;
  let map: SourceMap | null = null;
  try {
    const file = url.startsWith('file:') ? fileURLToPath(url) : url;
    if (file.endsWith('.js') && existsSync(`${file}.map`)) map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
  } catch {
    map = null;
  }
  maps.set(url, map);
  return map;
}

function locate(cf: CallFrame): string {
  if (!cf.url) return '';
  const map = sourceMapFor(cf.url);
  if (map && cf.lineNumber >= 0) {
    const e = map.findEntry(cf.lineNumber, Math.max(0, cf.columnNumber)) as { originalSource?: string; originalLine?: number };
    if (e && e.originalSource) {
      const src = e.originalSource.replace(/^.*?(node_modules\/|src\/)/, '$1');
      return `${src}:${(e.originalLine ?? 0) + 1}`;
    }
  }
  const u = cf.url.replace(/^file:\/\//, '');
  return `${u.startsWith('/') ? path.relative(process.cwd(), u) : u}:${cf.lineNumber + 1}`;
}

/**
 * Self time per function (by name and mapped location) and per source file; and inclusive time
 * (samples with the function anywhere on the stack) of functions whose location matches
 * `inclusiveOf` (default: the product's src/). All in ms.
 */
export function summarise(
  file: string,
  top = 20,
  inclusiveOf: RegExp = /^src\//,
): { totalMs: number; functions: SelfTimeRow[]; files: SelfTimeRow[]; inclusive: SelfTimeRow[]; categories: SelfTimeRow[] } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  const fn = new Map<string, { name: string; where: string; us: number }>();
  const files = new Map<string, number>();
  const categories = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const cf = byId.get(id)!.callFrame;
    if (cf.functionName === '(idle)') continue;
    total += us;
    const where = locate(cf);
    const name = cf.functionName || '(anonymous)';
    const key = `${name}@${where}`;
    const row = fn.get(key) ?? { name, where, us: 0 };
    row.us += us;
    fn.set(key, row);
    const fileKey = where ? where.replace(/:\d+$/, '') : name;
    files.set(fileKey, (files.get(fileKey) ?? 0) + us);
    const cat = category(name, where);
    categories.set(cat, (categories.get(cat) ?? 0) + us);
  }
  // Inclusive: walk each sampled node's ancestors once, counting each function once per stack.
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = new Map<number, { key: string; name: string; where: string } | null>();
  const nodeKey = (id: number) => {
    if (!keyOf.has(id)) {
      const cf = byId.get(id)!.callFrame;
      const where = locate(cf);
      keyOf.set(id, inclusiveOf.test(where) ? { key: `${cf.functionName || '(anonymous)'}@${where}`, name: cf.functionName || '(anonymous)', where } : null);
    }
    return keyOf.get(id)!;
  };
  const incl = new Map<string, { name: string; where: string; us: number }>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = nodeKey(cur);
      if (!k || seen.has(k.key)) continue;
      seen.add(k.key);
      const row = incl.get(k.key) ?? { name: k.name, where: k.where, us: 0 };
      row.us += us;
      incl.set(k.key, row);
    }
  }
  const rows = (list: Array<{ name: string; where: string; us: number }>) =>
    list
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((r) => ({ name: r.name, where: r.where, ms: r.us / 1000, pct: (100 * r.us) / total }));
  return {
    totalMs: total / 1000,
    functions: rows([...fn.values()]),
    files: rows([...files].map(([where, us]) => ({ name: where, where: '', us }))),
    inclusive: rows([...incl.values()]),
    categories: rows([...categories].map(([name, us]) => ({ name, where: '', us }))),
  };
}

/** Coarse owner of a sample: GC, native code (syscalls, copies), node internals, a package, a src/ folder. */
function category(name: string, where: string): string {
  if (name === '(garbage collector)') return 'garbage collector';
  if (name === '(program)') return '(program: VM, not attributed)';
  if (where.startsWith('wasm://')) return 'package undici (llhttp, wasm)';
  if (!where) return 'native (syscalls such as writev, string/buffer copies, crypto)';
  if (where.startsWith('node:')) return 'node internals (http, net, streams, events, fs)';
  const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where);
  if (pkg) return `package ${pkg[1]}`;
  const dir = /^src\/([^/]+)\//.exec(where);
  if (dir) return `src/${dir[1]}`;
  return where.replace(/:\d+$/, '');
}

/** `requests`: how many requests the process served while profiled (adds a µs/request column to the owners). */
export function formatSummary(title: string, s: ReturnType<typeof summarise>, requests?: number): string {
  const per = (ms: number) => (requests ? `${((ms * 1000) / requests).toFixed(0).padStart(6)} µs/req  ` : '');
  const lines = [
    `${title}: ${s.totalMs.toFixed(0)} ms of non-idle samples${requests ? ` over ${requests} requests = ${((s.totalMs * 1000) / requests).toFixed(0)} µs/req (sampled wall time on the JS thread)` : ''}`,
    '  self ms    %   by owner',
  ];
  for (const r of s.categories) lines.push(`  ${r.ms.toFixed(1).padStart(7)} ${r.pct.toFixed(1).padStart(5)}  ${per(r.ms)}${r.name}`);
  lines.push('  self ms    %   function  (location)');
  for (const r of s.functions) lines.push(`  ${r.ms.toFixed(1).padStart(7)} ${r.pct.toFixed(1).padStart(5)}  ${r.name}  ${r.where}`);
  lines.push('  self time by file:');
  for (const r of s.files.slice(0, 12)) lines.push(`  ${r.ms.toFixed(1).padStart(7)} ${r.pct.toFixed(1).padStart(5)}  ${r.name}`);
  if (s.inclusive.length) {
    lines.push('  inclusive time (on the stack) of src/ functions:');
    for (const r of s.inclusive) lines.push(`  ${r.ms.toFixed(1).padStart(7)} ${r.pct.toFixed(1).padStart(5)}  ${r.name}  ${r.where}`);
  }
  return lines.join('\n');
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children?: HeapNode[];
}

/** Allocation profile: bytes by function (self) and by src/ function (inclusive). */
export function summariseAllocations(file: string, top = 20): { totalMb: number; self: SelfTimeRow[]; inclusive: SelfTimeRow[] } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };
  const self = new Map<string, { name: string; where: string; us: number }>();
  const incl = new Map<string, { name: string; where: string; us: number }>();
  let total = 0;
  const walk = (n: HeapNode, onStack: Set<string>): number => {
    const where = locate(n.callFrame);
    const name = n.callFrame.functionName || '(anonymous)';
    const key = `${name}@${where}`;
    total += n.selfSize;
    const row = self.get(key) ?? { name, where, us: 0 };
    row.us += n.selfSize;
    self.set(key, row);
    const fresh = !onStack.has(key);
    if (fresh) onStack.add(key);
    let sub = n.selfSize;
    for (const c of n.children ?? []) sub += walk(c, onStack);
    if (fresh) {
      onStack.delete(key);
      if (/^src\//.test(where)) {
        const r = incl.get(key) ?? { name, where, us: 0 };
        r.us += sub;
        incl.set(key, r);
      }
    }
    return sub;
  };
  walk(p.head, new Set());
  const rows = (list: Array<{ name: string; where: string; us: number }>) =>
    list
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((r) => ({ name: r.name, where: r.where, ms: r.us / 1048576, pct: (100 * r.us) / total }));
  return { totalMb: total / 1048576, self: rows([...self.values()]), inclusive: rows([...incl.values()]) };
}

export function formatAllocations(title: string, s: ReturnType<typeof summariseAllocations>, requests?: number): string {
  const lines = [
    `${title}: ${s.totalMb.toFixed(1)} MB allocated (sampled)${requests ? `, ${((s.totalMb * 1024) / requests).toFixed(1)} KB per request over ${requests} requests` : ''}`,
    '     MB     %   allocating function (self)',
  ];
  for (const r of s.self) lines.push(`  ${r.ms.toFixed(1).padStart(6)} ${r.pct.toFixed(1).padStart(5)}  ${r.name}  ${r.where}`);
  lines.push('  inclusive (allocations under) src/ functions:');
  for (const r of s.inclusive) lines.push(`  ${r.ms.toFixed(1).padStart(6)} ${r.pct.toFixed(1).padStart(5)}  ${r.name}  ${r.where}`);
  return lines.join('\n');
}

// Entry point only when run as out/bench/cpuprofile-summary.js (run.ts bundles this module too).
if (/cpuprofile-summary\.js$/.test(process.argv[1] ?? '')) {
  const args = process.argv.slice(2);
  const file = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
  if (!file) {
    process.stderr.write('usage: node out/bench/cpuprofile-summary.js FILE.cpuprofile|FILE.heapprofile [--top N] [--requests N]\n');
    process.exit(2);
  }
  const opt = (name: string) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : undefined);
  const top = opt('--top') ?? 25;
  const requests = opt('--requests');
  process.stdout.write(
    (file.endsWith('.heapprofile')
      ? formatAllocations(path.basename(file), summariseAllocations(file, top), requests)
      : formatSummary(path.basename(file), summarise(file, top), requests)) + '\n',
  );
}
