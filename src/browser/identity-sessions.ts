import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { SitePack } from '../sitepack/schema.js';
import { SessionLostError } from '../domain/errors.js';
import { resolveLocator } from './locate.js';
import { runStep } from './executor.js';
import { redactTrace } from './trace-redaction.js';

export interface IdentitySecret {
  username: string;
  password: string;
  apiToken?: string;
}

/**
 * Why a context is opened. Writes and readbacks never share a vendor session:
 * the readback must not be the page (or session) that just reported success.
 */
export type SessionPurpose = 'write' | 'read' | 'readback';

export interface OpenedSession {
  context: BrowserContext;
  page: Page;
  traced: boolean;
  /** Stops tracing (if on) and returns the trace zip, then closes the context. */
  close(): Promise<Buffer | undefined>;
}

/**
 * Fresh browser contexts per task, each carrying its identity's stored vendor
 * session. Logging in happens here, before tracing starts, so the password
 * never enters a trace.
 */
export class IdentitySessions {
  private readonly stored = new Map<string, Awaited<ReturnType<BrowserContext['storageState']>>>();

  constructor(
    private readonly browser: () => Promise<Browser>,
    private readonly pack: SitePack,
    private readonly baseUrl: string,
  ) {}

  async open(identityId: string, secret: IdentitySecret, purpose: SessionPurpose, options: { trace: boolean }): Promise<OpenedSession> {
    const browser = await this.browser();
    const slot = `${identityId}/${purpose}`;
    let context = await browser.newContext({
      storageState: this.stored.get(slot),
      locale: 'zh-CN',
      viewport: { width: 1280, height: 860 },
      acceptDownloads: true,
    });
    try {
      if (!(await this.stillLoggedIn(context))) {
        await context.close();
        context = await browser.newContext({ locale: 'zh-CN', viewport: { width: 1280, height: 860 }, acceptDownloads: true });
        await this.login(context, secret);
        this.stored.set(slot, await context.storageState());
      }
      if (options.trace) await context.tracing.start({ screenshots: true, snapshots: true, sources: false });
      const page = await context.newPage();
      let closing: Promise<Buffer | undefined> | undefined;
      // Idempotent: the caller may close early to collect the trace, and a finally block closes again.
      const close = () => (closing ??= closeSession(context, options.trace));
      return { context, page, traced: options.trace, close };
    } catch (error) {
      await context.close().catch(() => undefined);
      throw error;
    }
  }

  /** Forgets stored sessions, e.g. after the vendor revoked them. */
  forget(identityId: string): void {
    for (const key of [...this.stored.keys()]) if (key.startsWith(`${identityId}/`)) this.stored.delete(key);
  }

  private async stillLoggedIn(context: BrowserContext): Promise<boolean> {
    if ((await context.cookies()).length === 0) return false;
    const probe = await context.request.get(new URL(this.pack.login.probeUrl, this.baseUrl).toString(), {
      maxRedirects: 0,
      failOnStatusCode: false,
    });
    const location = probe.headers()['location'] ?? '';
    return !(probe.status() >= 300 && probe.status() < 400 && this.pack.sessionLost.urlContains.some((f) => location.includes(f)));
  }

  private async login(context: BrowserContext, secret: IdentitySecret): Promise<void> {
    const page = await context.newPage();
    const params = { username: secret.username, password: secret.password };
    const ctx = { baseUrl: this.baseUrl, params, sessionLost: { urlContains: ['/__never__'], texts: this.pack.sessionLost.texts }, traced: false };
    await runStep(page, { action: 'open', url: this.pack.login.url }, ctx);
    for (const step of this.pack.login.steps) await runStep(page, step, ctx);
    const loggedIn = await resolveLocator(page, this.pack.login.loggedIn, {})
      .first()
      .waitFor({ state: 'visible', timeout: 10_000 })
      .then(() => true)
      .catch(() => false);
    await page.close();
    if (!loggedIn) {
      throw new SessionLostError(`login as ${secret.username} did not reach a logged-in page; check the identity's credentials`, {
        username: secret.username,
      });
    }
  }
}

async function closeSession(context: BrowserContext, traced: boolean): Promise<Buffer | undefined> {
  let trace: Buffer | undefined;
  if (traced) {
    const dir = await mkdtemp(join(tmpdir(), 'paperclip-trace-'));
    try {
      const path = join(dir, 'trace.zip');
      await context.tracing.stop({ path });
      trace = redactTrace(await readFile(path));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  await context.close();
  return trace;
}
