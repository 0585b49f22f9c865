import { strict as assert } from 'node:assert';
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileCredentialStore } from '../../src/accounts/fileCredentialStore';

/** Runs test/support/credentialWriter in its own process; resolves with its exit code. */
function writer(file: string, role: 'rotate' | 'add', n: number): Promise<number | null> {
  const child = fork(path.join(__dirname, '../support/credentialWriter.js'), [file, role, String(n)], { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', resolve);
  });
}

describe('FileCredentialStore across processes', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'cr-store-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loses no write when two processes store different accounts at once (a rotation is never undone)', async () => {
    const file = path.join(dir, 'credentials.json');
    const n = 150;
    assert.deepEqual(await Promise.all([writer(file, 'rotate', n), writer(file, 'add', n)]), [0, 0]);
    const store = new FileCredentialStore(file);
    assert.equal((await store.get('work'))?.refreshToken, `sk-ant-ort01-work-${n}`, 'the last rotation of "work" is stored');
    const stored = new Set(await store.labels());
    const missing = Array.from({ length: n }, (_, i) => `new${i + 1}`).filter((l) => !stored.has(l));
    assert.deepEqual(missing, [], 'every added account is stored');
    assert.deepEqual(readdirSync(dir).sort(), ['credentials.json'], 'no lock or temp file is left');
  });

  it('takes over a lock left behind by a killed process', async () => {
    const file = path.join(dir, 'credentials.json');
    mkdirSync(`${file}.lock`);
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, longAgo, longAgo);
    await new FileCredentialStore(file).set('a', { accessToken: 'sk-ant-oat01-a' });
    assert.equal((await new FileCredentialStore(file).get('a'))?.accessToken, 'sk-ant-oat01-a');
  });
});
