import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { camelToKebab, kebabToCamel } from '../../src/config/keys';
import { loadConfigFile, parseConfigText, validateConfig, type LoadResult } from '../../src/config/load';
import { policyFrom } from '../../src/config/schema';
import { DEFAULT_POLICY } from '../../src/routing/policy';

const KEBAB = `
listen:
  host: 127.0.0.1
  port: 48290
upstream:
  base-url: https://api.anthropic.com
  token-url: https://platform.claude.com/v1/oauth/token
client-key: 0123456789abcdef0123
state-dir: /tmp/router-state
accounts:
  - label: work
    access-token: sk-ant-oat01-aaa
    refresh-token: sk-ant-ort01-bbb
    expires-at: 2025-11-04T12:00:00Z
  - label: personal
    access-token: sk-ant-oat01-ccc
    expires-at: 1762257600000
    enabled: false
  - label: payg
    api-key: sk-ant-api03-ddd
    fallback: true
routing:
  strategy: fill-first
  account-ranking: headroom-first
  prefer-primary: true
  primary-account: work
  session-affinity: true
  session-affinity-idle-ttl-ms: 1800000
  spill-inflight: 4
  max-inflight-per-account: 8
  session-soft-limit: 0.95
  session-reset-tolerance-ms: 600000
  allow-overage: false
`;
const CAMEL = KEBAB.replace(/^(\s*-?\s*)([a-z]+(?:-[a-z]+)+):/gm, (_, pre: string, key: string) => `${pre}${kebabToCamel(key)}:`);

function ok(r: LoadResult) {
  if (!r.ok) assert.fail(`expected ok, got: ${r.error}`);
  return r.config;
}
function err(r: LoadResult): string {
  if (r.ok) assert.fail(`expected an error, got ${JSON.stringify(r.config)}`);
  assert.ok(r.error.length > 0);
  return r.error;
}
const routing = (key: string, value: unknown) => validateConfig({ routing: { [key]: value } });

describe('config/load', () => {
  it('a full kebab-case config is valid, and its camelCase twin gives the same result', () => {
    assert.notEqual(CAMEL, KEBAB);
    assert.ok(!/[a-z]-[a-z]+:/.test(CAMEL.replace(/https?:\S+/g, '')), 'every multi-word key was converted');
    const a = ok(parseConfigText(KEBAB));
    const b = ok(parseConfigText(CAMEL));
    assert.deepEqual(a, b);
    assert.equal(a.routing?.spillInflight, 4);
    assert.equal(a.routing?.accountRanking, 'headroom-first');
    assert.equal(a.accounts?.[0].expiresAt, Date.UTC(2025, 10, 4, 12, 0, 0), 'ISO expires-at → epoch ms');
    assert.equal(a.accounts?.[1].expiresAt, 1762257600000, 'epoch-ms expires-at kept');
    assert.equal(a.accounts?.[2].fallback, true);
    assert.equal(a.upstream?.baseUrl, 'https://api.anthropic.com');
  });

  it('an empty file and a comment-only file are valid (all defaults)', () => {
    assert.deepEqual(ok(parseConfigText('')), {});
    assert.deepEqual(ok(parseConfigText('# nothing here\n')), {});
  });

  it('policyFrom fills defaults and honours CLAUDE_ROUTER_QUOTA_ROUTING=off', () => {
    const cfg = ok(parseConfigText('routing:\n  spill-inflight: 3\n'));
    const p = policyFrom(cfg.routing, {});
    assert.equal(p.spillInflight, 3);
    assert.equal(p.sessionSoftLimit, DEFAULT_POLICY.sessionSoftLimit);
    assert.equal(p.quotaRouting, true);
    assert.equal(policyFrom(cfg.routing, { CLAUDE_ROUTER_QUOTA_ROUTING: ' OFF ' }).quotaRouting, false);
    assert.equal(p.sessionFingerprint, true, 'the fingerprint is on by default');
    assert.equal(policyFrom(ok(parseConfigText('routing:\n  session-fingerprint: false\n')).routing, {}).sessionFingerprint, false);
  });

  describe('routing key ranges (edges)', () => {
    const cases: [string, unknown[], unknown[]][] = [
      ['session-affinity-idle-ttl-ms', [60_000, 86_400_000], [59_999, 86_400_001, 60_000.5, '60000']],
      ['spill-inflight', [0, 100], [-1, 101, 1.5]],
      ['max-inflight-per-account', [0, 10_000], [-1, 10_001, 2.5]],
      ['queue-wait-max-ms', [0, 600_000], [-1, 600_001, 1.5, '1000']],
      ['client-retry-horizon-ms', [0, 600_000, 3_600_000], [-1, 3_600_001, 1.5, '600000']],
      ['grant-warn-days', [0, 21, 365], [-1, 366, 1.5, '21']],
      ['admission-ramp', [true, false], ['true', 1]],
      ['cost-lease-margin', [1, 1.15, 3], [0.99, 3.01, '1.2']],
      ['max-buffered-body-bytes', [33_554_432, 68_719_476_736], [33_554_431, 68_719_476_737, 0, 4e7 + 0.5]],
      ['session-soft-limit', [0.0001, 0.97, 1], [0, -0.1, 1.0001, '0.9']],
      ['session-reset-tolerance-ms', [1, 86_400_000], [0, 86_400_001, 0.5]],
      ['strategy', ['fill-first', 'round-robin'], ['random', '']],
      ['account-ranking', ['expiry-first', 'headroom-first'], ['expiry', 1]],
      ['prefer-primary', [true, false], ['yes', 1]],
      ['session-affinity', [true, false], ['true']],
      ['session-fingerprint', [true, false], ['false', 0]],
      ['allow-overage', [true, false], [0]],
      ['primary-account', ['work'], ['', 5]],
    ];
    for (const [key, good, bad] of cases) {
      it(`${key}: accepts ${good.map((v) => JSON.stringify(v)).join(', ')}; rejects ${bad.map((v) => JSON.stringify(v)).join(', ')}`, () => {
        for (const v of good) ok(routing(key, v));
        for (const v of bad) {
          const e = err(routing(key, v));
          assert.match(e, new RegExp(`^routing\\.${key}: \\S`), `${JSON.stringify(v)}: ${e}`);
        }
      });
    }

    it('the error names the bound it broke', () => {
      assert.match(err(routing('spill-inflight', 101)), /^routing\.spill-inflight: .*100/);
      assert.match(err(routing('session-affinity-idle-ttl-ms', 59_999)), /^routing\.session-affinity-idle-ttl-ms: .*60000/);
      assert.match(err(routing('max-buffered-body-bytes', 1_000_000)), /^routing\.max-buffered-body-bytes: must be at least 33554432 \(32 MB/);
    });
  });

  describe('errors name the key path in kebab-case and the reason', () => {
    it('an unknown key is rejected with its name', () => {
      const e = err(parseConfigText('routing:\n  spill-inflite: 3\n'));
      assert.match(e, /^routing: .*spill-inflite/);
      assert.match(err(parseConfigText('routng:\n  spill-inflight: 3\n')), /^\(top level\): .*routng/);
      assert.match(err(parseConfigText('accounts:\n  - label: a\n    acess-token: x\n')), /^accounts\.0: .*acess-token/);
    });

    it('an unknown key that is no setting name (a token pasted as a key) is named by its place, never echoed', () => {
      const token = 'sk-ant-oat01-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
      for (const [text, where] of [
        [`routing:\n  ${token}: 1\n`, 'routing'],
        [`${token}: x\n`, '(top level)'],
        [`accounts:\n  - label: a\n    ${token}: true\n`, 'accounts.0'],
      ]) {
        const e = err(parseConfigText(text));
        assert.match(e, new RegExp(`^${where.replace(/[().]/g, '\\$&')}: unknown keys? \\(a key of \\d+ characters, not shown`), e);
        for (const fragment of ['AbCdEf', 'ab-cd-ef', 'abcdef', '0123456789']) assert.ok(!e.toLowerCase().includes(fragment.toLowerCase()), `${fragment} in ${e}`);
      }
      // Both spellings of such a key: named by its place too.
      const twice = err(parseConfigText('routing:\n  sk-ant-oat01-abcdef0123: 1\n  skAntOat01Abcdef0123: 2\n'));
      assert.match(twice, /^routing\.\(a key of \d+ characters, not shown.*\): given twice/);
      assert.ok(!/abcdef/i.test(twice), twice);
    });

    it('a __proto__ key is an unknown key, not a way to smuggle keys in', () => {
      assert.match(err(parseConfigText('routing:\n  __proto__: {spill-inflight: 5}\n')), /^routing: .*__proto__/);
      assert.match(err(validateConfig(JSON.parse('{"routing":{"__proto__":{"spillInflight":5}}}'))), /^routing: .*__proto__/);
      assert.match(err(parseConfigText('__proto__: {listen: {port: 1}}\n')), /^\(top level\): .*__proto__/);
    });

    it('an unknown camelCase key is named in kebab-case', () => {
      assert.match(err(validateConfig({ routing: { spillInflite: 3 } })), /routing: .*spill-inflite/);
    });

    it('both spellings of one key are rejected', () => {
      const e = err(parseConfigText('routing:\n  spill-inflight: 1\n  spillInflight: 2\n'));
      assert.match(e, /routing\.spill-inflight: given twice/);
      assert.match(err(parseConfigText('client-key: 0123456789abcdef0\nclientKey: 0123456789abcdef0\n')), /^client-key: given twice/);
    });

    it('a key given twice in YAML is a YAML error', () => {
      assert.match(err(parseConfigText('routing:\n  spill-inflight: 1\n  spill-inflight: 2\n')), /^YAML syntax error at line 3, column \d+ \(duplicate key\)$/);
    });

    it('a non-loopback listen.host is rejected', () => {
      for (const host of ['0.0.0.0', '192.168.1.2', 'example.com', '::']) {
        assert.match(err(validateConfig({ listen: { host } })), /^listen\.host: must be a loopback address/, host);
      }
      for (const host of ['127.0.0.1', 'localhost', '::1']) ok(validateConfig({ listen: { host } }));
      assert.match(err(validateConfig({ listen: { port: 65536 } })), /^listen\.port: /);
    });

    it('duplicate account labels are rejected at the second one', () => {
      const e = err(parseConfigText('accounts:\n  - label: a\n  - label: b\n  - label: a\n'));
      assert.match(e, /^accounts\.2\.label: duplicate label "a"/);
    });

    it('access-token together with api-key is rejected', () => {
      const e = err(parseConfigText('accounts:\n  - label: a\n    access-token: t\n    api-key: k\n'));
      assert.match(e, /^accounts\.0: give either access-token or api-key, not both/);
    });

    it('expires-at: ISO-8601, epoch ms (number or digit string); garbage rejected with its path', () => {
      const exp = (v: unknown) => validateConfig({ accounts: [{ label: 'a', expiresAt: v }] });
      assert.equal(ok(exp('2025-11-04T12:00:00.000Z')).accounts?.[0].expiresAt, Date.UTC(2025, 10, 4, 12));
      assert.equal(ok(exp(1762257600000)).accounts?.[0].expiresAt, 1762257600000);
      assert.equal(ok(exp('1762257600000')).accounts?.[0].expiresAt, 1762257600000);
      assert.match(err(exp('tomorrow-ish')), /^accounts\.0\.expires-at: must be an ISO-8601 date or epoch milliseconds/);
      assert.match(err(exp(-5)), /^accounts\.0\.expires-at: /);
    });

    it('a short client-key names its key and reason', () => {
      assert.match(err(parseConfigText('client-key: short\n')), /^client-key: must be at least 16 characters/);
    });

    it('a YAML syntax error gives a YAML message', () => {
      const e = err(parseConfigText('routing:\n  spill-inflight: [1, 2\n'));
      assert.match(e, /^YAML syntax error at line \d+, column \d+/);
      const leak = err(parseConfigText('accounts:\n  - label: a\n    refresh-token: sk-ant-ort01-SECRET: x}\n'));
      assert.ok(!leak.includes('sk-ant-ort01-SECRET'), `a YAML error never quotes the source line: ${leak}`);
      assert.match(err(parseConfigText('a: "unterminated\n')), /^YAML syntax error at line \d+/);
    });

    it('a document that is not a mapping is named at the top level', () => {
      assert.match(err(parseConfigText('- a\n- b\n')), /^\(top level\): /);
      assert.match(err(parseConfigText('just a string')), /^\(top level\): /);
    });
  });

  describe('hostile YAML', () => {
    it('an alias bomb is an error result, not a throw', () => {
      const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
        .concat(['b', 'c', 'd', 'e', 'f', 'g'].map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefg'[i]}`).join(',')}]`))
        .join('\n');
      let r: LoadResult | undefined;
      assert.doesNotThrow(() => {
        r = parseConfigText(bomb);
      });
      assert.match(err(r!), /^YAML/);
    });

    it('nested collection keys are rejected quickly instead of being stringified', function () {
      this.timeout(5_000);
      const n = 400; // yaml's toJS takes minutes (and then runs out of memory) on this
      const started = Date.now();
      const e = err(parseConfigText('{'.repeat(n) + '}'.repeat(n)));
      assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
      assert.match(e, /^YAML/);
      assert.match(err(parseConfigText('? [a, b]\n: 1\n')), /^YAML/);
    });

    it('deep nesting is an error result, not a crash', () => {
      err(parseConfigText('['.repeat(5_000)));
      err(parseConfigText('- '.repeat(3_000) + 'x'));
    });
  });

  describe('loadConfigFile', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'router-config-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('reads a valid file; prefixes errors with the file name; a missing file is an error result', async () => {
      const good = join(dir, 'good.yaml');
      writeFileSync(good, KEBAB);
      assert.equal((await loadConfigFile(good)).ok, true);
      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, 'routing:\n  spill-inflight: 101\n');
      const r = await loadConfigFile(bad);
      assert.ok(!r.ok && r.error.startsWith(`${bad}: routing.spill-inflight: `), JSON.stringify(r));
      const missing = await loadConfigFile(join(dir, 'nope.yaml'));
      assert.ok(!missing.ok && /ENOENT/.test(missing.error));
    });
  });

  describe('keys', () => {
    it('kebab ↔ camel round-trips every routing key', () => {
      for (const k of ['session-affinity-idle-ttl-ms', 'spill-inflight', 'max-inflight-per-account', 'allow-overage', 'primary-account']) {
        assert.equal(camelToKebab(kebabToCamel(k)), k);
      }
    });
  });

  describe('properties (seeded)', () => {
    const RUNS = { seed: 777, numRuns: 500 } as const;
    const yamlish = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc
        .array(
          fc.constantFrom(
            'routing:',
            '  spill-inflight: ',
            '  spillInflight: ',
            '- ',
            'accounts:',
            '  - label: a',
            ': ',
            '&a ',
            '*a',
            '[',
            ']',
            '{',
            '}',
            '? ',
            '"',
            "'",
            '\n',
            '  ',
            '101',
            '-1',
            'true',
            '0.5',
            '!!str ',
            '<<: ',
          ),
          { maxLength: 30 },
        )
        .map((xs) => xs.join('')),
    );

    it('parseConfigText never throws, and an invalid result always carries a non-empty error', () => {
      fc.assert(
        fc.property(yamlish, (text) => {
          const r = parseConfigText(text);
          if (!r.ok) assert.ok(typeof r.error === 'string' && r.error.trim().length > 0);
        }),
        RUNS,
      );
    });

    it('validateConfig never throws on arbitrary data', () => {
      fc.assert(
        fc.property(fc.anything(), (data) => {
          const r = validateConfig(data);
          if (!r.ok) assert.ok(r.error.length > 0);
        }),
        RUNS,
      );
    });
  });
});

describe('config/load: values that would misroute tokens or collide with internals', () => {
  const error = (text: string) => {
    const r = parseConfigText(text);
    assert.equal(r.ok, false, text);
    return (r as { error: string }).error;
  };
  it('refuses reserved and blank account labels', () => {
    assert.match(error('accounts:\n  - label: __proto__\n    access-token: sk-ant-oat01-x\n'), /accounts\.0\.label: is a reserved name/);
    assert.match(error('accounts:\n  - label: constructor\n'), /reserved/);
    assert.match(error('accounts:\n  - label: "   "\n'), /accounts\.0\.label: must not be blank/);
  });
  it('refuses upstream URLs that are not http(s)', () => {
    assert.match(error('upstream:\n  token-url: file:///etc/passwd\n'), /upstream\.token-url: must be an http\(s\) URL/);
    assert.match(error('upstream:\n  base-url: "javascript:alert(1)"\n'), /upstream\.base-url/);
  });
  it('refuses a client key with spaces (it could never match)', () => {
    assert.match(error('client-key: "                "\n'), /client-key: must not contain spaces/);
  });
});
