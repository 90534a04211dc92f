import { renderReason } from '../../domain/reason.js';
import type { Services } from '../services.js';
import { routeTask, type RoutedItem } from '../../domain/routing.js';
import { InputRejectedError, ReadFailedError, SessionLostError } from '../../domain/errors.js';
import { emitSessionLost } from '../../report/emf.js';
import { log } from '../../observability/telemetry.js';
import { html, joinHtml } from '../../http/html.js';
import { proveOwnership } from '../ownership.js';
import { assertCompensationPath } from '../compensation-path.js';
import { assertRequesterAttested } from '../requester.js';
import { WriteTask } from '../../domain/task.js';
import { currentRateLimitTally } from '../../lib/retry-after.js';

/** Validate & route: schema, the requester's attestation, tenant scope, action policy, a compensation's origin, and the bill's owner read from the vendor. */
export async function validateAndRoute(s: Services, input: { task: unknown; executionArn: string }): Promise<RoutedItem> {
  const item = routeTask(input.task, s.config, s.pack);
  // Who asked is what the entry point that started this execution attested, for this key and this execution only.
  await assertRequesterAttested(s, WriteTask.parse(input.task), item.key, input.executionArn);
  // Routing needs no AWS call; what follows reads the tenant's claims and audit chain and the identity's token, under its session.
  const tenant = s.forTenant({ tenant: item.tenant, identity: item.identity });
  await assertCompensationPath(tenant, item);
  let statusAtRouting: Awaited<ReturnType<typeof proveOwnership>>;
  try {
    statusAtRouting = await proveOwnership(tenant, item);
  } catch (error) {
    // A session lost here counts for the session-lost alarm like one lost during the write (where takeover counts it).
    if (error instanceof SessionLostError) emitSessionLost(item.tenant);
    if (!(error instanceof InputRejectedError) && !(error instanceof ReadFailedError)) {
      // The item fails with the vendor's error, not with a failure to record it (the audit store down as well).
      await reportRoutingFailure(tenant, item, error as Error, input.executionArn).catch((reportError: Error) =>
        log().error(`routing failure not recorded: ${reportError.message}`, { tenant: item.tenant, idempotencyKey: item.key }),
      );
    }
    throw error;
  }
  // What the ownership read met of the vendor's rate limit: the claim does not exist yet, so the item carries it.
  const tally = currentRateLimitTally();
  const met = tally && (tally.seen > 0 || tally.waitedMs > 0 || tally.pacedMs > 0);
  const routed: RoutedItem = {
    ...item,
    ...(statusAtRouting ? { statusAtRouting } : {}),
    ...(met ? { rateLimitsAtRouting: { seen: tally.seen, waitedMs: Math.round(tally.waitedMs), pacedMs: Math.round(tally.pacedMs) } } : {}),
  };
  const actor = { identity: item.identity, tenant: item.tenant, taskId: item.taskId, executionArn: input.executionArn };
  await tenant.audit.append(item.key, { type: 'routed', actor: item.identity, data: { ...actor, item: routed } });
  return routed;
}

/**
 * The ownership read failed for another reason than the answer (a session the
 * vendor ended, a bug): the item ends before any claim, so no takeover entry
 * will ever name it, and a re-run of its batch skips its key. Recorded in its
 * audit chain and mailed to operators.notify here, so the failure is loud and
 * the item accounted for. A ReadFailedError is not reported: the workflow
 * retries it. A mail failure is logged, never fatal.
 */
async function reportRoutingFailure(s: Services, item: RoutedItem, error: Error, executionArn: string): Promise<void> {
  // Before any claim: nothing was clicked and nothing read back, and the reason says so like every other.
  const reason = renderReason({
    headline: `${error.name}: ${error.message}`,
    known: { commitClick: 'not_clicked', clicks: 0, observations: [], verdict: 'not_read' },
  });
  log().warn(`routing failed before any claim: ${item.tenant} ${item.billNo} ${item.action}: ${reason}`, {
    tenant: item.tenant,
    idempotencyKey: item.key,
    billNo: item.billNo,
    action: item.action,
  });
  await s.audit.append(item.key, {
    type: 'routing_failed',
    actor: item.identity,
    data: { reason, error: error.name, taskId: item.taskId, executionArn, nothingWritten: true },
  });
  const recipients = s.config.operators.notify;
  if (recipients.length === 0) return;
  const lines = [
    `租户 Tenant: ${item.tenant}`,
    `单号 Bill: ${item.billNo}`,
    `动作 Action: ${item.action}`,
    `身份 Identity: ${item.identity}`,
    `原因 Reason: ${reason}`,
    `幂等键 Key: ${item.key}`,
    `执行 Execution: ${executionArn}`,
    'Nothing was claimed or written. A re-run of the same task skips this key: fix the cause, then run the item under a new task id.',
  ];
  try {
    await s.mail.send({
      to: recipients,
      subject: `[Paperclip] 路由失败 Routing failed: ${item.tenant} ${item.billNo} ${item.action}`,
      text: `${lines.join('\n')}\n`,
      html: html`<p>${joinHtml(lines, html`<br>`)}</p>`.value,
    });
  } catch (mailError) {
    log().warn(`routing failure: could not mail ${recipients.join(', ')}: ${(mailError as Error).message}`, {
      tenant: item.tenant,
      idempotencyKey: item.key,
    });
  }
}
