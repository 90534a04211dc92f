import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import type { ApprovalRequest } from '../../src/app/ports/approvals.js';
import { approvalUrl } from '../../src/domain/approval-link.js';
import { idempotencyKey } from '../../src/domain/task.js';
import type { Harness } from '../support/embedded.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';

/** Either back office's harness: the approval helpers only use Paperclip's side of it. */
type AnyHarness = Harness<unknown>;

export const OVERCHARGE_BILL = 'ACME-202611-0013';
export const APPROVERS = ['finance.lead@acme.example', 'controller@acme.example'] as const;

/** The local config with some write_policy values changed, written to a temporary file. */
export function configWith(writePolicy: Record<string, unknown>): string {
  const config = parse(readFileSync('config/paperclip.local.yaml', 'utf8')) as { write_policy: Record<string, unknown> };
  config.write_policy = { ...config.write_policy, ...writePolicy };
  const path = join(mkdtempSync(join(tmpdir(), 'paperclip-config-')), 'paperclip.yaml');
  writeFileSync(path, stringify(config));
  return path;
}

/** A refund task for the acme overcharge, with the amount the vendor shows (as the batch would pass it). */
export async function refundTask(h: Harness, taskId: string, requestedBy = 'schedule', billNo: string = OVERCHARGE_BILL) {
  const bill = (await h.control.state()).bills.find((b) => b.billNo === billNo);
  if (!bill) throw new Error(`${billNo} is not in the simulator`);
  const task = {
    taskId,
    tenant: 'acme',
    billNo,
    action: 'refund',
    requestedBy,
    params: { amount: (bill.amountCents / 100).toFixed(2) },
  };
  return { task, key: idempotencyKey(task) };
}

export async function waitUntil<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Approves on the open approval page as the approver does: 批准, then the page says 已批准. */
export async function approveOnPage(page: Page): Promise<void> {
  await page.getByRole('button', { name: /批准/ }).click();
  await page.getByRole('heading', { name: /已批准/ }).waitFor();
}

/** The operators' alert mail (to ops-oncall@ops.example) that names `key`, once it is in the local SES inbox. */
export function operatorsAlertAbout(h: AnyHarness, key: string, timeoutMs?: number) {
  const alert = async () =>
    (await h.paperclip.stack.fetchEmails()).find(
      (m) => m.destination.to.includes('ops-oncall@ops.example') && JSON.stringify(m).includes(key),
    );
  return waitUntil('the operators alert', alert, timeoutMs);
}

/**
 * Runs a refund whose amount is not the vendor's and asserts it was refused before anyone was asked: outcome
 * rejected with `reason`, no approval request, nobody mailed, the vendor's journal empty, the claim REJECTED.
 */
export async function assertRefusedBeforeApproval(
  h: Harness<{ journal(): Promise<unknown[]> }>,
  task: unknown,
  key: string,
  reason: string,
): Promise<void> {
  const mailsBefore = (await h.paperclip.stack.fetchEmails()).length;
  const result = await h.waitForExecution(await h.startTask(task));
  assert.equal(result.output['outcome'], 'rejected', JSON.stringify(result.output));
  assert.equal(result.output['reason'], reason);
  assert.deepEqual(await h.paperclip.services.approvals.byKey(key), [], 'no approval request');
  assert.equal((await h.paperclip.stack.fetchEmails()).length, mailsBefore, 'nobody was mailed');
  assert.deepEqual(await h.control.journal(), [], 'the vendor was not written');
  assert.equal((await h.paperclip.services.claims.get(key))?.status, 'REJECTED');
}

/** Waits until the item's execution asked for approval, and returns the stored request. */
export function approvalRequestFor(h: AnyHarness, key: string): Promise<ApprovalRequest> {
  return waitUntil(`the approval request of ${key}`, async () => (await h.paperclip.services.approvals.byKey(key))[0]);
}

/** The link in the approval email sent to `to` for this request, read from the local SES inbox. */
export async function linkFromInbox(h: AnyHarness, approvalId: string, to: string): Promise<string> {
  return waitUntil(`the approval email to ${to}`, async () => {
    const mail = (await h.paperclip.stack.fetchEmails()).find((m) => m.destination.to.includes(to) && m.body.text?.includes(approvalId));
    return mail?.body.text?.match(/https?:\/\/\S+\/approvals\/\S+/)?.[0];
  });
}

/** A link signed with the real key, for cases no email contains (other people, past expiries). */
export function signedLink(h: AnyHarness, claims: { approvalId: string; approver: string; expiresAt: number }): string {
  const source = h.paperclip.services.config.approvals.signing_secret;
  if (source.source !== 'inline') throw new Error('tests sign with the inline local secret');
  return approvalUrl(h.paperclip.approvals.url, claims, source.value);
}

export async function executionStatus(h: AnyHarness, executionArn: string): Promise<string | undefined> {
  return (await h.paperclip.services.clients.sfn.send(new DescribeExecutionCommand({ executionArn }))).status;
}

export interface FormPage {
  status: number;
  html: string;
  cookie?: string;
  fields: Record<string, string>;
}

/** GETs an approval link the way a browser (or a mail scanner) would. */
export async function openLink(link: string): Promise<FormPage> {
  const response = await fetch(link, { redirect: 'manual' });
  const html = await response.text();
  const cookie = response.headers.getSetCookie().map((c) => c.split(';')[0]!)[0];
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[match[1]!] = decodeEntities(match[2]!);
  return { status: response.status, html, ...(cookie ? { cookie } : {}), fields };
}

function decodeEntities(text: string): string {
  return text
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
}

/** POSTs the decision form; `origin` defaults to the approval server's own. */
export async function postDecision(
  h: AnyHarness,
  link: string,
  form: Record<string, string>,
  options: { cookie?: string; origin?: string | null } = {},
): Promise<{ status: number; html: string }> {
  const url = new URL(link);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (options.origin !== null) headers['origin'] = options.origin ?? h.paperclip.approvals.url;
  if (options.cookie) headers['cookie'] = options.cookie;
  const response = await fetch(new URL(url.pathname, url.origin), {
    method: 'POST',
    headers,
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  return { status: response.status, html: await response.text() };
}
