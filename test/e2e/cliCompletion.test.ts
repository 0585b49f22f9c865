/**
 * `claude-router completion bash|zsh|fish` from the BUILT CLI: the bash script, loaded into a real
 * bash, completes commands, subcommands, options and option choices after global options; the
 * zsh and fish scripts name every command; an unknown shell exits 2.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../support/routerCli';

const COMMANDS = ['start', 'status', 'decisions', 'explain', 'estimation', 'demo', 'accounts', 'rotate-key', 'report', 'replay', 'completion'];

describe('e2e: claude-router completion', function () {
  this.timeout(30_000);
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'router-completion-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('bash: completes commands, subcommands, options and choices the way a user types them', async () => {
    const r = await runCli(['completion', 'bash']);
    assert.equal(r.code, 0, r.stderr);
    const script = path.join(dir, 'claude-router.bash');
    writeFileSync(script, r.stdout);
    /** What bash offers for the words typed so far (the last one is being completed). */
    const complete = (...words: string[]) =>
      execFileSync('bash', ['-c', `source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _claude_router; printf '%s\\n' "\${COMPREPLY[@]}"`, script, 'claude-router', ...words], {
        encoding: 'utf8',
        cwd: dir,
      })
        .split('\n')
        .filter(Boolean);
    const top = complete('');
    for (const word of [...COMMANDS, '--version', '--state-dir', '--no-color', '--help']) assert.ok(top.includes(word), `${word} in ${top.join(' ')}`);
    assert.ok(!top.includes('help'), 'the implicit help command is left out (--help is offered)');
    assert.deepEqual(complete('acc'), ['accounts']);
    assert.deepEqual(complete('accounts', 'lo'), ['login', 'logout']);
    assert.deepEqual(complete('--state-dir', '/tmp', 'accounts', 'en'), ['enable'], 'after a global option and its value');
    assert.deepEqual(complete('accounts', 'login', '--'), ['--label', '--no-browser', '--token-url', '--config', '--help', '--version', '--state-dir', '--no-color']);
    assert.deepEqual(complete('decisions', '--outcome', 'no'), ['no_usable_account']);
    assert.deepEqual(complete('status', '--config', 'claude-router.b'), ['claude-router.bash'], 'a file after an option that takes one');
  });

  it('zsh loads the bash script through bashcompinit; fish gets one line per command and option', async () => {
    const zsh = await runCli(['completion', 'zsh']);
    assert.equal(zsh.code, 0, zsh.stderr);
    assert.match(zsh.stdout, /^autoload -U \+X bashcompinit && bashcompinit$/m);
    assert.match(zsh.stdout, /^complete -o default -F _claude_router claude-router$/m);
    const fish = await runCli(['completion', 'fish']);
    assert.equal(fish.code, 0, fish.stderr);
    for (const c of COMMANDS) assert.match(fish.stdout, new RegExp(`^complete -c claude-router -n '__fish_use_subcommand[^']*' -a ${c} -d `, 'm'), c);
    assert.match(fish.stdout, /^complete -c claude-router -n '__fish_seen_subcommand_from accounts; [^']*' -a login -d /m);
    assert.match(fish.stdout, /^complete -c claude-router -n '__fish_seen_subcommand_from decisions' -l outcome -x -a 'success client_error /m);
  });

  it('an unknown shell: exit 2 naming the choices', async () => {
    const r = await runCli(['completion', 'tcsh']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Allowed choices are bash, zsh, fish/);
  });
});
