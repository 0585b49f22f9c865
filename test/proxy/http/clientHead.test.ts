import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { readClientHead } from '../../../src/proxy/http/clientHead';
import { OAUTH_BETA, upstreamHeaders } from '../../../src/proxy/upstream/agent';

/** A flat header list as pairs, for comparisons. */
const pairs = (flat: readonly string[]): [string, string][] => {
  const out: [string, string][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
};

/** Every header that must never go upstream (docs/anthropic-api.md#forwarding; anthropic-beta is rebuilt, not copied). */
const DROPPED = [
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'cookie',
  'authorization',
  'x-api-key',
  'x-claude-router-key',
  'accept-encoding',
  'expect',
  'referer',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'via',
  'anthropic-beta',
];

describe('proxy/clientHead: the client request head from the raw header list', () => {
  const raw = [
    'Host',
    '127.0.0.1:8080',
    'Connection',
    'keep-alive, X-Hop',
    'X-Hop',
    'secret',
    'Content-Type',
    'application/json',
    'Authorization',
    'Bearer local-key',
    'X-Claude-Router-Key',
    'k1',
    'x-claude-router-key',
    'k2',
    'Anthropic-Beta',
    'claude-code-20250219, oauth-2025-04-20',
    'anthropic-beta',
    ' interleaved-thinking-2025-05-14 ,,',
    'Cookie',
    'c=1',
    'X-Forwarded-For',
    '10.0.0.1',
    'Accept-Encoding',
    'gzip',
    'Content-Length',
    '12',
    'Expect',
    '100-continue',
    'X-Claude-Code-Session-Id',
    'sess-1',
    'x-stainless-lang',
    'js',
    'x-stainless-lang',
    'ts',
    'content-type',
    'text/plain',
    'EXPECT',
    'x-other',
    'User-Agent',
    'claude-cli/2.1.328',
    'user-agent',
    'other',
  ];

  it('reads the values the router checks, first occurrence, names in any case', () => {
    const h = readClientHead(raw);
    assert.equal(h.host, '127.0.0.1:8080');
    assert.equal(h.origin, undefined);
    assert.equal(h.routerKey, 'k1');
    assert.equal(h.authorization, 'Bearer local-key');
    assert.equal(h.apiKey, undefined);
    assert.equal(h.contentLength, '12');
    assert.equal(h.expect, '100-continue, x-other', 'every Expect line counts, as node joins them');
    assert.equal(h.sessionId, 'sess-1');
    assert.deepEqual(h.betas, ['claude-code-20250219', 'oauth-2025-04-20', 'interleaved-thinking-2025-05-14']);
  });

  it('forwards everything else in order, lower-cased, repeated lists kept, single-value headers once; never credentials, cookies, hop-by-hop or Connection-named headers', () => {
    assert.deepEqual(pairs(readClientHead(raw).forward), [
      ['content-type', 'application/json'],
      ['x-claude-code-session-id', 'sess-1'],
      ['x-stainless-lang', 'js'],
      ['x-stainless-lang', 'ts'],
      ['user-agent', 'claude-cli/2.1.328'],
    ]);
  });

  it('drops anthropic-beta too when Connection names it', () => {
    const h = readClientHead(['connection', 'anthropic-beta', 'anthropic-beta', 'some-beta']);
    assert.deepEqual(h.betas, []);
    assert.deepEqual(pairs(upstreamHeaders(h, 'api_key', 'k')), [
      ['x-api-key', 'k'],
      ['accept-encoding', 'identity'],
    ]);
  });

  it('gives the upstream list the account credential, the betas with the OAuth beta exactly once, identity encoding', () => {
    const h = readClientHead(raw);
    const forwarded = pairs(h.forward);
    assert.deepEqual(pairs(upstreamHeaders(h, 'oauth', 'sk-ant-oat01-x')), [
      ...forwarded,
      ['authorization', 'Bearer sk-ant-oat01-x'],
      ['anthropic-beta', `claude-code-20250219,interleaved-thinking-2025-05-14,${OAUTH_BETA}`],
      ['accept-encoding', 'identity'],
    ]);
    assert.deepEqual(pairs(upstreamHeaders(h, 'api_key', 'sk-ant-api03-x')), [
      ...forwarded,
      ['x-api-key', 'sk-ant-api03-x'],
      ['anthropic-beta', 'claude-code-20250219,interleaved-thinking-2025-05-14'],
      ['accept-encoding', 'identity'],
    ]);
    assert.deepEqual(pairs(upstreamHeaders(readClientHead(['host', 'localhost']), 'api_key', 'k')), [
      ['x-api-key', 'k'],
      ['accept-encoding', 'identity'],
    ]);
    assert.deepEqual(pairs(h.forward), forwarded, 'building the upstream list leaves the head as it was');
  });

  it('never forwards a dropped header (credentials, framing, hop-by-hop, Connection-named), whatever the case, order or repetition', () => {
    const name = fc.constantFrom(...DROPPED.map((n, i) => (i % 2 ? n.toUpperCase() : n)), 'Authorization', 'x-ok', 'x-named');
    fc.assert(
      fc.property(fc.array(fc.tuple(name, fc.constantFrom('x-named', 'keep-alive', 'X-Named, close', 'v')), { maxLength: 12 }), (list) => {
        const h = readClientHead(list.flat());
        const connectionNamesXNamed = list.some(
          ([n, v]) =>
            n.toLowerCase() === 'connection' &&
            v
              .toLowerCase()
              .split(',')
              .map((x) => x.trim())
              .includes('x-named'),
        );
        for (const [n] of pairs(h.forward)) {
          assert.ok(!DROPPED.includes(n), n);
          assert.ok(!(n === 'x-named' && connectionNamesXNamed), 'a header named in Connection');
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it("reads Claude Code's hint headers (first line each, any case) and forwards them as they are", () => {
    const h = readClientHead([
      'X-Claude-Code-Request-Class',
      'subagent',
      'x-claude-code-prompt-id',
      'p1',
      'x-claude-code-agent-id',
      'a1',
      'x-claude-code-agent-id',
      'a2',
      'x-claude-code-context-compacted',
      'manual',
    ]);
    assert.deepEqual([h.requestClass, h.promptId, h.agentId, h.contextCompacted], ['subagent', 'p1', 'a1', 'manual']);
    assert.deepEqual(
      pairs(h.forward).map(([n]) => n),
      ['x-claude-code-request-class', 'x-claude-code-prompt-id', 'x-claude-code-agent-id', 'x-claude-code-agent-id', 'x-claude-code-context-compacted'],
    );
    const none = readClientHead(['content-type', 'application/json']);
    assert.deepEqual([none.requestClass, none.promptId, none.agentId, none.contextCompacted], [undefined, undefined, undefined, undefined]);
  });
});
