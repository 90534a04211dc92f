import { z } from 'zod';
import type { Services } from '../app/services.js';
import type { ApprovalRequest } from '../app/ports/approvals.js';
import { verifyApprovalLink } from '../domain/approval-link.js';
import { approvalSigningSecret, tenantOfApprovalId } from '../app/approvals/request-approval.js';
import { ApprovalRefusedError, decideApproval, openApproval } from '../app/approvals/decide-approval.js';
import { parseCookies } from '../http/cookies.js';
import { CSRF_COOKIE, csrfCookie, csrfToken, newCsrfNonce, verifyCsrfToken } from './csrf.js';
import { oneLine } from '../lib/one-line.js';
import { approvalPage, decidedPage, refusalPage, type ApprovalView } from './pages.js';
import { own } from '../lib/own.js';
import { canonicalPrincipal } from '../domain/principal.js';
import { visibleText } from '../domain/visible-text.js';
import { log } from '../observability/telemetry.js';
import {
  beginSignIn,
  CALLBACK_PATH,
  currentApprover,
  finishSignIn,
  FLOW_COOKIE,
  safeReturnPath,
  SESSION_COOKIE,
  SIGN_IN_PATH,
  SignInFailedError,
  signInRequired,
  type SignedInApprover,
  type SignInContext,
} from './sign-in.js';
import { NamedError } from '../domain/errors.js';

/**
 * The approval endpoint's request handling, shared by the local HTTP server
 * and the Lambda Function URL handler (each only translates its own request
 * and response shapes). GET never changes anything: mail scanners fetch links.
 */

export interface ApprovalHttpRequest {
  method: string;
  /** The URL path as received (not decoded). */
  path: string;
  query: URLSearchParams;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  body: string;
  /**
   * This endpoint's origin as the platform knows it (the local server's bound
   * address, the Function URL domain AWS routed to), never the client's Host
   * header. Decisions are accepted only from the configured public base URL;
   * this origin is used instead only while none is configured.
   */
  selfOrigin: string;
}

export interface ApprovalHttpResponse {
  status: number;
  headers: Record<string, string>;
  /** Set-Cookie values (a Function URL answers them in `cookies`, not in headers). */
  cookies: string[];
  body: string | Buffer;
}

/** Forms here carry a few short fields; anything bigger is not ours. */
export const MAX_BODY_BYTES = 16 * 1024;

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // Same-origin requests (the screenshot, the form) may carry the page URL; nothing else gets it.
  'referrer-policy': 'same-origin',
};

// The tenant key prefix (up to 44 characters) and 24 random characters.
const APPROVAL_ID = /^[A-Za-z0-9_-]{16,80}$/;
const ROUTE = /^\/approvals\/([^/]+)(\/before\.png)?$/;

const LinkParams = z.object({
  approver: z.string().max(254, 'approver is at most 254 characters').toLowerCase().pipe(z.email('approver must be an email address')),
  exp: z
    .string()
    .regex(/^\d{1,12}$/, 'exp must be the expiry in epoch seconds')
    .transform(Number),
  sig: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'sig must be the 43-character signature from the email link'),
});
type LinkParams = z.output<typeof LinkParams>;

const DecisionForm = LinkParams.extend({
  csrf: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'csrf must be the token from the approval page'),
  decision: z.enum(['approve', 'reject'], 'decision must be approve or reject'),
  // Optional: an empty or whitespace-only note is no note; anything else must show something and not reorder text.
  note: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v : undefined))
    .pipe(visibleText('note', { max: 500, multiline: true }).optional()),
});

/** A request the endpoint answers with a page and no change. */
class HttpRefusal extends NamedError {
  override readonly name = 'HttpRefusal';
  constructor(
    readonly status: number,
    readonly zh: string,
    readonly en: string,
    readonly detail?: string,
  ) {
    super(`${status} ${en}`);
  }
}

function html(status: number, body: string, cookies: string[] = []): ApprovalHttpResponse {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS }, cookies, body };
}

/** Single-valued parameters only: a repeated one could mean different things to different readers. */
function params(source: URLSearchParams, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const values = source.getAll(name);
    if (values.length > 1) throw new HttpRefusal(400, '参数重复', 'Repeated parameter', `${name} appears more than once`);
    if (values[0] !== undefined) out[name] = values[0];
  }
  return out;
}

function parseWith<S extends z.ZodType>(schema: S, input: Record<string, string>, what: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join('.') || what;
  throw new HttpRefusal(400, '链接或表单无效', 'Invalid link or form', `${what}.${field}: ${issue?.message ?? 'invalid'}`);
}

/**
 * Checks the link's signature and returns the services under the session of the tenant its approval id names:
 * the id is covered by the signature, so every read and decision after this reaches that tenant's request,
 * audit chain and screenshot only (docs/deploy.md, "Tenant isolation in IAM"). Nothing else in the request
 * chooses the tenant.
 */
async function verifyLink(s: Services, approvalId: string, link: LinkParams): Promise<Services> {
  const secret = await approvalSigningSecret(s);
  if (!verifyApprovalLink({ approvalId, approver: link.approver, expiresAt: link.exp }, link.sig, secret)) {
    throw new HttpRefusal(
      403,
      '链接签名无效',
      'Invalid link signature',
      '链接被改动过，或并非由 Paperclip 签发。请直接打开邮件中的链接。 The link was altered or not issued by Paperclip. Open the link from your email as it is.',
    );
  }
  const tenant = tenantOfApprovalId(approvalId);
  if (!tenant) {
    throw new HttpRefusal(
      404,
      '审批申请不存在',
      'No such approval request',
      `approval id ${oneLine(approvalId, 80)} names no tenant (ids look like k-<tenant>_ and 24 characters)`,
    );
  }
  return s.forTenant({ tenant });
}

function linkQuery(link: LinkParams): string {
  return new URLSearchParams({ approver: link.approver, exp: String(link.exp), sig: link.sig }).toString();
}

function viewOf(s: Services, request: ApprovalRequest, link: LinkParams): ApprovalView {
  const action = own(s.pack.actions, request.action);
  return {
    request,
    approver: link.approver,
    tenantName: s.config.tenants.find((t) => t.id === request.tenant)?.display_name,
    actionDescription: action?.description,
    reversibility: action?.reversibility,
    screenshotUrl: request.beforeScreenshotKey ? `/approvals/${request.approvalId}/before.png?${linkQuery(link)}` : undefined,
  };
}

function originOf(value: string | undefined): string | undefined {
  if (!value || value === 'null') return undefined;
  try {
    return new URL(value).origin;
  } catch {
    return undefined;
  }
}

/**
 * The one origin a decision may come from: the public base URL the links in
 * the mails point at. A deployment without one (the `.invalid` placeholder)
 * falls back to the origin the platform reports for this endpoint.
 */
function allowedOrigin(s: Services, req: ApprovalHttpRequest): string | undefined {
  const configured = originOf(s.config.approvals.base_url);
  if (configured && !new URL(configured).hostname.endsWith('.invalid')) return configured;
  return originOf(req.selfOrigin);
}

async function signInContext(s: Services): Promise<SignInContext | undefined> {
  const signIn = s.config.approvals.sign_in;
  const issuer = s.signInIssuer();
  if (!signIn || !issuer) return undefined;
  return { config: s.config, signIn, issuer, secret: await approvalSigningSecret(s), baseUrl: s.config.approvals.base_url };
}

/**
 * Who may decide this request from this browser: nobody needs to be signed in
 * unless policy says so; then the session must be the approver the link names.
 */
async function signInState(
  s: Services,
  req: ApprovalHttpRequest,
  request: ApprovalRequest,
  approver: string,
): Promise<{ required: boolean; signedIn?: SignedInApprover; matches: boolean }> {
  const required = signInRequired(s.config.approvals.sign_in, request);
  if (!required) return { required, matches: true };
  const session = currentApprover(await approvalSigningSecret(s), parseCookies(req.headers['cookie']).get(SESSION_COOKIE));
  // A sign-in counts for the request it was started from (its ID token's nonce names it); for any other, sign in again.
  const signedIn = session?.approvalId === request.approvalId ? session : undefined;
  const matches = signedIn !== undefined && signedIn.email === canonicalPrincipal(approver, s.config.approvals.plus_addressing);
  return { required, ...(signedIn ? { signedIn } : {}), matches };
}

async function showApproval(unscoped: Services, req: ApprovalHttpRequest, approvalId: string): Promise<ApprovalHttpResponse> {
  const link = parseWith(LinkParams, params(req.query, ['approver', 'exp', 'sig']), 'query');
  const s = await verifyLink(unscoped, approvalId, link);
  const request = await openApproval(s, { approvalId, approver: link.approver, linkExpiresAt: link.exp });
  const view = viewOf(s, request, link);
  if (request.status !== 'PENDING') {
    const by = request.decidedBy ? `${request.decidedBy}, ${request.decidedAt}` : request.status;
    return html(409, refusalPage(409, '该申请已有决定', 'This request was already decided', by, view));
  }
  const signIn = await signInState(s, req, request, link.approver);
  if (!signIn.matches) {
    // The link alone shows the request; deciding needs the named approver signed in.
    const returnTo = `/approvals/${approvalId}?${linkQuery(link)}`;
    const signInUrl = `${SIGN_IN_PATH}?${new URLSearchParams({ return: returnTo }).toString()}`;
    return html(200, approvalPage(view, { kind: 'sign_in', signInUrl, ...(signIn.signedIn ? { signedInAs: signIn.signedIn.email } : {}) }));
  }
  const secret = await approvalSigningSecret(s);
  const nonce = newCsrfNonce();
  const cookie = csrfCookie(nonce, {
    approvalId,
    secure: req.selfOrigin.startsWith('https:'),
    maxAgeSeconds: request.expiresAt - Date.now() / 1000,
  });
  const hidden = {
    approver: link.approver,
    exp: String(link.exp),
    sig: link.sig,
    csrf: csrfToken(secret, { approvalId, approver: link.approver, nonce }),
  };
  const panel = {
    kind: 'form' as const,
    action: `/approvals/${approvalId}`,
    hidden,
    ...(signIn.signedIn ? { signedInAs: signIn.signedIn.email } : {}),
  };
  return html(200, approvalPage(view, panel), [cookie]);
}

function redirect(location: string, cookies: string[]): ApprovalHttpResponse {
  return { status: 303, headers: { location, ...SECURITY_HEADERS }, cookies, body: '' };
}

const NO_SIGN_IN = new HttpRefusal(
  404,
  '未启用登录',
  'Sign-in is not configured',
  '此部署的审批页面不需要登录。 Approval pages here need no sign-in.',
);

/** GET /auth/sign-in?return=<approval page>: off to the identity provider. */
async function startSignIn(s: Services, req: ApprovalHttpRequest): Promise<ApprovalHttpResponse> {
  const ctx = await signInContext(s);
  if (!ctx) throw NO_SIGN_IN;
  const returnTo = safeReturnPath(params(req.query, ['return'])['return']);
  if (!returnTo) throw new HttpRefusal(400, '链接无效', 'Invalid sign-in link', 'return must be an approval page of this server');
  const approver = new URL(returnTo, 'http://x.invalid').searchParams.get('approver') ?? undefined;
  const started = await beginSignIn(ctx, { returnTo, ...(approver ? { loginHint: approver } : {}) });
  return redirect(started.location, [started.cookie]);
}

/** GET /auth/callback?code&state: the provider's answer; back to the approval page signed in. */
async function completeSignIn(s: Services, req: ApprovalHttpRequest): Promise<ApprovalHttpResponse> {
  const ctx = await signInContext(s);
  if (!ctx) throw NO_SIGN_IN;
  try {
    const done = await finishSignIn(ctx, { query: req.query, flowCookie: parseCookies(req.headers['cookie']).get(FLOW_COOKIE) });
    return redirect(done.returnTo, done.cookies);
  } catch (error) {
    if (error instanceof SignInFailedError) throw new HttpRefusal(401, '登录未完成', 'Sign-in failed', error.message);
    throw error;
  }
}

async function serveScreenshot(unscoped: Services, req: ApprovalHttpRequest, approvalId: string): Promise<ApprovalHttpResponse> {
  const link = parseWith(LinkParams, params(req.query, ['approver', 'exp', 'sig']), 'query');
  const s = await verifyLink(unscoped, approvalId, link);
  const request = await openApproval(s, { approvalId, approver: link.approver, linkExpiresAt: link.exp });
  const image = request.beforeScreenshotKey ? await s.evidence.get(request.beforeScreenshotKey) : undefined;
  if (!image)
    throw new HttpRefusal(404, '没有操作前截图', 'No before-screenshot', '该申请没有保存截图。 No screenshot was stored for this request.');
  return {
    status: 200,
    headers: {
      'content-type': 'image/png',
      'content-length': String(image.length),
      ...SECURITY_HEADERS,
      'cache-control': 'private, no-store',
    },
    cookies: [],
    body: image,
  };
}

async function recordDecision(unscoped: Services, req: ApprovalHttpRequest, approvalId: string): Promise<ApprovalHttpResponse> {
  if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    throw new HttpRefusal(
      415,
      '请求格式不支持',
      'Unsupported request format',
      '请使用审批页面上的表单提交决定。 Decisions are submitted with the form on the approval page.',
    );
  }
  if (Buffer.byteLength(req.body) > MAX_BODY_BYTES) throw new HttpRefusal(413, '请求过大', 'Request too large');
  const form = parseWith(
    DecisionForm,
    params(new URLSearchParams(req.body), ['approver', 'exp', 'sig', 'csrf', 'decision', 'note']),
    'form',
  );
  const s = await verifyLink(unscoped, approvalId, form);
  // Cross-site form posts carry the other site's Origin (or none): refuse them before looking at anything else.
  const origin = originOf(req.headers['origin']) ?? originOf(req.headers['referer']);
  if (!origin || origin !== allowedOrigin(s, req)) {
    throw new HttpRefusal(
      403,
      '请求来源不被接受',
      'Cross-site request refused',
      '请在审批页面上做决定。 Decide from the approval page itself.',
    );
  }
  const nonce = parseCookies(req.headers['cookie']).get(CSRF_COOKIE);
  const secret = await approvalSigningSecret(s);
  if (!nonce || !verifyCsrfToken(secret, { approvalId, approver: form.approver, nonce }, form.csrf)) {
    throw new HttpRefusal(
      403,
      '表单已失效',
      'The form is stale or forged',
      '请重新打开邮件中的链接，并在该页面上做决定。 Open the link from your email again and decide on that page.',
    );
  }
  const request = await openApproval(s, { approvalId, approver: form.approver, linkExpiresAt: form.exp });
  const signIn = await signInState(s, req, request, form.approver);
  if (!signIn.matches) {
    throw signIn.signedIn
      ? new HttpRefusal(
          403,
          '登录身份不是此申请的审批人',
          'Signed in as someone else',
          `此申请只能由 ${form.approver} 决定。 Only ${form.approver}, signed in, can decide this request.`,
        )
      : new HttpRefusal(
          401,
          '需要登录',
          'Sign-in required',
          '此申请需要审批人登录后才能决定；仅凭链接不能决定。 This request needs the approver signed in; the link alone cannot decide it.',
        );
  }
  const result = await decideApproval(s, {
    approvalId,
    approver: form.approver,
    linkExpiresAt: form.exp,
    decision: form.decision,
    ...(form.note ? { note: form.note } : {}),
    ...(signIn.signedIn
      ? { signedIn: { issuer: signIn.signedIn.issuer, subject: signIn.signedIn.subject, idToken: signIn.signedIn.idToken } }
      : {}),
  });
  const spent = csrfCookie('', { approvalId, secure: req.selfOrigin.startsWith('https:'), maxAgeSeconds: 0 });
  return html(result.delivered ? 200 : 410, decidedPage(viewOf(s, result.request, form), result), [spent]);
}

const REFUSAL_TEXT: Record<ApprovalRefusedError['code'], [string, string]> = {
  not_found: ['审批申请不存在', 'No such approval request'],
  expired: ['审批链接已过期', 'This approval has expired'],
  self_approval: ['申请人不能审批自己的申请', 'Requesters cannot approve their own requests'],
  not_an_approver: ['您不是该租户的审批人', 'You are not an approver for this tenant'],
  already_decided: ['该申请已有决定', 'This request was already decided'],
};

export async function handleApprovalHttp(s: Services, req: ApprovalHttpRequest): Promise<ApprovalHttpResponse> {
  try {
    if (req.path === '/healthz')
      return { status: 200, headers: { 'content-type': 'text/plain', ...SECURITY_HEADERS }, cookies: [], body: 'ok' };
    if (req.path === SIGN_IN_PATH || req.path === CALLBACK_PATH) {
      if (req.method !== 'GET') throw new HttpRefusal(405, '不支持的请求方法', 'Method not allowed');
      return req.path === SIGN_IN_PATH ? await startSignIn(s, req) : await completeSignIn(s, req);
    }
    const route = ROUTE.exec(req.path);
    const approvalId = route?.[1];
    if (!route || !approvalId || !APPROVAL_ID.test(approvalId)) {
      throw new HttpRefusal(
        404,
        '页面不存在',
        'Not found',
        '审批链接形如 /approvals/<id>?approver=…&exp=…&sig=… Approval links look like that.',
      );
    }
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    if (route[2]) {
      if (method !== 'GET') throw new HttpRefusal(405, '不支持的请求方法', 'Method not allowed');
      return await serveScreenshot(s, req, approvalId);
    }
    if (method === 'GET') return await showApproval(s, req, approvalId);
    if (method === 'POST') return await recordDecision(s, req, approvalId);
    throw new HttpRefusal(405, '不支持的请求方法', 'Method not allowed');
  } catch (error) {
    if (error instanceof HttpRefusal) {
      const response = html(error.status, refusalPage(error.status, error.zh, error.en, error.detail));
      if (error.status === 405) response.headers['allow'] = 'GET, HEAD, POST';
      return response;
    }
    if (error instanceof ApprovalRefusedError) {
      const [zh, en] = REFUSAL_TEXT[error.code];
      return html(error.status, refusalPage(error.status, zh, en, error.message));
    }
    log().error(`approval endpoint: ${oneLine(req.method, 10)} ${oneLine(req.path, 200)} failed`, { error: error as Error });
    return html(
      500,
      refusalPage(
        500,
        '服务器错误',
        'Server error',
        '请求未完成，不会因此执行任何操作；请稍后重试或联系运维。 The request did not complete, and nothing will be executed because of it. Try again later or tell the operators.',
      ),
    );
  }
}
