import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import { asList, statementsOf } from '../../twin/aws/iam/policy.js';
import { startHarness, type Harness } from '../support/embedded.js';
import { APPROVERS, approvalRequestFor, configWith, linkFromInbox, openLink, refundTask } from './helpers.js';

/**
 * Nobody decides in time: RequestApproval's TimeoutSeconds (from
 * write_policy.approval_timeout_seconds) ends the wait and nothing executes.
 * A short timeout in a test config keeps this fast.
 */
describe('approval timeout', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ configPath: configWith({ approval_timeout_seconds: 3 }) });
  });
  after(async () => {
    await h?.stop();
  });

  test('an approval nobody decides expires: outcome expired, no refund, and the emailed link no longer works', async () => {
    const { task, key } = await refundTask(h, 'T-approval-timeout');
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    const link = await linkFromInbox(h, request.approvalId, APPROVERS[0]);

    const result = await h.waitForExecution(executionArn);
    assert.equal(result.status, 'SUCCEEDED');
    assert.equal(result.output['outcome'], 'expired');
    assert.deepEqual(
      (await h.control.journal()).filter((e) => e.action === 'refund'),
      [],
      'nothing executed',
    );
    assert.equal((await h.paperclip.services.claims.get(key))?.status, 'EXPIRED');
    const events = (await h.paperclip.services.audit.events(key)).map((e) => e.type);
    assert.ok(events.includes('expired') && !events.includes('write_started') && !events.includes('approved'), events.join(', '));

    const late = await openLink(link);
    assert.equal(late.status, 410);
    assert.match(late.html, /审批链接已过期/);
    const stored = await h.paperclip.services.approvals.get(request.approvalId);
    assert.equal(stored?.status, 'EXPIRED', 'the request is marked expired, never left pending');
    const trail = (await h.paperclip.services.audit.events(key)).map((e) => e.type);
    assert.equal(trail.filter((t) => t === 'approval_expired').length, 1, trail.join(', '));
    assert.equal((await openLink(link)).status, 410, 'and stays refused');
  });
});

/**
 * The same timeout with the approvals update taken out of the tenant-access role (Complete closes the item
 * under the item's tenant session, and its own role holds no approvals grant): the local IAM refuses the
 * session's UpdateItem on the approvals table, so the execution fails with AccessDeniedException, as it would
 * on AWS. This is what the grant is for, and it shows Complete reaches the approvals only through the session.
 */
describe('approval timeout without the approvals update the tenant session needs', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      configPath: configWith({ approval_timeout_seconds: 3 }),
      editIam: (catalog) => {
        for (const policy of catalog.tenantRole.policies) {
          for (const statement of statementsOf(policy.document)) {
            if (!asList(statement.Resource).some((r) => r.endsWith('-approvals'))) continue;
            statement.Action = asList(statement.Action).filter((a) => a !== 'dynamodb:UpdateItem');
          }
        }
      },
    });
  });
  after(async () => {
    await h?.stop();
  });

  test('fails with AccessDeniedException naming the session Complete assumed, the action and the table', async () => {
    const { task, key } = await refundTask(h, 'T-approval-timeout-denied');
    const executionArn = await h.startTask(task);
    await approvalRequestFor(h, key);
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.status, 'FAILED');
    const described = await h.paperclip.services.clients.sfn.send(new DescribeExecutionCommand({ executionArn }));
    assert.equal(described.error, 'AccessDeniedException');
    assert.match(
      described.cause ?? '',
      /assumed by function complete\)+ is not authorized to perform: dynamodb:UpdateItem on resource: \S+-approvals\b/,
    );
  });
});
