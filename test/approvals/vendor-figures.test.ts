import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatYuan } from '../../backoffices/simulator/format.js';
import { useHarness } from '../support/embedded.js';
import { APPROVERS, approvalRequestFor, assertRefusedBeforeApproval, linkFromInbox } from './helpers.js';
import { OVERCHARGE_BILL, openLink, postDecision, refundTask } from './helpers.js';

/**
 * The vendor's own figures on the simulator (sitepacks/vendor-sim.yaml, refund: `approval.show: [amount]`,
 * `confirm: { param: amount, equals: amount }`): Snapshot reads the bill's amount from its detail page, the approver
 * sees it in the mail and on the page labelled as the vendor's, and a task whose typed amount is not the vendor's is
 * refused before anyone is asked. The journal is the truth.
 */
describe("the vendor's figures in the approval", () => {
  const h = useHarness();

  const refunds = async () => (await h.control.journal()).filter((e) => e.action === 'refund');
  const events = async (key: string) => await h.paperclip.services.audit.events(key);
  const vendorAmount = async () => formatYuan((await h.control.state()).bills.find((b) => b.billNo === OVERCHARGE_BILL)!.amountCents);

  test("a typed amount that is not the vendor's is refused before approval: rejected, no request, no mail, journal empty", async () => {
    await h.control.reset();
    const shown = await vendorAmount();
    const { task, key } = await refundTask(h, 'T-figures-wrong');
    const wrong = { ...task, params: { ...task.params, amount: '120.00' } };
    const reason = `VendorFigureMismatchError: the task's amount ¥120.00 is not the vendor's ${shown} (actions.refund.confirm)`;
    await assertRefusedBeforeApproval(h, wrong, key, reason);

    const trail = await events(key);
    const types = trail.map((e) => e.type);
    assert.ok(!types.includes('approval_requested') && !types.includes('write_started'), types.join(', '));
    assert.deepEqual(trail.find((e) => e.type === 'pre_state_registered')?.data['figures'], { amount: shown });
    assert.match(
      String(trail.find((e) => e.type === 'rejected')?.data['reason']),
      /^VendorFigureMismatchError: the task's amount ¥120\.00/,
    );
  });

  test("the approval mail and page show the vendor's amount, read from the vendor with the pre-state; approved, refunded once", async () => {
    await h.control.reset();
    const shown = await vendorAmount();
    const { task, key } = await refundTask(h, 'T-figures-shown');
    assert.notEqual(task.params.amount, shown, "the task's amount is a plain decimal; the vendor's is as its page writes it");
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    assert.deepEqual(request.vendorFigures, { amount: shown }, 'the request stores the figure the vendor shows');

    // The request is stored before the mails go out: wait for the mail (its link), then read it.
    const link = await linkFromInbox(h, request.approvalId, APPROVERS[0]);
    const mail = (await h.paperclip.stack.fetchEmails()).find(
      (m) => m.destination.to.includes(APPROVERS[0]) && m.body.text?.includes(request.approvalId),
    );
    assert.ok(mail?.body.text, 'the approval mail is in the local SES inbox');
    assert.match(
      mail.body.text,
      /供应商数据 The vendor's figures \(read from the vendor before this request, not from the task\):\n {2}amount: (.+)\n/,
    );
    assert.ok(mail.body.text.includes(`  amount: ${shown}\n`), `the mail shows the vendor's ${shown}`);
    assert.ok(mail.body.text.includes("(任务参数 the task's parameter)"), "the task's amount is labelled as the task's");

    const page = await openLink(link);
    assert.equal(page.status, 200);
    assert.ok(page.html.includes('供应商数据'), "the page has the vendor's figures");
    assert.ok(page.html.includes(`<code>amount</code> <span class="amount">${shown}</span>`), `the page shows the vendor's ${shown}`);

    const trail = await events(key);
    const registered = trail.find((e) => e.type === 'pre_state_registered');
    assert.deepEqual(registered?.data['figures'], { amount: shown }, 'the audit chain records the figures read');
    const asked = trail.find((e) => e.type === 'approval_requested');
    assert.deepEqual(asked?.data['figures'], { amount: shown }, 'and what the approvers were shown');
    assert.ok(trail.indexOf(registered!) < trail.indexOf(asked!), 'read before anyone was asked');
    assert.deepEqual(await refunds(), [], 'nothing refunded before the decision');

    const decided = await postDecision(h, link, { ...page.fields, decision: 'approve' }, { cookie: page.cookie! });
    assert.ok(decided.status < 400, decided.html.slice(0, 400));
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    assert.equal((await refunds()).length, 1, 'refunded exactly once');
  });
});
