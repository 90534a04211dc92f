import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { BrowserContext } from 'playwright-core';
import { sharedBrowser } from '../../src/browser/chromium.js';
import { csrfToken } from '../../src/approval-server/csrf.js';
import { signInRequired } from '../../src/approval-server/sign-in.js';
import { ApproverSignIn } from '../../src/config/schema.js';
import { startHarness, useHarness } from '../support/embedded.js';
import { readZip } from '../../src/lib/zip.js';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { decideApproval } from '../../src/app/approvals/decide-approval.js';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { APPROVERS, approvalRequestFor, approveOnPage, executionStatus, linkFromInbox } from './helpers.js';
import { openLink, operatorsAlertAbout, postDecision, refundTask } from './helpers.js';

/**
 * Approver sign-in through the embedded OpenID provider, with real Chromium:
 * when policy requires sign-in, the emailed link shows the request but cannot
 * decide it; only the approver the link names, signed in, can.
 */
const PASSWORDS: Record<string, string> = {
  [APPROVERS[0]]: 'finance-lead-local-password',
  [APPROVERS[1]]: 'controller-local-password',
};

function configWithSignIn(): string {
  const config = parse(readFileSync('config/paperclip.local.yaml', 'utf8')) as { approvals: Record<string, unknown> };
  config.approvals['sign_in'] = {
    issuer: 'embedded',
    client_id: 'paperclip-approvals',
    required_for: { actions: ['refund'] },
    embedded_users: Object.entries(PASSWORDS).map(([email, password]) => ({ email, password })),
  };
  const path = join(mkdtempSync(join(tmpdir(), 'paperclip-config-')), 'paperclip.yaml');
  writeFileSync(path, stringify(config));
  return path;
}

describe('approver sign-in (OIDC) required by policy', () => {
  const h = useHarness(() => startHarness({ configPath: configWithSignIn() }));

  const refunds = async () => (await h.control.journal()).filter((e) => e.action === 'refund');
  /** The ID token finance.lead's real sign-in left on the first approval (the forgeries below start from it). */
  let realToken: string | undefined;

  /** Opens the link in a fresh browser, signs in through the provider as `who`, and returns on the approval page. */
  async function signInAs(context: BrowserContext, link: string, who: string) {
    const page = await context.newPage();
    assert.equal((await page.goto(link))?.status(), 200);
    await page.getByRole('link', { name: /登录|Sign in as/ }).click();
    await page.getByLabel(/邮箱/).fill(who);
    await page.getByLabel(/密码/).fill(PASSWORDS[who]!);
    await page.getByRole('button', { name: /登录/ }).click();
    await page.waitForURL((url) => url.href.startsWith(`${h.paperclip.approvals.url}/approvals/`));
    return page;
  }

  test('the link alone shows the request but cannot decide; another signed-in approver cannot; the named approver signed in can', async () => {
    await h.control.reset();
    assert.ok(h.paperclip.signInProvider, 'the embedded stack started the OpenID provider');
    const { task, key } = await refundTask(h, 'T-sign-in');
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    const link = await linkFromInbox(h, request.approvalId, APPROVERS[0]);

    // The link alone: the page shows the request, offers sign-in, and has no decision form.
    const anonymous = await openLink(link);
    assert.equal(anonymous.status, 200);
    assert.match(anonymous.html, /ACME-202611-0013/);
    assert.match(anonymous.html, /需要审批人登录/);
    assert.doesNotMatch(anonymous.html, /<form method="post"/);
    // Even with a valid CSRF pair (the best a link holder could have), the POST is refused.
    const secret = h.paperclip.services.config.approvals.signing_secret;
    assert.equal(secret.source, 'inline');
    const nonce = 'n'.repeat(24);
    const linkParams = new URL(link).searchParams;
    const form = {
      approver: linkParams.get('approver')!,
      exp: linkParams.get('exp')!,
      sig: linkParams.get('sig')!,
      csrf: csrfToken(secret.value, { approvalId: request.approvalId, approver: APPROVERS[0], nonce }),
      decision: 'approve',
    };
    const linkOnly = await postDecision(h, link, form, { cookie: `pc_csrf=${nonce}` });
    assert.equal(linkOnly.status, 401, linkOnly.html);
    assert.match(linkOnly.html, /需要登录/);
    assert.equal((await h.paperclip.services.approvals.get(request.approvalId))?.status, 'PENDING');
    assert.equal(await executionStatus(h, executionArn), 'RUNNING');
    assert.deepEqual(await refunds(), []);

    const browser = await sharedBrowser();
    // The controller signs in (a real approver of the tenant) but holds finance.lead's link: refused.
    const other = await browser.newContext({ locale: 'zh-CN' });
    try {
      const page = await signInAs(other, link, APPROVERS[1]);
      const text = await page.locator('main').innerText();
      assert.match(text, /您当前登录的是 controller@acme\.example/);
      assert.equal(await page.locator('form[method="post"]').count(), 0, 'no decision form for another person');
      const posted = await postDecision(h, link, form, {
        cookie: `pc_csrf=${nonce}; ${(await other.cookies(`${h.paperclip.approvals.url}/approvals/x`))
          .filter((c) => c.name === 'pc_signin')
          .map((c) => `${c.name}=${c.value}`)
          .join('; ')}`,
      });
      assert.equal(posted.status, 403, posted.html);
      assert.match(posted.html, /登录身份不是此申请的审批人/);
    } finally {
      await other.close();
    }
    assert.equal((await h.paperclip.services.approvals.get(request.approvalId))?.status, 'PENDING');
    assert.deepEqual(await refunds(), []);

    // finance.lead signs in and approves in the browser.
    const named = await browser.newContext({ locale: 'zh-CN' });
    try {
      const page = await signInAs(named, link, APPROVERS[0]);
      assert.match(await page.locator('main').innerText(), /已登录：finance\.lead@acme\.example/);
      await approveOnPage(page);
    } finally {
      await named.close();
    }
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    assert.equal((await refunds()).length, 1, 'exactly one refund');
    const approved = (await h.paperclip.services.audit.events(key)).find((e) => e.type === 'approved');
    assert.equal(approved?.actor, APPROVERS[0]);
    // The decision keeps the provider's signed ID token; the write verified it against the provider's keys (the refund ran).
    const stored = (await h.paperclip.services.approvals.get(request.approvalId))?.signIn;
    assert.equal(stored?.issuer, h.paperclip.signInProvider.issuer);
    assert.equal(stored?.subject, APPROVERS[0]);
    assert.deepEqual(approved?.data['signIn'], stored);
    const claims = decodeJwt(stored!.idToken);
    assert.equal(claims.iss, h.paperclip.signInProvider.issuer);
    assert.equal(claims.aud, 'paperclip-approvals');
    assert.equal(claims['email'], APPROVERS[0]);
    assert.ok(String(claims['nonce']).startsWith(`${request.approvalId}.`), 'the sign-in names this approval');
    realToken = stored!.idToken;

    // The refund's stored trace: the vendor's CSRF token (the pack's pageSecrets) is gone from snapshots, POST bodies and pages.
    const claim = (await h.paperclip.services.claims.get(key))!;
    const trace = readZip((await h.paperclip.services.evidence.get(evidenceKey(claim, 'trace.zip')))!);
    const text = [...trace.values()].map((b) => b.toString('utf8')).join('\n');
    assert.ok(text.includes('退款原因'), 'the trace recorded the refund form');
    const tokenValues = [
      ...text.matchAll(/name=\\?"_csrf\\?" value=\\?"([^"\\]*)/g),
      ...text.matchAll(/name=\\?"csrf-token\\?" content=\\?"([^"\\]*)/g),
      ...text.matchAll(/"name":"_csrf"[^\]]*?"value":"([^"]*)"/g),
      ...text.matchAll(/"name":"csrf-token"[^\]]*?"content":"([^"]*)"/g),
      ...text.matchAll(/(?:^|[&?"])_csrf=([^&"\s]*)/g),
    ].map((m) => m[1]);
    assert.ok(tokenValues.length > 0, 'the trace shows where the token was (the search is not vacuous)');
    assert.deepEqual(
      [...new Set(tokenValues)].filter((v) => v !== '[redacted]' && v !== '%5Bredacted%5D'),
      [],
      'no token value in the trace',
    );
    const posted = text.match(/_csrf=[^&"\s]*/g) ?? [];
    assert.ok(posted.length > 0, 'the refund POST body is in the trace');
  });

  test('an approval recorded without the sign-in policy requires (the pages bypassed) ends in takeover with an alert: nothing written', async () => {
    await h.control.reset();
    const { task, key } = await refundTask(h, 'T-sign-in-bypass');
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    // The link path's decision without the pages' sign-in check: what a table writer, or a bug in the pages, would leave.
    const decided = await decideApproval(h.paperclip.services, {
      approvalId: request.approvalId,
      approver: APPROVERS[0],
      linkExpiresAt: request.expiresAt,
      decision: 'approve',
    });
    assert.equal(decided.request.status, 'APPROVED');
    assert.equal(decided.request.signIn, undefined);
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'takeover', JSON.stringify(result.output));
    assert.match(String(result.output['reason']), /ApprovalNotProvenError: .*policy requires a signed-in approver for refund/);
    assert.deepEqual(await refunds(), [], 'no refund reached the vendor');
    const trail = await h.paperclip.services.audit.events(key);
    assert.ok(
      trail.some((e) => e.type === 'approval_not_proven'),
      trail.map((e) => e.type).join(', '),
    );
    assert.ok(!trail.some((e) => e.type === 'write_started'));
    assert.equal((await h.paperclip.services.claims.get(key))?.status, 'TAKEOVER');
    const alert = await operatorsAlertAbout(h, key);
    assert.ok(alert);
  });

  test("a forged sign-in (invented issuer or subject, another key, an edited token, another approval's token) ends in takeover: nothing written", async () => {
    // One overcharged bill per case: the cases run at once, and an item has one open write at a time.
    await h.control.reset({ tenants: [{ id: 'acme', pending: 12, overcharge: 7, processed: 3 }] });
    const overcharged = (await h.control.state()).bills.filter((b) => b.tenant === 'acme' && b.kind === 'overcharge').map((b) => b.billNo);
    assert.ok(realToken, 'the first test left a real ID token');
    const issuer = h.paperclip.signInProvider!.issuer;
    const s = h.paperclip.services;
    const [header, payload, signature] = realToken.split('.') as [string, string, string];
    const realClaims = decodeJwt(realToken);
    const edit = (changes: Record<string, unknown>) =>
      `${header}.${Buffer.from(JSON.stringify({ ...realClaims, ...changes })).toString('base64url')}.${signature}`;
    // The attacker's own key under the provider's key id: every claim right, the signature not the provider's.
    const attacker = await generateKeyPair('RS256');
    const forgedFor = (approvalId: string) =>
      new SignJWT({ email: APPROVERS[0], email_verified: true, nonce: `${approvalId}.${'x'.repeat(43)}` })
        .setProtectedHeader({ alg: 'RS256', kid: decodeProtectedHeader(realToken!).kid ?? 'provider-key' })
        .setIssuer(issuer)
        .setAudience('paperclip-approvals')
        .setSubject(APPROVERS[0])
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(attacker.privateKey);
    const cases: { name: string; signIn: (approvalId: string) => Promise<{ issuer: string; subject: string; idToken: string }> }[] = [
      { name: 'invented', signIn: async () => ({ issuer, subject: APPROVERS[0], idToken: 'invented' }) },
      {
        name: 'other-issuer',
        signIn: async (id) => ({ issuer: 'https://idp.evil.example', subject: 'mallory', idToken: await forgedFor(id) }),
      },
      { name: 'other-key', signIn: async (id) => ({ issuer, subject: APPROVERS[0], idToken: await forgedFor(id) }) },
      {
        name: 'edited-sub',
        signIn: async () => ({ issuer, subject: APPROVERS[1], idToken: edit({ sub: APPROVERS[1], email: APPROVERS[1] }) }),
      },
      {
        name: 'edited-exp',
        signIn: async () => ({ issuer, subject: APPROVERS[0], idToken: edit({ exp: Math.floor(Date.now() / 1000) + 3600 }) }),
      },
      {
        name: 'bad-signature',
        signIn: async () => ({ issuer, subject: APPROVERS[0], idToken: `${header}.${payload}.${signature.slice(0, -4)}AAAA` }),
      },
      { name: 'replayed', signIn: async () => ({ issuer, subject: APPROVERS[0], idToken: realToken! }) },
    ];
    const started = await Promise.all(
      cases.map(async (c, n) => {
        const { task, key } = await refundTask(h, `T-forged-sign-in-${c.name}`, 'schedule', overcharged[n]);
        return { ...c, key, executionArn: await h.startTask(task) };
      }),
    );
    for (const c of started) {
      const request = await approvalRequestFor(h, c.key);
      // What a principal with approvals-table and audit-table write and SendTaskSuccess can do: a complete, chained approval.
      const decided = await decideApproval(s, {
        approvalId: request.approvalId,
        approver: APPROVERS[0],
        linkExpiresAt: request.expiresAt,
        decision: 'approve',
        signedIn: await c.signIn(request.approvalId),
      });
      assert.equal(decided.delivered, true);
    }
    for (const c of started) {
      const result = await h.waitForExecution(c.executionArn);
      assert.equal(result.output['outcome'], 'takeover', `${c.name}: ${JSON.stringify(result.output)}`);
      assert.match(String(result.output['reason']), /ApprovalNotProvenError: .*sign-in is not proven by the identity provider/, c.name);
      const trail = await s.audit.events(c.key);
      assert.ok(!trail.some((e) => e.type === 'write_started'), c.name);
      assert.equal((await s.claims.get(c.key))?.status, 'TAKEOVER', c.name);
    }
    assert.deepEqual(await refunds(), [], 'no refund reached the vendor');
  });

  test('a callback that this browser did not start, or with a forged state, signs nobody in', async () => {
    const response = await fetch(`${h.paperclip.approvals.url}/auth/callback?code=abc&state=forged`, { redirect: 'manual' });
    assert.equal(response.status, 401);
    assert.equal(response.headers.getSetCookie().length, 0);
    const offsite = await fetch(`${h.paperclip.approvals.url}/auth/sign-in?return=${encodeURIComponent('https://evil.example/')}`, {
      redirect: 'manual',
    });
    assert.equal(offsite.status, 400, 'sign-in never returns to another site');
  });
});

describe('sign-in policy', () => {
  const policy = ApproverSignIn.parse({
    issuer: 'embedded',
    client_id: 'c',
    required_for: { actions: ['delete'], amount_above: '1000.00' },
  });

  test('listed actions and amounts above the threshold need sign-in; others do not', () => {
    assert.equal(signInRequired(policy, { action: 'delete' }), true);
    assert.equal(signInRequired(policy, { action: 'refund', amount: '1000.01' }), true);
    assert.equal(signInRequired(policy, { action: 'refund', amount: '1000' }), false);
    assert.equal(signInRequired(policy, { action: 'refund', amount: '999.99' }), false);
    assert.equal(signInRequired(undefined, { action: 'delete' }), false);
  });

  test('the config names the field and the fix', () => {
    const https = ApproverSignIn.safeParse({ issuer: 'http://idp.example', client_id: 'c' });
    assert.equal(https.success, false);
    assert.match(JSON.stringify(https.error?.issues), /embedded or an https issuer URL/);
    const amount = ApproverSignIn.safeParse({ issuer: 'embedded', client_id: 'c', required_for: { amount_above: '1e3' } });
    assert.match(JSON.stringify(amount.error?.issues), /amount_above is a decimal/);
  });
});
