import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { readClientHead } from '../../src/proxy/clientHead';
import { OAUTH_BETA, upstreamHeaders } from '../../src/proxy/upstream';

/** A flat header list as pairs, for comparisons. */
const pairs = (flat: readonly string[]): [string, string][] => {
  const out: [string, string][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
};

describe('proxy/clientHead: the client request head from the raw header list', () => {
  const raw = [
    'Host', '127.0.0.1:8080',
    'Connection', 'keep-alive, X-Hop',
    'X-Hop', 'secret',
    'Content-Type', 'application/json',
    'Authorization', 'Bearer local-key',
    'X-Claude-Router-Key', 'k1',
    'x-claude-router-key', 'k2',
    'Anthropic-Beta', 'claude-code-20250219, oauth-2025-04-20',
    'anthropic-beta', ' interleaved-thinking-2025-05-14 ,,',
    'Cookie', 'c=1',
    'X-Forwarded-For', '10.0.0.1',
    'Accept-Encoding', 'gzip',
    'Content-Length', '12',
    'Expect', '100-continue',
    'X-Claude-Code-Session-Id', 'sess-1',
    'x-stainless-lang', 'js',
    'x-stainless-lang', 'ts',
  ];

  it('reads the values the router checks, first occurrence, names in any case', () => {
    const h = readClientHead(raw);
    assert.equal(h.host, '127.0.0.1:8080');
    assert.equal(h.origin, undefined);
    assert.equal(h.routerKey, 'k1');
    assert.equal(h.authorization, 'Bearer local-key');
    assert.equal(h.apiKey, undefined);
    assert.equal(h.contentLength, '12');
    assert.equal(h.expect, '100-continue');
    assert.equal(h.sessionId, 'sess-1');
    assert.deepEqual(h.betas, ['claude-code-20250219', 'oauth-2025-04-20', 'interleaved-thinking-2025-05-14']);
  });

  it('forwards everything else in order, lower-cased, repeats kept; never credentials, cookies, hop-by-hop or Connection-named headers', () => {
    assert.deepEqual(pairs(readClientHead(raw).forward), [
      ['content-type', 'application/json'],
      ['x-claude-code-session-id', 'sess-1'],
      ['x-stainless-lang', 'js'],
      ['x-stainless-lang', 'ts'],
    ]);
  });

  it('gives the upstream list the account credential, the betas with the OAuth beta exactly once, identity encoding', () => {
    const h = readClientHead(raw);
    const oauth = new Map(pairs(upstreamHeaders(h, 'oauth', 'sk-ant-oat01-x')));
    assert.equal(oauth.get('authorization'), 'Bearer sk-ant-oat01-x');
    assert.equal(oauth.get('anthropic-beta'), `claude-code-20250219,interleaved-thinking-2025-05-14,${OAUTH_BETA}`);
    assert.equal(oauth.get('accept-encoding'), 'identity');
    assert.equal(oauth.has('x-api-key'), false);
    const key = new Map(pairs(upstreamHeaders(h, 'api_key', 'sk-ant-api03-x')));
    assert.equal(key.get('x-api-key'), 'sk-ant-api03-x');
    assert.equal(key.get('anthropic-beta'), 'claude-code-20250219,interleaved-thinking-2025-05-14');
    assert.equal(key.has('authorization'), false);
    const plain = new Map(pairs(upstreamHeaders(readClientHead(['host', 'localhost']), 'api_key', 'k')));
    assert.equal(plain.has('anthropic-beta'), false);
    assert.deepEqual(h.forward.length, 8, 'building the upstream list leaves the head as it was');
  });

  it('never forwards a dropped header (credentials, framing, hop-by-hop, Connection-named), whatever the case, order or repetition', () => {
    const name = fc.constantFrom('Host', 'COOKIE', 'authorization', 'X-Api-Key', 'x-claude-router-key', 'Transfer-Encoding', 'content-length', 'Via', 'x-ok', 'Connection', 'x-named', 'Authorization');
    fc.assert(
      fc.property(fc.array(fc.tuple(name, fc.constantFrom('x-named', 'keep-alive', 'X-Named, close', 'v')), { maxLength: 12 }), (list) => {
        const h = readClientHead(list.flat());
        const connectionNamesXNamed = list.some(([n, v]) => n.toLowerCase() === 'connection' && v.toLowerCase().split(',').map((x) => x.trim()).includes('x-named'));
        for (const [n] of pairs(h.forward)) {
          assert.ok(!['host', 'cookie', 'authorization', 'x-api-key', 'x-claude-router-key', 'transfer-encoding', 'content-length', 'via', 'connection'].includes(n), n);
          assert.ok(!(n === 'x-named' && connectionNamesXNamed), 'a header named in Connection');
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});
