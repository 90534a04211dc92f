import { runPaperclipSource, type Finished } from '../support/processes.js';
import type { Harness } from '../support/embedded.js';

/**
 * Runs the paperclip CLI in a child process without blocking this one: the
 * executions it starts run in this process's embedded stack.
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Finished> {
  return runPaperclipSource(args, env);
}

/** The environment that points operator commands at a harness's embedded stack (what `npm start -- --keep` prints). */
export function stackEnvironment(h: Harness): NodeJS.ProcessEnv {
  const { endpoints } = h.paperclip.stack;
  return {
    PAPERCLIP_CONFIG: 'config/paperclip.local.yaml',
    PAPERCLIP_VENDOR_BASE_URL: h.sim.url,
    PAPERCLIP_DYNAMODB_ENDPOINT: endpoints.dynamodb,
    PAPERCLIP_S3_ENDPOINT: endpoints.s3,
    PAPERCLIP_SES_ENDPOINT: endpoints.ses,
    PAPERCLIP_SFN_ENDPOINT: endpoints.stepfunctions,
    PAPERCLIP_GUARDED_WRITE_ARN: h.paperclip.arns.guardedWrite,
  };
}

/**
 * Someone else refunds a bill in the vendor's back office (the shared ops
 * account, through the refund form), as happens behind an automation's back.
 */
export async function refundBehindOurBack(h: Harness, billNo: string, amount: string): Promise<void> {
  const login = await fetch(new URL('/login', h.sim.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: 'ops-shared', password: 'pw-ops-2026' }).toString(),
    redirect: 'manual',
  });
  const sid = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('sid='));
  if (!sid) throw new Error(`login as ops-shared failed: HTTP ${login.status}`);
  const form = await (await fetch(new URL(`/diff/${billNo}/refund/form`, h.sim.url), { headers: { cookie: sid } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form)?.[1];
  if (!csrf) throw new Error('the refund form has no _csrf field');
  const submitted = await fetch(new URL(`/diff/${billNo}/refund`, h.sim.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: sid },
    body: new URLSearchParams({ _csrf: csrf, amount, reason: '线下已处理 handled offline' }).toString(),
  });
  if (submitted.status !== 200) throw new Error(`the refund was refused: HTTP ${submitted.status} ${await submitted.text()}`);
}
