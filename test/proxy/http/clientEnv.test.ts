/**
 * The terminal environment for Claude Code, as "Copy Terminal Environment" writes it for POSIX
 * shells, PowerShell and cmd, with the plan type the user set.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { claudeCodeEnvironment, shellExports, withLoopback } from '../../../src/proxy/http/clientEnv';

describe('the terminal environment for Claude Code', () => {
  const env = claudeCodeEnvironment('http://127.0.0.1:48290', 'clr-key', 'pro');

  it('tells Claude Code the plan the user set (max unless told otherwise)', () => {
    assert.equal(env.CLAUDE_CODE_SUBSCRIPTION_TYPE, 'pro');
    assert.equal(claudeCodeEnvironment('http://127.0.0.1:1', 'k').CLAUDE_CODE_SUBSCRIPTION_TYPE, 'max');
  });

  it('POSIX lines set every value exactly in a real shell, quotes included', () => {
    const lines = shellExports({ ...env, ODD: `it's "odd" $HOME` });
    const out = execFileSync('bash', ['-c', `${lines}\nprintf '%s\\n' "$ANTHROPIC_BASE_URL" "$CLAUDE_CODE_OAUTH_TOKEN" "$CLAUDE_CODE_SUBSCRIPTION_TYPE" "$ODD"`], {
      encoding: 'utf8',
    });
    assert.deepEqual(out.split('\n').slice(0, 4), ['http://127.0.0.1:48290', 'clr-key', 'pro', `it's "odd" $HOME`]);
  });

  it("switches Claude Code's gateway hint headers on, so each request names its class (docs/claude-code-client.md#request-classes)", () => {
    assert.equal(env.CLAUDE_CODE_GATEWAY_HINT_HEADERS, '1');
  });

  it('keeps the proxy bypass list the terminal had and adds the loopback addresses once, so no proxy of the user carries the router traffic', () => {
    assert.equal(env.NO_PROXY, '127.0.0.1,localhost,::1');
    const kept = claudeCodeEnvironment('http://127.0.0.1:1', 'k', 'max', { NO_PROXY: ' intranet.example, localhost ,, .corp' });
    assert.equal(kept.NO_PROXY, 'intranet.example,localhost,.corp,127.0.0.1,::1');
    assert.equal(kept.no_proxy, kept.NO_PROXY);
    assert.equal(claudeCodeEnvironment('http://127.0.0.1:1', 'k', 'max', { no_proxy: '10.0.0.1' }).NO_PROXY, '10.0.0.1,127.0.0.1,localhost,::1');
    assert.equal(withLoopback(undefined), '127.0.0.1,localhost,::1');
  });

  it('PowerShell and cmd lines use their own syntax', () => {
    assert.equal(
      shellExports(env, 'powershell'),
      [
        "$env:ANTHROPIC_BASE_URL = 'http://127.0.0.1:48290'",
        "$env:CLAUDE_CODE_OAUTH_TOKEN = 'clr-key'",
        "$env:CLAUDE_CODE_SUBSCRIPTION_TYPE = 'pro'",
        "$env:CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = '1'",
        "$env:CLAUDE_CODE_GATEWAY_HINT_HEADERS = '1'",
        "$env:NO_PROXY = '127.0.0.1,localhost,::1'",
        "$env:no_proxy = '127.0.0.1,localhost,::1'",
      ].join('\n'),
    );
    assert.equal(shellExports({ A: "it's" }, 'powershell'), "$env:A = 'it''s'");
    assert.equal(
      shellExports(env, 'cmd'),
      [
        'set "ANTHROPIC_BASE_URL=http://127.0.0.1:48290"',
        'set "CLAUDE_CODE_OAUTH_TOKEN=clr-key"',
        'set "CLAUDE_CODE_SUBSCRIPTION_TYPE=pro"',
        'set "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"',
        'set "CLAUDE_CODE_GATEWAY_HINT_HEADERS=1"',
        'set "NO_PROXY=127.0.0.1,localhost,::1"',
        'set "no_proxy=127.0.0.1,localhost,::1"',
      ].join('\n'),
    );
    assert.throws(() => shellExports({ A: '50%' }, 'cmd'), /A holds a character cmd cannot quote/);
  });

  it('a key read from its file: the lines name the file, never the key, and a real shell sets the key from it', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "client-env-it's "));
    try {
      const file = path.join(dir, 'client-key');
      writeFileSync(file, 'clr-secret-from-file\n');
      const fromFile = claudeCodeEnvironment('http://127.0.0.1:48290', { file }, 'max');
      const lines = shellExports(fromFile);
      assert.ok(!lines.includes('clr-secret-from-file'));
      const out = execFileSync('bash', ['-c', `eval "$LINES"\nprintf '%s\\n' "$CLAUDE_CODE_OAUTH_TOKEN" "$ANTHROPIC_BASE_URL"`], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, LINES: lines },
      });
      assert.deepEqual(out.split('\n').slice(0, 2), ['clr-secret-from-file', 'http://127.0.0.1:48290']);
      assert.match(shellExports(fromFile, 'powershell'), /^\$env:CLAUDE_CODE_OAUTH_TOKEN = \(Get-Content -LiteralPath '.*client-env-it''s .*client-key' -TotalCount 1\)$/m);
      assert.equal(shellExports({ K: { file: 'C:\\Users\\me\\client-key' } }, 'cmd'), 'set /p K=<"C:\\Users\\me\\client-key"');
      assert.throws(() => shellExports({ K: { file: 'C:\\100%\\client-key' } }, 'cmd'), /K holds a character cmd cannot quote/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
