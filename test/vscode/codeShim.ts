/**
 * A "VS Code executable" for @vscode/test-electron (`vscodeExecutablePath`) and
 * @vscode/test-cli (`useInstallation.fromPath`) on a machine without desktop VS Code: it
 * accepts the arguments they pass and runs the tests through code-server + headless
 * Chromium (see ./codeServer.ts), exiting with the tests' exit code.
 *
 *   scripts/code-shim.sh --extensionDevelopmentPath=DIR --extensionTestsPath=FILE \
 *     [--user-data-dir=DIR] [--extensions-dir=DIR] [FOLDER]
 *
 * Both `--name=value` and `--name value` forms are accepted; other flags of desktop VS Code
 * (`--no-sandbox`, `--disable-extensions`, `--skip-welcome`, ...) are ignored. Environment
 * variables (test-electron's `extensionTestsEnv`) reach the extension host. Optional:
 * `CODE_SHIM_TIMEOUT_MS` (default 120000).
 */
import * as path from 'node:path';
import { runExtensionTests } from './codeServer';

export interface ShimArgs {
  extensionDevelopmentPath: string[];
  extensionTestsPath?: string;
  userDataDir?: string;
  extensionsDir?: string;
  folder?: string;
  ignored: string[];
}

const VALUED = new Map<string, keyof ShimArgs>([
  ['--extensionDevelopmentPath', 'extensionDevelopmentPath'],
  ['--extensionTestsPath', 'extensionTestsPath'],
  ['--user-data-dir', 'userDataDir'],
  ['--extensions-dir', 'extensionsDir'],
]);

/** Parse the command line that test-electron / test-cli give a VS Code executable. */
export function parseShimArgs(argv: readonly string[]): ShimArgs {
  const out: ShimArgs = { extensionDevelopmentPath: [], ignored: [] };
  const set = (key: keyof ShimArgs, value: string) => {
    if (key === 'extensionDevelopmentPath') out.extensionDevelopmentPath.push(value);
    else if (key !== 'ignored') out[key] = value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const key = VALUED.get(name);
    if (key) {
      if (eq > 0) set(key, arg.slice(eq + 1));
      else if (i + 1 < argv.length) set(key, argv[++i]);
      else throw new Error(`${name} needs a value`);
    } else if (arg.startsWith('-')) {
      out.ignored.push(arg);
    } else if (out.folder === undefined) {
      out.folder = arg;
    } else {
      out.ignored.push(arg);
    }
  }
  return out;
}

async function main(): Promise<number> {
  const args = parseShimArgs(process.argv.slice(2));
  if (args.extensionDevelopmentPath.length === 0 || !args.extensionTestsPath) {
    process.stderr.write('code-shim: --extensionDevelopmentPath and --extensionTestsPath are required\n');
    return 2;
  }
  if (args.extensionDevelopmentPath.length > 1) {
    process.stderr.write(`code-shim: only the first --extensionDevelopmentPath is loaded (${args.extensionDevelopmentPath[0]})\n`);
  }
  return runExtensionTests({
    extensionDevelopmentPath: path.resolve(args.extensionDevelopmentPath[0]),
    extensionTestsPath: path.resolve(args.extensionTestsPath),
    folder: args.folder ? path.resolve(args.folder) : undefined,
    userDataDir: args.userDataDir,
    extensionsDir: args.extensionsDir,
    timeoutMs: Number(process.env.CODE_SHIM_TIMEOUT_MS) || 120_000,
  });
}

if (require.main === module) {
  // On Ctrl+C / SIGTERM exit through process.exit, whose 'exit' hook in codeServer.ts
  // kills code-server's process group; Playwright closes its browser on exit too.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      process.stderr.write(`code-shim: ${sig}, stopping\n`);
      process.exit(130);
    });
  }
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`code-shim: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
