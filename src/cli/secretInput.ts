/**
 * Where the CLI takes secrets from, so that none has to be typed on a command line (where every
 * local user sees it in `ps` and `/proc/<pid>/cmdline`, and the shell keeps it in its history):
 * standard input, an environment variable, or a file only its owner can read. A secret given
 * as a literal flag value still works, with a warning.
 */
import { readFile, stat } from 'node:fs/promises';
import { UsageError } from './args';

/** The most standard input is read for secrets, bytes (a token is a few hundred). */
const MAX_STDIN_BYTES = 64 * 1024;

/** One secret an option can carry. */
export interface SecretOption {
  /** The flag, e.g. `--access-token`. */
  flag: string;
  /** The flag's value: a literal secret, `-` for standard input, or undefined. */
  value: string | undefined;
  /** The value of the `<flag>-file` option: a path, or undefined. */
  file: string | undefined;
  /** The environment variable that may carry it, e.g. `CLAUDE_ROUTER_ACCESS_TOKEN`. */
  envVar: string;
}

/** Where a secret was found. */
export type SecretSource = 'flag' | 'stdin' | 'file' | 'env' | 'none';

/**
 * Which source a secret comes from, in this order: the flag (a literal, or `-` for standard
 * input), the file, the environment variable.
 * @throws UsageError when both the flag and the file are given
 */
export function secretSource(o: SecretOption, env: NodeJS.ProcessEnv): SecretSource {
  if (o.value !== undefined && o.file !== undefined) throw new UsageError(`give ${o.flag} or ${o.flag}-file, not both`);
  if (o.value === '-') return 'stdin';
  if (o.value !== undefined) return 'flag';
  if (o.file !== undefined) return 'file';
  return env[o.envVar] ? 'env' : 'none';
}

/** The warning printed for a secret given as a literal flag value. */
export function commandLineWarning(flag: string, envVar: string, alternatives = `pipe it on standard input (${flag} -), or use ${flag}-file or ${envVar}`): string {
  return `claude-router: warning: the value of ${flag} is visible to other local users (ps, /proc) and stays in your shell history; ${alternatives}.\n`;
}

/**
 * The secret from a non-stdin source (`flag`, `file`, `env`); standard input is read once by the
 * caller ({@link readStdinLines}) and handed out in order.
 * @throws UsageError when the file cannot be read, is empty, or is readable or writable by group or others
 */
export async function readSecret(o: SecretOption, source: 'flag' | 'file' | 'env', env: NodeJS.ProcessEnv): Promise<string> {
  if (source === 'flag') return o.value!;
  if (source === 'env') return env[o.envVar]!.trim();
  const file = o.file!;
  let text: string;
  try {
    const st = await stat(file);
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      throw new UsageError(`${o.flag}-file ${file}: other users can access it (mode ${(st.mode & 0o777).toString(8)}); run chmod 600 on it first`);
    }
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${o.flag}-file ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const secret = text.trim();
  if (!secret) throw new UsageError(`${o.flag}-file ${file}: empty`);
  return secret;
}

/**
 * The non-empty lines of standard input, trimmed (one secret per line).
 * @throws UsageError past MAX_STDIN_BYTES
 */
export async function readStdinLines(input: NodeJS.ReadableStream = process.stdin): Promise<string[]> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (size > MAX_STDIN_BYTES) throw new UsageError(`standard input: more than ${MAX_STDIN_BYTES} bytes; expected one secret per line`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}
