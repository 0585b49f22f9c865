import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { RequestBody } from '../../../src/proxy/http/body';
import { inspectRequest, MalformedBodyError } from '../../../src/proxy/http/requestInfo';
import { NO_STICKY_KEY, stickyKeyHash } from '../../../src/routing/identify';
import { readClientHead } from '../../../src/proxy/http/clientHead';
import { sessionIdFromBody, sessionIdFromHeader, sessionIdFromUserId } from '../../../src/proxy/http/sessionKey';

const SID = '2f1b7c1e-9a3d-4a8e-b1b2-3c4d5e6f7a8b';
const PARENT = '0a1b2c3d-0000-4000-8000-000000000001';
const DEVICE = 'ab'.repeat(32);
const ACCOUNT = '11111111-2222-4333-8444-555555555555';
const SEEDED = { seed: 4242, numRuns: 600 } as const;

const jsonUserId = (o: Record<string, unknown>) => JSON.stringify(o);
const body = (o: unknown) => RequestBody.of(Buffer.from(JSON.stringify(o)));
const raw = (text: string) => RequestBody.of(Buffer.from(text));

describe('proxy/sessionKey', () => {
  describe('sessionIdFromHeader', () => {
    it('reads x-claude-code-session-id (the first of a repeated header, the first entry of a joined one), trimmed', () => {
      assert.equal(sessionIdFromHeader(SID), SID);
      assert.equal(sessionIdFromHeader(`${SID}, other`), SID);
      assert.equal(sessionIdFromHeader(`  ${SID} `), SID);
      assert.equal(sessionIdFromHeader(readClientHead(['X-Claude-Code-Session-Id', SID, 'x-claude-code-session-id', 'other']).sessionId), SID);
    });

    it('rejects absent, empty, non-printable and over-long values', () => {
      assert.equal(sessionIdFromHeader(undefined), null);
      assert.equal(sessionIdFromHeader(''), null);
      assert.equal(sessionIdFromHeader('   '), null);
      assert.equal(sessionIdFromHeader('a b'), null);
      assert.equal(sessionIdFromHeader('sess\u00e9'), null);
      assert.equal(sessionIdFromHeader('x'.repeat(200)), 'x'.repeat(200));
      assert.equal(sessionIdFromHeader('x'.repeat(201)), null);
    });
  });

  describe('sessionIdFromUserId', () => {
    it('JSON form: session_id, with an empty account_uuid', () => {
      assert.equal(sessionIdFromUserId(jsonUserId({ device_id: DEVICE, account_uuid: '', session_id: SID })), SID);
    });

    it('JSON form with parent_session_id: the session_id, not the parent', () => {
      assert.equal(sessionIdFromUserId(jsonUserId({ device_id: DEVICE, account_uuid: ACCOUNT, session_id: SID, parent_session_id: PARENT })), SID);
    });

    it('legacy form user_<hex>_account_<uuid or empty>_session_<uuid>', () => {
      assert.equal(sessionIdFromUserId(`user_${DEVICE}_account_${ACCOUNT}_session_${SID}`), SID);
      assert.equal(sessionIdFromUserId(`user_${DEVICE}_account__session_${SID}`), SID);
    });

    it('garbage has no session', () => {
      const garbage: unknown[] = [
        undefined,
        null,
        42,
        true,
        [SID],
        { session_id: SID }, // an object, not a string
        '',
        'hello',
        '{not json',
        '{"session_id": 42}',
        '{"session_id": ""}',
        '{"session_id": null}',
        '{"device_id": "x"}',
        '[{"session_id": "x"}]',
        `user_${DEVICE}_account_${ACCOUNT}_session_`,
        `user_${DEVICE}_session_${SID}`,
        `user_zz_account__session_${SID}`,
        `${'{'.repeat(5000)}`,
        jsonUserId({ session_id: SID, pad: 'x'.repeat(5000) }), // over the 4 KiB limit
        jsonUserId({ session_id: 'x'.repeat(201) }),
        jsonUserId({ session_id: 'has space' }),
      ];
      for (const g of garbage) assert.equal(sessionIdFromUserId(g), null, JSON.stringify(g)?.slice(0, 80));
    });
  });

  describe('sessionIdFromBody', () => {
    it('reads metadata.user_id and tolerates bodies of any shape', () => {
      assert.equal(sessionIdFromBody({ metadata: { user_id: jsonUserId({ session_id: SID }) } }), SID);
      for (const b of [null, 'x', 3, [], {}, { metadata: null }, { metadata: 'x' }, { metadata: { user_id: 7 } }]) assert.equal(sessionIdFromBody(b), null);
    });
  });

  describe('inspectRequest', () => {
    const HDR = SID;
    /** The raw id never leaves inspectRequest: only its hash, with where it came from. */
    const FROM_HEADER = { keyHash: stickyKeyHash(SID), source: 'header', kind: 'session' };
    const FROM_METADATA = { keyHash: stickyKeyHash(SID), source: 'metadata', kind: 'session' };

    it('fast path: header session + model at the head → no parse (stream unknown), malformed tail not detected', () => {
      const info = inspectRequest(HDR, raw('{"model":"claude-sonnet-4-5","stream":true, this is not json'), true);
      assert.deepEqual(info, { model: 'claude-sonnet-4-5', sticky: FROM_HEADER, stream: null, maxTokens: null });
      const spaced = inspectRequest(HDR, raw(' { "model" : "claude-opus-4-1" , "messages": []}'), true);
      assert.equal(spaced.model, 'claude-opus-4-1');
    });

    it('parse path: no header → session from metadata.user_id, stream read', () => {
      const b = body({ model: 'claude-haiku-4-5', stream: false, metadata: { user_id: jsonUserId({ device_id: DEVICE, account_uuid: '', session_id: SID }) } });
      assert.deepEqual(inspectRequest(undefined, b, true), { model: 'claude-haiku-4-5', sticky: FROM_METADATA, stream: false, maxTokens: null });
    });

    it('parse path: the header wins over metadata', () => {
      const b = body({ messages: [], model: 'm', metadata: { user_id: jsonUserId({ session_id: 'from-body' }) } });
      assert.deepEqual(inspectRequest(HDR, b, true).sticky, FROM_HEADER);
      assert.equal(inspectRequest(HDR, b, true).stream, null);
    });

    it('parse path when the model is not at the head, or escaped', () => {
      assert.deepEqual(inspectRequest(HDR, body({ stream: true, model: 'x' }), true), { model: 'x', sticky: FROM_HEADER, stream: true, maxTokens: null });
      assert.equal(inspectRequest(HDR, raw('{"model":"a\\u0062c"}'), true).model, 'abc');
    });

    it('a body received in several chunks reads the same as in one (model head split across chunks)', () => {
      const text = JSON.stringify({ model: 'claude-sonnet-4-5', stream: true, metadata: { user_id: jsonUserId({ session_id: SID }) } });
      for (const cut of [1, 5, 12, 20, text.length - 1]) {
        const parts = [Buffer.from(text.slice(0, cut)), Buffer.from(text.slice(cut))];
        const chunked = new RequestBody(parts, text.length);
        assert.deepEqual(inspectRequest(HDR, chunked, true), inspectRequest(HDR, raw(text), true), `cut at ${cut}`);
        assert.deepEqual(inspectRequest(undefined, chunked, true), { model: 'claude-sonnet-4-5', sticky: FROM_METADATA, stream: true, maxTokens: null }, `cut at ${cut}`);
      }
    });

    it('reads max_tokens (the output ceiling of a cost lease) without a parse from the head or the tail, and from the parse when there is one', () => {
      const messages = [{ role: 'user', content: 'x'.repeat(5_000) + '"max_tokens": 7' }];
      assert.equal(inspectRequest(HDR, raw(JSON.stringify({ model: 'm', max_tokens: 1024, messages })), true).maxTokens, 1024, 'at the head');
      const tail = JSON.stringify({ model: 'm', messages, max_tokens: 128000, stream: true });
      assert.equal(inspectRequest(HDR, raw(tail), true).maxTokens, 128000, 'among the last members');
      const chunked = new RequestBody([Buffer.from(tail.slice(0, tail.length - 20)), Buffer.from(tail.slice(-20))], tail.length);
      assert.equal(inspectRequest(HDR, chunked, true).maxTokens, 128000, 'a tail split across chunks');
      assert.equal(inspectRequest(HDR, raw(JSON.stringify({ model: 'm', messages })), true).maxTokens, null, 'a key inside a string is escaped and never read');
      assert.equal(inspectRequest(undefined, body({ model: 'm', messages, max_tokens: 64000 }), true).maxTokens, 64000, 'parse path');
      assert.equal(inspectRequest(undefined, body({ model: 'm', max_tokens: -3 }), true).maxTokens, null);
    });

    it('empty body: no parse, no error', () => {
      assert.deepEqual(inspectRequest(undefined, RequestBody.of(Buffer.alloc(0)), true), { model: null, sticky: NO_STICKY_KEY, stream: null, maxTokens: null });
      assert.deepEqual(inspectRequest(HDR, RequestBody.of(Buffer.alloc(0)), true), { model: null, sticky: FROM_HEADER, stream: null, maxTokens: null });
    });

    it('malformed JSON → MalformedBodyError only when parsing was needed', () => {
      assert.throws(() => inspectRequest(undefined, raw('{"model":"x",'), true), MalformedBodyError);
      assert.throws(() => inspectRequest(HDR, raw('{"stream":true,'), true), MalformedBodyError);
      for (const notObject of ['[]', '"x"', '42', 'null', 'true']) assert.throws(() => inspectRequest(undefined, raw(notObject), true), MalformedBodyError, notObject);
      assert.doesNotThrow(() => inspectRequest(HDR, raw('{"model":"x",'), true));
    });

    it('non-string model and stream read as null', () => {
      assert.deepEqual(inspectRequest(undefined, body({ model: 5, stream: 'yes' }), true), { model: null, sticky: NO_STICKY_KEY, stream: null, maxTokens: null });
    });

    it('the fast path and the parse path agree on the model whenever the fast path applies', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), (model) => {
          const one = raw(JSON.stringify({ model, stream: true }));
          const fast = inspectRequest(HDR, one, true);
          const parsed = inspectRequest(undefined, one, true);
          assert.equal(fast.model, parsed.model);
        }),
        SEEDED,
      );
    });
  });

  describe('properties (seeded)', () => {
    const anyJsonish = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.json(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc
        .record({
          model: fc.oneof(fc.string(), fc.integer()),
          metadata: fc.record({
            user_id: fc.oneof(
              fc.string(),
              fc.jsonValue().map((v) => JSON.stringify(v)),
            ),
          }),
        })
        .map((o) => JSON.stringify(o)),
      fc.string().map((s) => `{"model":"${s}"`),
    );
    /** A raw header list as node:http gives it: names in any case, repeats, any text. */
    const headersArb = fc
      .array(fc.tuple(fc.constantFrom('x-claude-code-session-id', 'X-Claude-Code-Session-ID', 'content-type', 'x-other', 'connection'), fc.string({ unit: 'binary' })), {
        maxLength: 4,
      })
      .map((pairs) => pairs.flat());

    it('inspectRequest throws nothing but MalformedBodyError on arbitrary input', () => {
      fc.assert(
        fc.property(headersArb, anyJsonish, fc.uint8Array({ maxLength: 64 }), fc.boolean(), fc.nat(), (headers, text, bytes, useBytes, cutAt) => {
          const buf = useBytes ? Buffer.from(bytes) : Buffer.from(text);
          // Received in one chunk or two, cut anywhere.
          const cut = cutAt % (buf.length + 1);
          const body = cut > 0 && cut < buf.length ? new RequestBody([buf.subarray(0, cut), buf.subarray(cut)], buf.length) : RequestBody.of(buf);
          try {
            const info = inspectRequest(readClientHead(headers).sessionId, body, true);
            assert.ok(info.sticky.keyHash === null || /^[0-9a-f]{16}$/.test(info.sticky.keyHash));
            assert.ok(info.model === null || typeof info.model === 'string');
          } catch (err) {
            assert.ok(err instanceof MalformedBodyError, String(err));
          }
        }),
        SEEDED,
      );
    });

    it('sessionIdFromUserId never throws and returns null or a clean id', () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.anything(),
            fc.string({ unit: 'binary' }),
            fc.jsonValue().map((v) => JSON.stringify(v)),
            fc.string().map((s) => `{"session_id":${JSON.stringify(s)}}`),
          ),
          (v) => {
            const id = sessionIdFromUserId(v);
            assert.ok(id === null || /^[\x21-\x7e]{1,200}$/.test(id), String(id));
          },
        ),
        SEEDED,
      );
    });
  });
});
