/**
 * A change of this machine's credentials copy is news only when it holds a pair the router does
 * not (src/accounts/credentialNews.ts): every refresh rewrites the copy, and taking that write for
 * news made the router re-read the pair — which hid a refused fresh pair from `holds` (VS Code's
 * SecretStorage reports the router's own writes), so a signed-out account was never flagged.
 */
import { strict as assert } from 'node:assert';
import { credentialNews } from '../../src/accounts/credentialNews';
import { MemoryCredentialStore } from '../../src/accounts/memoryCredentialStore';
import { TokenManager } from '../../src/accounts/tokenManager';

const pair = (n: number) => ({ accessToken: `sk-ant-oat01-a-${n}`, refreshToken: `sk-ant-ort01-a-${n}`, expiresAtMs: Date.now() + 3_600_000 });

async function started() {
  const local = new MemoryCredentialStore();
  await local.set('a', pair(1));
  let grants = 1;
  const tokens = new TokenManager(local, async () => pair(++grants));
  await tokens.current('a');
  return { local, tokens };
}

describe('credentialNews: what a change of the local credentials copy means', () => {
  it("the router's own refreshed pair is no news: the pair stays held, and its refusal would still be seen", async () => {
    const { local, tokens } = await started();
    const fresh = await tokens.refresh('a', pair(1).accessToken); // stores pair 2 in the copy
    assert.equal(await credentialNews('a', local, tokens), false);
    assert.equal(tokens.holds('a', fresh.accessToken), true, 'a refusal of the fresh pair is a refusal of the newest pair known');
  });

  it('a pair a person stored is news', async () => {
    const { local, tokens } = await started();
    await local.set('a', pair(9)); // `claude-router accounts login`, or a sign-in in another window
    assert.equal(await credentialNews('a', local, tokens), true);
  });

  it('with a shared pool, a pair the pool has held is no news, whatever the router holds', async () => {
    const { local, tokens } = await started();
    await local.set('a', pair(7));
    const asked: string[] = [];
    const pool = { localChanged: async (label: string) => (asked.push(label), false) };
    assert.equal(await credentialNews('a', local, tokens, pool), false);
    assert.deepEqual(asked, ['a']);
  });
});
