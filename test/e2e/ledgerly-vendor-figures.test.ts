import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { showAmount } from '../../src/domain/amount.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { startLedgerlyHarness, useHarness } from '../support/embedded.js';
import { approvalRequestFor, assertRefusedBeforeApproval, linkFromInbox, openLink, postDecision } from '../approvals/helpers.js';

/**
 * The vendor's own figures on Ledgerly (sitepacks/ledgerly.yaml, refund: `approval.show: [amount]`, `confirm`), the
 * typed-amount refund alertdialog behind the More menu: Snapshot reads the record's Amount from its detail page, the
 * approver sees it in the mail and on the page, and a task whose amount is not Ledgerly's is refused before anyone is
 * asked. Ledgerly's journal is the truth.
 */
describe("the vendor's figures in the approval, on Ledgerly", () => {
  const h = useHarness(startLedgerlyHarness);

  // acme: N-7001 a billing error, N-7002 a duplicate charge (the refundable one).
  const small = { seed: 3, orgs: [{ id: 'acme', billingErrors: 1, duplicateCharges: 1, resolved: 0, refunded: 0 }] };
  const BILL = 'N-7002';
  const refund = (taskId: string, params: Record<string, string> = {}) => ({
    taskId,
    tenant: 'acme',
    billNo: BILL,
    action: 'refund',
    requestedBy: 'schedule',
    params,
  });
  /** The record's Amount as Ledgerly's page writes it ($1,234.50). */
  const ledgerlyAmount = async () => {
    const record = (await h.control.state()).discrepancies.find((d) => d.id === BILL);
    assert.equal(record?.type, 'duplicate_charge', `${BILL} is the refundable duplicate charge`);
    return showAmount({ cents: BigInt(record!.amountCents), plain: '' }, '$');
  };

  test("a given amount that is not Ledgerly's is refused before approval: rejected, no request, no mail, journal empty", async () => {
    await h.control.reset(small);
    const shown = await ledgerlyAmount();
    const task = refund('T-ledgerly-figures-wrong', { amount: '0.01' });
    const key = idempotencyKey(task);
    const reason = `VendorFigureMismatchError: the task's amount $0.01 is not the vendor's ${shown} (actions.refund.confirm)`;
    await assertRefusedBeforeApproval(h, task, key, reason);
  });

  test("the approval mail and page show Ledgerly's amount; approved, refunded once through the typed-amount dialog", async () => {
    await h.control.reset(small);
    const shown = await ledgerlyAmount();
    const task = refund('T-ledgerly-figures-shown');
    const key = idempotencyKey(task);
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    assert.deepEqual(request.vendorFigures, { amount: shown }, 'read from the record page, the task gave no amount');

    // The request is stored before the mails go out: wait for the mail (its link), then read it.
    const link = await linkFromInbox(h, request.approvalId, 'finance.lead@acme.example');
    const mail = (await h.paperclip.stack.fetchEmails()).find(
      (m) => m.destination.to.includes('finance.lead@acme.example') && m.body.text?.includes(request.approvalId),
    );
    const text = mail?.body.text ?? '';
    assert.ok(text.includes(`供应商数据 The vendor's figures`), 'the mail has the vendor figures');
    assert.ok(text.includes(`  amount: ${shown}\n`), `the mail shows Ledgerly's ${shown}`);
    const page = await openLink(link);
    assert.equal(page.status, 200);
    assert.ok(page.html.includes(`<code>amount</code> <span class="amount">${shown}</span>`), `the page shows Ledgerly's ${shown}`);
    const registered = (await h.paperclip.services.audit.events(key)).find((e) => e.type === 'pre_state_registered');
    assert.deepEqual(registered?.data['figures'], { amount: shown }, 'the audit chain records the figures read');

    const decided = await postDecision(h, link, { ...page.fields, decision: 'approve' }, { cookie: page.cookie! });
    assert.ok(decided.status < 400, decided.html.slice(0, 400));
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    const refunds = (await h.control.journal()).filter((e) => e.billNo === BILL && e.action === 'refund');
    assert.equal(refunds.length, 1, 'refunded once');
  });
});
