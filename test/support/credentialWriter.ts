/**
 * A child process for the credential store tests: `node credentialWriter.js <file> rotate <n>`
 * stores account "work" generations 1..n (the proxy rotating a token); `... add <n>` stores
 * accounts new1..new<n> (`claude-router accounts add`). Exits 0 when every write resolved.
 */
import { FileCredentialStore } from '../../src/accounts/fileCredentialStore';

async function main(file: string, role: string, n: number): Promise<void> {
  const store = new FileCredentialStore(file);
  for (let i = 1; i <= n; i++) {
    if (role === 'rotate') await store.set('work', { accessToken: `sk-ant-oat01-work-${i}`, refreshToken: `sk-ant-ort01-work-${i}` });
    else await store.set(`new${i}`, { accessToken: `sk-ant-oat01-new-${i}`, refreshToken: `sk-ant-ort01-new-${i}` });
  }
}

const [file, role, n] = process.argv.slice(2);
main(file, role, Number(n)).then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  },
);
