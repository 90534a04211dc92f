import { randomBytes } from 'node:crypto';
import type { Services } from '../services.js';
import type { ItemState } from '../guarded-write/state.js';
import type { ApprovalRequest } from '../ports/approvals.js';
import { approvalUrl } from '../../domain/approval-link.js';
import { html, joinHtml } from '../../http/html.js';
import { actionPayloadHash } from '../../domain/approval-proof.js';
import { canonicalPrincipal } from '../../domain/principal.js';
import { tenantKeyPrefix, tenantOfKey } from '../../domain/task.js';
import { own } from '../../lib/own.js';
import { oneLine } from '../../lib/one-line.js';

/** The HMAC key for approval links: inline locally, Secrets Manager on AWS. */
export async function approvalSigningSecret(s: Services): Promise<string> {
  const source = s.config.approvals.signing_secret;
  if (source.source === 'inline') return source.value;
  const secret = await s.secretStrings.get(source.secret_id);
  if (!secret) throw new Error(`approval signing secret ${source.secret_id} is empty`);
  return secret;
}

/**
 * Stores an approval request with the workflow's task token and mails each
 * allowed approver a personal signed link. The token stays in the table.
 */
export async function requestApproval(
  s: Services,
  input: { state: ItemState; taskToken: string; executionArn: string },
): Promise<{ approvalId: string; notified: string[] }> {
  const { item } = input.state;
  const plus = s.config.approvals.plus_addressing;
  // Both sides canonical, so no spelling of the requester's address makes them their own approver.
  const requester = canonicalPrincipal(item.requestedBy, plus);
  const tenant = s.config.tenants.find((t) => t.id === item.tenant);
  const approvers = [...new Set((tenant?.approvers ?? []).map((a) => canonicalPrincipal(a, plus)))].filter((a) => a !== requester);
  if (approvers.length === 0)
    throw new Error(`tenant ${item.tenant} has no approvers other than the requester; configure tenants[].approvers`);
  // The item's claim first: the request is stored only for an item this run's session can read (under a tenant
  // session, an item of another tenant is refused here, before anything is written).
  if (!(await s.claims.get(item.key))) throw new Error(`no claim for ${item.key}: an approval is requested only for a claimed item`);
  // The figures the pre-state read took from the vendor: only those the pack shows (a confirm-only figure was compared already).
  const shown = own(s.pack.actions, item.action)?.approval?.show ?? [];
  const read = input.state.snapshot?.figures ?? {};
  const picked = shown.flatMap((name) => (Object.hasOwn(read, name) ? [[name, read[name]!] as const] : []));
  const figures = picked.length > 0 ? Object.fromEntries(picked) : undefined;
  const now = Date.now();
  const expiresAtMs = now + item.approvalTimeoutSeconds * 1000;
  const request: ApprovalRequest = {
    // Under the tenant's key prefix, so the tenant's IAM session can read it (dynamodb:LeadingKeys).
    approvalId: `${tenantKeyPrefix(item.tenant)}${randomBytes(APPROVAL_ID_RANDOM_BYTES).toString('base64url')}`,
    key: item.key,
    taskId: item.taskId,
    tenant: item.tenant,
    billNo: item.billNo,
    action: item.action,
    amount: own(item.params, 'amount'),
    ...(figures ? { vendorFigures: figures } : {}),
    payloadHash: actionPayloadHash(item),
    requester,
    allowedApprovers: approvers,
    taskToken: input.taskToken,
    executionArn: input.executionArn,
    beforeScreenshotKey: input.state.snapshot?.evidence.find((e) => e.key.endsWith('before.png'))?.key,
    createdAt: new Date(now).toISOString(),
    expiresAtIso: new Date(expiresAtMs).toISOString(),
    expiresAt: Math.floor(expiresAtMs / 1000),
    status: 'PENDING',
  };
  await s.approvals.create(request);
  await s.audit.append(item.key, {
    type: 'approval_requested',
    actor: requester,
    data: {
      approvalId: request.approvalId,
      approvers: request.allowedApprovers,
      expiresAt: request.expiresAtIso,
      payloadHash: request.payloadHash,
      ...(figures ? { figures } : {}),
    },
  });
  const secret = await approvalSigningSecret(s);
  const mailer = s.mail;
  const action = own(s.pack.actions, item.action);
  for (const approver of request.allowedApprovers) {
    const link = approvalUrl(
      s.config.approvals.base_url,
      { approvalId: request.approvalId, approver, expiresAt: request.expiresAt },
      secret,
    );
    // Every value is one bounded line of data: nothing a requester or a parameter holds can add a line or a link.
    const lines = [
      `租户 Tenant: ${oneLine(item.tenant, 60)}`,
      `单号 Bill: ${oneLine(item.billNo, 64)}`,
      `动作 Action: ${oneLine(item.action, 60)} (${oneLine(action?.description ?? '', 120)})`,
      `金额 Amount: ${request.amount ? `¥${oneLine(request.amount, 20)}` : '—'}${figures ? " (任务参数 the task's parameter)" : ''}`,
      ...vendorFigureLines(figures),
      `申请人 Requested by: ${oneLine(requester, 120)}`,
      `有效期至 Expires: ${request.expiresAtIso}`,
    ];
    await mailer.send({
      to: [approver],
      subject: `[Paperclip] 待审批：${oneLine(item.tenant, 60)} ${oneLine(item.billNo, 64)} ${oneLine(item.action, 60)}`,
      text: `${lines.join('\n')}\n\n打开链接查看并审批 / Review and decide:\n${link}\n\n此操作不可撤销。This action is irreversible.`,
      html: html`<p>${joinHtml(lines, html`<br>`)}</p><p><a href="${link}">查看并审批 / Review and decide</a></p><p>此操作不可撤销。This action is irreversible.</p>`
        .value,
    });
  }
  return { approvalId: request.approvalId, notified: request.allowedApprovers };
}

/**
 * The mail's lines for the vendor's figures: each figure as the vendor shows it, under a heading that says where it
 * comes from, so the approver can tell the vendor's amount from what the task asks for.
 */
export function vendorFigureLines(figures: Readonly<Record<string, string>> | undefined): string[] {
  if (!figures) return [];
  return [
    `供应商数据 The vendor's figures (read from the vendor before this request, not from the task):`,
    ...Object.entries(figures).map(([name, value]) => `  ${oneLine(name, 40)}: ${oneLine(value, 40)}`),
  ];
}

/** 18 random bytes: 24 base64url characters after the tenant's key prefix. */
const APPROVAL_ID_RANDOM_BYTES = 18;
const APPROVAL_ID_PATTERN = /^k-([a-z][a-z0-9-]{1,40})_[A-Za-z0-9_-]{24}$/;

/**
 * The tenant an approval id belongs to (`k-<tenant>_` and 24 random characters), or undefined for any other
 * string. Tenant ids cannot contain `_`, so the first `_` ends the tenant. The approval page reads the tenant
 * from the id its signed link names, never from anything else the caller sends.
 */
export function tenantOfApprovalId(approvalId: string): string | undefined {
  return APPROVAL_ID_PATTERN.exec(approvalId)?.[1];
}

/**
 * The approval requests of an item: those the byKey index returns whose id is under the item's own tenant.
 * The index is keyed by the item's key, which any tenant's session could write into a request of its own
 * tenant; such a request is never the item's (it cannot approve it, nor hold up its expiry).
 */
export async function approvalRequestsOf(s: Services, key: string): Promise<ApprovalRequest[]> {
  const tenant = tenantOfKey(key);
  return (await s.approvals.byKey(key)).filter((r) => tenant !== undefined && tenantOfApprovalId(r.approvalId) === tenant);
}
