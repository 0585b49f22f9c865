import { strict as assert } from 'node:assert';
import { redactTokens } from '../../../src/proxy/relay/redact';

describe('redactTokens', () => {
  const access = 'sk-ant-oat01-abcdefgh';
  const refresh = 'sk-ant-ort01-ijklmnop';

  it('replaces every occurrence of every token and keeps a JSON body valid', () => {
    const body = Buffer.from(JSON.stringify({ error: { message: `${access} then ${refresh}, again ${access}` } }));
    const out = redactTokens(body, [access, refresh]);
    assert.equal(JSON.parse(out.toString()).error.message, '[redacted] then [redacted], again [redacted]');
  });

  it('returns the very same Buffer when no token is in it, and skips missing or too-short tokens', () => {
    const body = Buffer.from('{"type":"message","content":[{"type":"text","text":"hi"}]}');
    assert.equal(redactTokens(body, [access, undefined, 'hi', '']), body);
  });
});
