import { strict as assert } from 'node:assert';
import { isAllowedStatus, isRejectionStatus, normalizeStatus } from '../../src/quota/status';
import { isFamilyKey, modelFamily } from '../../src/quota/family';

describe('quota/status', () => {
  it('allowed and allowed_warning are allowed, in any case and with whitespace', () => {
    for (const s of ['allowed', 'allowed_warning', ' ALLOWED ', 'Allowed_Warning']) assert.equal(isAllowedStatus(s), true, s);
  });
  it('everything else is not allowed', () => {
    for (const s of ['rejected', 'throttled', 'allowed-warning', 'warning', '', undefined, null]) {
      assert.equal(isAllowedStatus(s), false, String(s));
    }
  });
  it('rejected and throttled are rejections, in any case', () => {
    for (const s of ['rejected', 'throttled', ' REJECTED', 'Throttled\t']) assert.equal(isRejectionStatus(s), true, s);
  });
  it('other values, including allowed ones and unknown ones, are not rejections', () => {
    for (const s of ['allowed', 'allowed_warning', 'blocked', '', undefined, null]) {
      assert.equal(isRejectionStatus(s), false, String(s));
    }
  });
  it('normalizeStatus trims and lower-cases, blank → undefined', () => {
    assert.equal(normalizeStatus(' Allowed_Warning '), 'allowed_warning');
    assert.equal(normalizeStatus('  '), undefined);
    assert.equal(normalizeStatus(3), undefined);
  });
});

describe('quota/family', () => {
  it('finds the family of model ids and display names', () => {
    assert.equal(modelFamily('claude-sonnet-4-5-20250929'), 'sonnet');
    assert.equal(modelFamily('claude-3-5-sonnet-20241022'), 'sonnet');
    assert.equal(modelFamily('claude-opus-4-1'), 'opus');
    assert.equal(modelFamily('claude-haiku-4-5[1m]'), 'haiku');
    assert.equal(modelFamily('Claude Sonnet 4.5'), 'sonnet');
    assert.equal(modelFamily('Sonnet'), 'sonnet');
    assert.equal(modelFamily('Opus 4'), 'opus');
  });
  it('has no family for empty or numeric-only names', () => {
    assert.equal(modelFamily(''), undefined);
    assert.equal(modelFamily('claude'), undefined);
    assert.equal(modelFamily('claude 4.5'), undefined);
    assert.equal(modelFamily(undefined), undefined);
  });
  it('isFamilyKey refuses keys that could reach Object.prototype', () => {
    assert.equal(isFamilyKey('__proto__'), false);
    assert.equal(isFamilyKey(''), false);
    assert.equal(isFamilyKey('Sonnet'), false);
    assert.equal(isFamilyKey('sonnet'), true);
  });
});
