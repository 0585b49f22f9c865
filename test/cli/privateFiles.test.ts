import { strict as assert } from 'node:assert';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startRouter } from '../../src/cli/runtime';
import { openConfiguredStore } from '../../src/cli/sharedStore';
import { loadOrCreateClientKey, readClientKey } from '../../src/cli/stateDir';
import { FileCredentialStore } from '../../src/accounts/fileCredentialStore';
import { silentLogger } from '../../src/proxy/log';

describe('the state directory and key files: owner and mode checks', function () {
  let dir: string;
  beforeEach(function () {
    if (process.platform === 'win32') this.skip();
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-private-'));
  });
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it('a state directory others can write is refused at start, naming it and the chmod that fixes it', async () => {
    const stateDir = path.join(dir, 'state');
    mkdirSync(stateDir);
    chmodSync(stateDir, 0o777);
    await assert.rejects(
      startRouter({
        config: { listen: { host: '127.0.0.1', port: 0 }, stateDir, accounts: [{ label: 'a', accessToken: 'tok-a' }] },
        log: silentLogger,
        pollUsage: false,
        env: {},
      }),
      (err: Error) => err.message.includes(stateDir) && /other users \(mode 0777\).*chmod 700/.test(err.message),
    );
    assert.ok(!existsSync(path.join(stateDir, 'client-key')), 'no key was made in it');
  });

  it('a client-key others can read is refused, naming it and chmod 600', () => {
    writeFileSync(path.join(dir, 'client-key'), 'clr-a-key-another-user-could-read\n', { mode: 0o644 });
    chmodSync(path.join(dir, 'client-key'), 0o644);
    assert.throws(() => readClientKey(dir), /client-key .*client-key can be read or changed by other users \(mode 0644\): chmod 600/);
    assert.throws(() => loadOrCreateClientKey(dir), /mode 0644/);
  });

  it('a client-key another user owns is refused', function () {
    if (process.getuid?.() !== 0) this.skip(); // only root can give a file away
    const file = path.join(dir, 'client-key');
    writeFileSync(file, 'clr-a-key-another-user-chose-0123\n', { mode: 0o600 });
    chownSync(file, 65534, 65534);
    assert.throws(() => loadOrCreateClientKey(dir), /belongs to another user \(uid 65534\)/);
  });

  it('a new client key is never written through a symbolic link planted in its place', () => {
    const elsewhere = path.join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    const target = path.join(elsewhere, 'chosen-by-someone');
    symlinkSync(target, path.join(dir, 'client-key'));
    const key = loadOrCreateClientKey(dir);
    assert.ok(!existsSync(target), 'nothing was written at the link target');
    const st = lstatSync(path.join(dir, 'client-key'));
    assert.ok(st.isFile(), 'the key file is a plain file');
    assert.equal(st.mode & 0o777, 0o600);
    assert.equal(readClientKey(dir), key);
  });

  it('a store.key others can read (0644) is refused before the store is used, naming it and chmod 600', async () => {
    const keyFile = path.join(dir, 'store.key');
    writeFileSync(keyFile, `${'ab'.repeat(32)}\n`);
    chmodSync(keyFile, 0o644);
    await assert.rejects(
      openConfiguredStore({ stateStore: 'redis://127.0.0.1:1/0' }, dir, new FileCredentialStore(path.join(dir, 'credentials.json')), silentLogger, Date.now),
      (err: Error) => err.message.includes(keyFile) && /state-store-key-file .*\(mode 0644\): chmod 600/.test(err.message),
    );
    assert.equal(statSync(keyFile).mode & 0o777, 0o644, 'the file is left as it was');
  });
});
