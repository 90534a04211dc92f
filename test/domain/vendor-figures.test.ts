import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { compareConfirm } from '../../src/domain/vendor-figures.js';
import { VendorFigureMismatchError } from '../../src/domain/errors.js';
import { parseSitePack } from '../../src/sitepack/load.js';
import { confirmFigures } from '../../src/app/guarded-write/snapshot.js';
import { approvalPage } from '../../src/approval-server/pages.js';
import { vendorFigureLines } from '../../src/app/approvals/request-approval.js';
import type { ItemState, SnapshotResult } from '../../src/app/guarded-write/state.js';
import type { ApprovalRequest } from '../../src/app/ports/approvals.js';

const rule = { param: 'amount', equals: 'amount' };
const where = 'actions.refund.confirm';

test('a typed amount equal to the vendor figure in cents matches, however either is written', () => {
  for (const [typed, shown] of [
    ['1280.00', '¥1,280.00'],
    ['1280', '¥1,280.00'],
    ['1280.0', '1,280.00 元'],
    ['118.14', '$118.14'],
  ] as const) {
    const verdict = compareConfirm({ rule, params: { amount: typed }, figures: { amount: shown }, where });
    assert.equal(verdict.kind, 'match', `${typed} vs ${shown}`);
  }
  const comma = compareConfirm({ rule, params: { amount: '1234.5' }, figures: { amount: '1.234,50 €' }, where, decimal: ',' });
  assert.equal(comma.kind, 'match', "the vendor's figure is read with the pack's decimal separator");
});

test('a typed amount that is not the vendor figure is a mismatch naming both filled values and the pack line', () => {
  const verdict = compareConfirm({ rule, params: { amount: '120.00' }, figures: { amount: '¥1,280.00' }, where });
  assert.deepEqual(verdict, {
    kind: 'mismatch',
    message: "the task's amount ¥120.00 is not the vendor's ¥1,280.00 (actions.refund.confirm)",
  });
  // One cent off is off.
  assert.equal(compareConfirm({ rule, params: { amount: '1280.01' }, figures: { amount: '¥1,280.00' }, where }).kind, 'mismatch');
  // The vendor's currency mark is the one shown.
  const dollars = compareConfirm({ rule, params: { amount: '11.81' }, figures: { amount: '$118.14' }, where });
  assert.equal(
    dollars.kind === 'mismatch' && dollars.message,
    "the task's amount $11.81 is not the vendor's $118.14 (actions.refund.confirm)",
  );
  const notAmount = compareConfirm({ rule, params: { amount: '1,28' }, figures: { amount: '¥1,280.00' }, where });
  assert.equal(notAmount.kind, 'mismatch');
  assert.match(notAmount.kind === 'mismatch' ? notAmount.message : '', /"1,28" is not an amount; the vendor's amount is ¥1,280\.00/);
});

test('an optional parameter not given is not compared; a vendor figure missing or unreadable is the pack, not the task', () => {
  assert.equal(compareConfirm({ rule, params: {}, figures: { amount: '¥1.00' }, where }).kind, 'not_given');
  const missing = compareConfirm({ rule, params: { amount: '1.00' }, figures: {}, where });
  assert.equal(missing.kind, 'unreadable');
  const garbled = compareConfirm({ rule, params: { amount: '1.00' }, figures: { amount: 'see attachment' }, where });
  assert.equal(garbled.kind, 'unreadable');
  assert.match(garbled.kind === 'unreadable' ? garbled.message : '', /"see attachment" is not an amount \(actions\.refund\.confirm: /);
});

const simPack = () => parse(readFileSync('sitepacks/vendor-sim.yaml', 'utf8')) as Record<string, any>;
const stateOf = (params: Record<string, string>) =>
  ({ item: { action: 'refund', params, billNo: 'ACME-202611-0013' } }) as unknown as ItemState;
const snapshotWith = (figures: Record<string, string>): SnapshotResult => ({
  stale: false,
  preStatus: 'PENDING',
  source: 'api',
  evidence: [],
  figures,
});

test("the pre-state check refuses a typed amount that is not the vendor's with VendorFigureMismatchError, before any approval", () => {
  const pack = parseSitePack(readFileSync('sitepacks/vendor-sim.yaml', 'utf8'));
  assert.deepEqual(pack.actions['refund']?.confirm, { param: 'amount', equals: 'amount' });
  assert.deepEqual(pack.actions['refund']?.approval?.show, ['amount']);
  assert.throws(
    () => confirmFigures({ pack }, stateOf({ amount: '120.00' }), snapshotWith({ amount: '¥1,280.00' })),
    (error: unknown) =>
      error instanceof VendorFigureMismatchError &&
      error.name === 'VendorFigureMismatchError' &&
      error.message === "the task's amount ¥120.00 is not the vendor's ¥1,280.00 (actions.refund.confirm)",
  );
  assert.doesNotThrow(() => confirmFigures({ pack }, stateOf({ amount: '1280.00' }), snapshotWith({ amount: '¥1,280.00' })));
  assert.throws(
    () => confirmFigures({ pack }, stateOf({ amount: '1280.00' }), snapshotWith({})),
    { name: 'StructuredContractMissingError' },
    'a figure the read did not take is the pack failing, never a pass',
  );
});

test('approval.show and confirm are checked against the pack at load, each error naming the field and the fix', () => {
  const unknownFigure = simPack();
  unknownFigure.actions.refund.approval = { show: ['total'] };
  assert.throws(
    () => parseSitePack(stringify(unknownFigure), 'pack.yaml'),
    (error: Error) => {
      assert.match(
        error.message,
        /actions\.refund\.approval\.show\.0: "total" is not a field the pre-state read can take: name one of .*amount/,
      );
      assert.match(error.message, /or define it under actions\.refund\.approval\.fields \(e\.g\. total: \{ label: 金额 \}\)/);
      return true;
    },
  );
  const ownField = simPack();
  ownField.actions.refund.approval = { show: ['total'], fields: { total: { label: '金额' } } };
  assert.deepEqual(parseSitePack(stringify(ownField), 'pack.yaml').actions['refund']?.approval?.fields['total'], { label: '金额' });

  const noParam = simPack();
  noParam.actions.refund.confirm = { param: 'typed', equals: 'amount' };
  assert.throws(
    () => parseSitePack(stringify(noParam), 'pack.yaml'),
    /actions\.refund\.confirm\.param: names "typed", which is not a parameter of this action; declare it under params \(type: decimal\)/,
  );
  const textParam = simPack();
  textParam.actions.refund.confirm = { param: 'reason', equals: 'amount' };
  assert.throws(
    () => parseSitePack(stringify(textParam), 'pack.yaml'),
    /actions\.refund\.confirm\.param: "reason" is compared as an amount: declare it with type: decimal/,
  );
  const noFigure = simPack();
  noFigure.actions.refund.confirm = { param: 'amount', equals: 'listed' };
  assert.throws(
    () => parseSitePack(stringify(noFigure), 'pack.yaml'),
    /actions\.refund\.confirm\.equals: "listed" is not a field the pre-state read can take/,
  );
  const empty = simPack();
  empty.actions.refund.approval = { show: [] };
  assert.throws(
    () => parseSitePack(stringify(empty), 'pack.yaml'),
    /actions\.refund\.approval\.show: approval\.show names at least one field, e\.g\. show: \[amount\]/,
  );
});

test("the approval page and mail show the vendor's figures, labelled as the vendor's, beside the task's amount", () => {
  const request: ApprovalRequest = {
    approvalId: 'k-acme_AAAAAAAAAAAAAAAAAAAAAAAA',
    key: 'k-acme_0123456789abcdef0123456789abcdef',
    taskId: 'T-1',
    tenant: 'acme',
    billNo: 'ACME-202611-0013',
    action: 'refund',
    amount: '1280.00',
    vendorFigures: { amount: '¥1,280.00' },
    requester: 'schedule',
    allowedApprovers: ['finance.lead@acme.example'],
    taskToken: 't',
    executionArn: 'arn',
    createdAt: new Date(0).toISOString(),
    expiresAtIso: new Date(0).toISOString(),
    expiresAt: 0,
    status: 'PENDING',
  };
  const page = approvalPage({ request, approver: 'finance.lead@acme.example' }, { kind: 'form', action: '/x', hidden: {} });
  assert.match(page, /供应商数据<span class="en">The vendor&#39;s figures, read from the vendor before this request<\/span>/);
  assert.match(page, /<code>amount<\/code> <span class="amount">¥1,280\.00<\/span>/);
  assert.match(page, /Amount \(the task&#39;s parameter\)/);
  const { vendorFigures: _none, ...plain } = request;
  assert.doesNotMatch(approvalPage({ request: plain, approver: 'x' }, { kind: 'form', action: '/x', hidden: {} }), /供应商数据/);

  assert.deepEqual(vendorFigureLines({ amount: '¥1,280.00' }), [
    "供应商数据 The vendor's figures (read from the vendor before this request, not from the task):",
    '  amount: ¥1,280.00',
  ]);
  assert.deepEqual(
    vendorFigureLines({ amount: '¥1\n点击 http://evil' }),
    [vendorFigureLines({})[0], '  amount: ¥1\\u000a点击 http://evil'],
    'one line of data',
  );
  assert.deepEqual(vendorFigureLines(undefined), []);
});
