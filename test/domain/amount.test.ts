import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAmount, showAmount } from '../../src/domain/amount.js';
import { signInRequired } from '../../src/domain/sign-in-policy.js';
import { formatAmount } from '../../src/approval-server/pages.js';
import { ApproverSignIn } from '../../src/config/schema.js';

const read = (text: string, decimal: '.' | ',' = '.') => {
  const amount = parseAmount(text, decimal);
  return amount && { cents: amount.cents, plain: amount.plain };
};

describe('parseAmount', () => {
  test('a decimal point with comma grouping, and currency marks before or after', () => {
    assert.deepEqual(read('1,234.50'), { cents: 123450n, plain: '1234.50' });
    assert.deepEqual(read('¥1,234.50'), { cents: 123450n, plain: '1234.50' });
    assert.deepEqual(read('￥ 1,234.5'), { cents: 123450n, plain: '1234.5' });
    assert.deepEqual(read('1,234.50 元'), { cents: 123450n, plain: '1234.50' });
    assert.deepEqual(read('USD 1,234,567.00'), { cents: 123456700n, plain: '1234567.00' });
    assert.deepEqual(read('12'), { cents: 1200n, plain: '12' });
    assert.deepEqual(read('  0.05 '), { cents: 5n, plain: '0.05' });
  });

  test('a declared decimal comma: dots, spaces and apostrophes group', () => {
    assert.deepEqual(read('1.234,50', ','), { cents: 123450n, plain: '1234.50' });
    assert.deepEqual(read('1 234,50 €', ','), { cents: 123450n, plain: '1234.50' });
    assert.deepEqual(read('1\u202f234,5', ','), { cents: 123450n, plain: '1234.5' });
    assert.deepEqual(read("1'234.50"), { cents: 123450n, plain: '1234.50' });
    assert.deepEqual(read('1.234', ','), { cents: 123400n, plain: '1234' });
  });

  test('negatives: a minus sign before or after the currency, and accounting parentheses', () => {
    assert.deepEqual(read('(12.00)'), { cents: -1200n, plain: '-12.00' });
    assert.deepEqual(read('¥(1,234.50)'), { cents: -123450n, plain: '-1234.50' });
    assert.deepEqual(read('(¥1,234.50)'), { cents: -123450n, plain: '-1234.50' });
    assert.deepEqual(read('-¥12.00'), { cents: -1200n, plain: '-12.00' });
    assert.deepEqual(read('¥-12.00'), { cents: -1200n, plain: '-12.00' });
    assert.deepEqual(read('\u221212,00', ','), { cents: -1200n, plain: '-12.00' });
    assert.deepEqual(read('-0.00'), { cents: 0n, plain: '0.00' });
  });

  test('what could mean two things, or is no amount, is not read', () => {
    for (const text of ['1.234,50', '1,23.50', '12,3456.00', '1.234.567', '1.005', '', '—', 'abc', '1e3', '(-12)', '.5', '12.']) {
      assert.equal(parseAmount(text), undefined, `${JSON.stringify(text)} with a decimal point`);
    }
    for (const text of ['1,234.50', '1,234', '1.23,50']) {
      assert.equal(parseAmount(text, ','), undefined, `${JSON.stringify(text)} with a decimal comma`);
    }
  });

  test('showAmount writes ¥ with grouping and two decimals', () => {
    assert.equal(showAmount(parseAmount('1234.5')!), '¥1,234.50');
    assert.equal(showAmount(parseAmount('(1234567)')!), '-¥1,234,567.00');
    assert.equal(formatAmount('1234.5'), '¥1,234.50', 'the approval page');
    assert.equal(formatAmount('see attachment'), 'see attachment');
  });
});

describe('the sign-in threshold compares amounts read by parseAmount', () => {
  const policy = ApproverSignIn.parse({ issuer: 'embedded', client_id: 'c', required_for: { actions: [], amount_above: '1000.00' } });
  test('above, at and below the threshold, with grouping and currency', () => {
    assert.equal(signInRequired(policy, { action: 'refund', amount: '1000.01' }), true);
    assert.equal(signInRequired(policy, { action: 'refund', amount: '¥1,000.01' }), true);
    assert.equal(signInRequired(policy, { action: 'refund', amount: '1000' }), false);
    assert.equal(signInRequired(policy, { action: 'refund', amount: '(5,000.00)' }), false, 'a credit is not above the threshold');
  });
  test('an amount with more than two decimals is not truncated under the threshold: sign-in is asked', () => {
    assert.equal(signInRequired(policy, { action: 'refund', amount: '1000.009' }), true);
    assert.equal(signInRequired(policy, { action: 'refund', amount: 'n/a' }), true);
  });
});
