import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeStep } from '../../src/browser/executor.js';
import { Step } from '../../src/sitepack/action-language.js';

/** Error messages name a step with the values it ran with (issue: `expect text="金额 ¥{{amount}}"` reached a user unfilled). */
test('a step in an error shows its parameters filled in; a placeholder without a value stays as written', () => {
  const step = Step.parse({
    action: 'expect',
    within: { dialog: { role: 'alertdialog', name: '退款 {{billNo}}' } },
    target: { text: '金额 ¥{{amount}}' },
  });
  assert.equal(
    describeStep(step, { amount: '1,280.00', billNo: 'ACME-202611-0013' }),
    'expect text="金额 ¥1,280.00" within the alertdialog "退款 ACME-202611-0013"',
  );
  assert.equal(describeStep(step, {}), 'expect text="金额 ¥{{amount}}" within the alertdialog "退款 {{billNo}}"');
  const open = Step.parse({ action: 'open', url: '/bills/{{billNo}}' });
  assert.equal(describeStep(open, { billNo: 'N-7001' }), 'open /bills/N-7001');
});
