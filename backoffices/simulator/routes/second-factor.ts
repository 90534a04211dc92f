import { z } from 'zod';
import { html, raw, type Html } from '../../../src/http/html.js';
import { parseCookies } from '../../../src/http/cookies.js';
import { redirect, sendHtml } from '../../kit/http-util.js';
import { totpSecretFor, type SimAccount } from '../accounts.js';
import { PRODUCT_NAME, baseCss } from '../pages/layout.js';
import { PENDING_COOKIE } from '../../kit/second-factor.js';
import { SESSION_COOKIE, sidOf, type Exchange } from './exchange.js';

/**
 * The second login step of an account whose tenant asks a TOTP code (TenantSpec.secondFactor): the password
 * page sends it here with a pending-login cookie instead of a session.
 */
export function startSecondFactor(ex: Exchange, account: SimAccount, next: string | undefined): void {
  const token = ex.office.pendingLogins.create(account.username, next);
  redirect(ex.res, '/login/2fa', { 'set-cookie': `${PENDING_COOKIE}=${token}; Path=/login; HttpOnly; SameSite=Lax` });
}

export function getSecondFactor(ex: Exchange): void {
  const pending = ex.office.pendingLogins.get(pendingToken(ex));
  if (!pending) {
    redirect(ex.res, '/login');
    return;
  }
  sendHtml(ex.res, 200, secondFactorPage({ failed: false }));
}

const CodeFormSchema = z.object({ code: z.string().max(16).default('') });

export function postSecondFactor(ex: Exchange): void {
  const token = pendingToken(ex);
  const pending = ex.office.pendingLogins.get(token);
  const account = pending && ex.office.accountByUsername(pending.username);
  const period = account && ex.office.secondFactorPeriod(account);
  if (!token || !pending || !account || period === undefined) {
    redirect(ex.res, '/login');
    return;
  }
  ex.identity = account.username;
  const form = CodeFormSchema.safeParse(Object.fromEntries(new URLSearchParams(ex.body)));
  const code = form.success ? form.data.code.trim() : '';
  if (!ex.office.pendingLogins.answer(token, totpSecretFor(account.tenant ?? ''), period, code)) {
    sendHtml(ex.res, 401, secondFactorPage({ failed: true }));
    return;
  }
  ex.office.sessions.destroy(sidOf(ex));
  const session = ex.office.sessions.create(account.username);
  ex.sessionId = session.sid;
  redirect(ex.res, pending.next ?? '/diff/list', { 'set-cookie': `${SESSION_COOKIE}=${session.sid}; Path=/; HttpOnly; SameSite=Lax` });
}

function pendingToken(ex: Exchange): string | undefined {
  return parseCookies(ex.req.headers.cookie).get(PENDING_COOKIE);
}

const CSS = `
.login-box { width: 380px; margin: 110px auto 0; background: #fff; border: 1px solid #8fa6c2; padding: 16px 24px; }
.login-box label { display: inline-block; width: 84px; color: #444; }
.login-box .msg { margin: 0 0 12px; padding: 5px 8px; border: 1px solid #e2a2a2; background: #f8dcdc; color: #a22; }
`;

function secondFactorPage(options: { failed: boolean }): Html {
  return html`<html lang="zh-CN">
<head><meta charset="utf-8"><title>动态验证码 - ${PRODUCT_NAME}</title><style>${baseCss()}${raw(CSS)}</style></head>
<body class="login">
<div class="login-box">
  <h1>二次验证</h1>
  <form method="post" action="/login/2fa" autocomplete="off">
    ${options.failed ? html`<div class="msg" role="alert">动态验证码错误，请重新输入</div>` : ''}
    <p>请输入身份验证器中显示的 6 位动态验证码。</p>
    <div class="row"><label for="code">动态验证码</label><input id="code" name="code" inputmode="numeric" maxlength="6"></div>
    <div class="actions"><button type="submit" class="btn btn-primary">验证</button></div>
  </form>
</div>
</body>
</html>`;
}
