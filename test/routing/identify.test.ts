import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { FINGERPRINT_PART_CHARS, identify, isStickyKeyHash, NO_STICKY_KEY, stickyKeyHash, toStickyKeyHash, type IdentifyInput } from '../../src/routing/identify';

const SEEDED = { seed: 1313, numRuns: 300 } as const;
const ID = 'b3f0c7a2-5d1e-4c8b-9a6f-0123456789ab';

/** A Claude-Code-like body without any session id: system blocks with cache markers, tools, a conversation. */
function body(messages: unknown[], system: unknown = [{ type: 'text', text: 'You are a helpful agent.', cache_control: { type: 'ephemeral' } }]) {
  return { model: 'claude-sonnet-4-5', max_tokens: 1024, system, tools: [{ name: 'Read', input_schema: {} }, { name: 'Bash' }], messages };
}
const input = (over: Partial<IdentifyInput>): IdentifyInput => ({ headerId: null, metadataId: null, body: undefined, fingerprint: true, ...over });

/** A body whose every property read throws: proof that identify did not look at it. */
const untouchable = new Proxy(
  {},
  {
    get() {
      throw new Error('the body was read');
    },
    ownKeys() {
      throw new Error('the body was read');
    },
  },
);

describe('identify: the sticky key and its hash', () => {
  it('the hash is the first 16 lowercase hex digits of SHA-256 of the key', () => {
    const full = createHash('sha256').update(ID).digest('hex');
    assert.equal(stickyKeyHash(ID), full.slice(0, 16));
    assert.ok(isStickyKeyHash(stickyKeyHash(ID)));
    assert.equal(toStickyKeyHash(stickyKeyHash(ID)), stickyKeyHash(ID), 'a hash stays as it is');
    assert.equal(toStickyKeyHash(ID), stickyKeyHash(ID), 'a raw id is hashed');
  });

  it('precedence: the header id, then metadata.user_id, then the fingerprint; one id has one hash from either place', () => {
    const convo = body([{ role: 'user', content: 'hi' }]);
    const header = identify(input({ headerId: ID, metadataId: 'other', body: untouchable }));
    assert.deepEqual(header, { keyHash: stickyKeyHash(ID), source: 'header', kind: 'session' });
    const metadata = identify(input({ metadataId: ID, body: untouchable }));
    assert.deepEqual(metadata, { keyHash: stickyKeyHash(ID), source: 'metadata', kind: 'session' });
    const fingerprint = identify(input({ body: convo }));
    assert.equal(fingerprint.source, 'fingerprint');
    assert.equal(fingerprint.kind, 'conversation');
    assert.ok(fingerprint.keyHash && isStickyKeyHash(fingerprint.keyHash));
  });

  it('session-fingerprint off: a request without an id has no key, and its body is not read', () => {
    assert.deepEqual(identify(input({ body: untouchable, fingerprint: false })), NO_STICKY_KEY);
    assert.deepEqual(identify(input({ metadataId: ID, fingerprint: false })).source, 'metadata', 'ids still count');
  });

  it('no id and nothing stable to fingerprint: no key', () => {
    for (const b of [undefined, null, 'x', [], {}, { model: 'm', messages: [] }, { messages: 'not a list' }]) assert.deepEqual(identify(input({ body: b })), NO_STICKY_KEY);
  });

  it('the fingerprint is stable as a conversation grows, from its first request on, whatever cache markers move', () => {
    const text = fc.string({ minLength: 1, maxLength: 300 });
    const turn = fc.record({
      role: fc.constantFrom('user', 'assistant'),
      content: fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text }), { minLength: 1, maxLength: 3 })),
    });
    fc.assert(
      fc.property(text, turn, fc.array(turn, { minLength: 1, maxLength: 8 }), fc.array(turn, { minLength: 1, maxLength: 8 }), (system, first, grown, more) => {
        const sys = [{ type: 'text', text: system }];
        const key = (messages: unknown[]) => identify(input({ body: body(messages, sys) })).keyHash;
        const start = key([first]);
        assert.ok(start);
        assert.equal(key([first, ...grown]), start);
        assert.equal(key([first, ...grown, ...more]), start);
        // Clients mark the newest blocks for caching; the marker moves as turns are added.
        const marked = [{ ...first, cache_control: { type: 'ephemeral' } }, ...grown];
        assert.equal(key(marked), start);
        assert.equal(identify(input({ body: body([first], [{ type: 'text', text: system, cache_control: { type: 'ephemeral', ttl: '1h' } }]) })).keyHash, start);
      }),
      SEEDED,
    );
  });

  it('the fingerprint differs between conversations (another opening message, system prompt or tool set)', () => {
    const text = fc.string({ minLength: 1, maxLength: 300 });
    fc.assert(
      fc.property(text, text, text, (a, b, system) => {
        fc.pre(a !== b);
        const sys = [{ type: 'text', text: system }];
        const one = identify(input({ body: body([{ role: 'user', content: a }], sys) })).keyHash;
        assert.notEqual(identify(input({ body: body([{ role: 'user', content: b }], sys) })).keyHash, one, 'another opening message');
        assert.notEqual(identify(input({ body: body([{ role: 'user', content: a }], [{ type: 'text', text: `${system}!` }]) })).keyHash, one, 'another system prompt');
        const noTools = { ...body([{ role: 'user', content: a }], sys), tools: [{ name: 'Read' }] };
        assert.notEqual(identify(input({ body: noTools })).keyHash, one, 'another tool set');
      }),
      SEEDED,
    );
  });

  it('reads a bounded head: text past FINGERPRINT_PART_CHARS of a part does not change the key, text before it does', () => {
    const long = 'a'.repeat(FINGERPRINT_PART_CHARS * 4);
    const key = (content: string) => identify(input({ body: body([{ role: 'user', content }], long) })).keyHash;
    assert.equal(key(`${long}x`), key(`${long}y`), 'the tail of a long first message is not read');
    assert.notEqual(key(`x${long}`), key(`y${long}`));
    const deep: unknown[] = [];
    let at = deep;
    for (let i = 0; i < 10_000; i++) {
      const next: unknown[] = [];
      at[0] = next;
      at = next;
    }
    assert.doesNotThrow(() => identify(input({ body: body([{ role: 'user', content: deep }]) })), 'a hostile nesting depth');
  });
});
