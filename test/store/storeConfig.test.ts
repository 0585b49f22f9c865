/**
 * The store's settings as a user writes them: the URL (its password never shown), the password
 * file, and the key file created on first use — each bad value named by its key.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseConfigText } from '../../src/config/load';
import { keyFromText, loadOrCreateKeyFile } from '../../src/store/encryption';
import { parseStoreUrl, storeUrlProblem } from '../../src/config/storeUrl';

describe('shared pool: the store settings', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'store-config-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads host, port, database, TLS and password from the URL, and shows it without the password', () => {
    const t = parseStoreUrl('rediss://router:s3cret%21@redis.example:6380/2');
    assert.deepEqual({ ...t }, { host: 'redis.example', port: 6380, db: 2, tls: true, username: 'router', password: 's3cret!', display: 'rediss://redis.example:6380/2' });
    assert.equal(parseStoreUrl('redis://127.0.0.1').display, 'redis://127.0.0.1:6379/0');
  });

  it('refuses what is no Redis URL, naming state-store and never repeating the URL', () => {
    for (const bad of ['http://x:pw-abc@host', 'redis://:pw-abc@host/notadb', 'redis://:pw-abc@host/0?x=1', 'not a url pw-abc']) {
      const r = parseConfigText(`state-store: ${JSON.stringify(bad)}\n`);
      assert.equal(r.ok, false, bad);
      assert.match((r as { error: string }).error, /^state-store: /);
      assert.doesNotMatch((r as { error: string }).error, /pw-abc/);
      assert.ok(storeUrlProblem(bad));
    }
    assert.equal(parseConfigText('state-store: "redis://127.0.0.1:6379/0"\n').ok, true);
  });

  it('takes the password from the first line of state-store-password-file, and names the key when it cannot', () => {
    const file = path.join(dir, 'pw');
    writeFileSync(file, 'from-the-file\nignored\n');
    assert.equal(parseStoreUrl('redis://:in-the-url@h/0', file).password, 'from-the-file');
    assert.throws(() => parseStoreUrl('redis://h/0', path.join(dir, 'missing')), /^Error: state-store-password-file .*missing cannot be read \(ENOENT\)$/);
    writeFileSync(file, '\n');
    assert.throws(() => parseStoreUrl('redis://h/0', file), /state-store-password-file .* is empty/);
  });

  it('creates the key file once (0600, 64 hex digits) and reads the same key after; a broken one is named, not quoted', () => {
    const file = path.join(dir, 'sub', 'store.key');
    const first = loadOrCreateKeyFile(file);
    assert.equal(first.created, true);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.match(readFileSync(file, 'utf8'), /^[0-9a-f]{64}\n$/);
    const again = loadOrCreateKeyFile(file);
    assert.equal(again.created, false);
    assert.ok(again.key.equals(first.key));
    writeFileSync(file, 'not-a-key-at-all');
    assert.throws(
      () => loadOrCreateKeyFile(file),
      (err: Error) => /state-store-key-file .* must hold a state-store key: 64 hex digits/.test(err.message) && !err.message.includes('not-a-key'),
    );
    assert.throws(() => keyFromText('abc', 'the key'), /the key must hold a state-store key/);
  });
});
