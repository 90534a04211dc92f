import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { SitePack } from '../sitepack/schema.js';
import { SessionLostError } from '../domain/errors.js';
import { resolveLocator } from './locate.js';
import { resetDialogPolicy, runStep } from './executor.js';
import { redactTrace } from './trace-redaction.js';
import { devtoolsOf } from './quiet-page.js';
import { passSecondFactor } from './second-factor.js';
import { paceContext, pacePage, type ContextWork, type PagePacing } from './request-pace.js';
import { currentRateLimitTally } from '../lib/retry-after.js';
import { paceAccount, pacedPath, paceFor } from '../lib/request-pace.js';

export interface IdentitySecret {
  username: string;
  password: string;
  apiToken?: string;
  /** The base32 TOTP secret, for a pack whose login asks a second factor (login.secondFactor). */
  totpSecret?: string;
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
  /**
   * A kept context, handed over without asking the vendor first whether its session still holds: a task
   * that finds it gone before it acted may log in and start over (withSession does).
   */
  reused: boolean;
  /** Whether the task said it changed something at the vendor (markActed): it must then never start over. */
  readonly acted: boolean;
  /** Called just before the first action that may change something at the vendor (a commit click). */
  markActed(): void;
  /**
   * Waits for the identity's request pace (the pack's `pace`) before a request made outside the pages (the
   * context's own API requests: a cookie API read, an export); page requests are paced on their way out. Absent
   * when the pack declares no pace.
   */
  paceRequest?(url: URL): Promise<void>;
  /** The task failed: close this context instead of handing it to the next task. */
  discardOnClose(): void;
  /**
   * Stops tracing (if on) and returns the trace zip; the page stays usable (a DevTools capture is not a traced
   * action). Lets the last picture be taken while the trace is written. Idempotent; close() returns the same zip.
   */
  stopTrace(): Promise<Buffer | undefined>;
  /** Stops tracing (if on) and returns the trace zip, then releases the context. */
  close(): Promise<Buffer | undefined>;
}

/** A session over a page its caller opened and closes itself: no login, no trace, nothing kept (fixtures, measurements). */
export function pageSession(context: BrowserContext, page: Page): OpenedSession {
  return {
    context,
    page,
    traced: false,
    reused: false,
    acted: false,
    markActed: () => undefined,
    discardOnClose: () => undefined,
    stopTrace: async () => undefined,
    close: async () => undefined,
  };
}

export interface PoolLimits {
  /** Idle contexts kept per identity and purpose (one per concurrent task is enough). */
  maxIdlePerSlot: number;
  /** An idle context older than this is closed rather than reused. */
  maxIdleMs: number;
  /** Idle contexts kept in all, across identities (each costs a renderer's memory). */
  maxIdle: number;
  /** A context is retired after this many tasks, bounding what one renderer accumulates. */
  maxUses: number;
}

const DEFAULT_LIMITS: PoolLimits = { maxIdlePerSlot: 4, maxIdle: 12, maxIdleMs: 5 * 60_000, maxUses: 100 };

const CONTEXT_OPTIONS = { locale: 'zh-CN', viewport: { width: 1280, height: 860 }, acceptDownloads: true } as const;

interface Lease {
  context: BrowserContext;
  /** Whose tally the context's 429s and pace waits go to (a paced pack only). */
  work: ContextWork;
  page: Page;
  uses: number;
  idleSince: number;
  crashed: boolean;
  /** The reset after its last task, still running while the lease waits: whether it left a clean page. */
  reset?: Promise<boolean>;
}

export interface SessionStats {
  /** Browser contexts created (including the short-lived ones used to log in). */
  contextsCreated: number;
  /** Tasks served by a kept context instead of a new one. */
  reused: number;
  /** Logins through the pack's login form. */
  logins: number;
}

/**
 * Browser contexts per identity and purpose, each carrying the identity's
 * vendor session. A context serves one task at a time; after a task that
 * succeeded it is reset to a blank page and kept for the next task of the same
 * identity and purpose, because starting a renderer for a new context costs
 * more than everything else in setting up a task. Contexts are never shared
 * across identities (so never across tenants) or across purposes (so a
 * readback never uses the write's session). A failed task's context is closed.
 *
 * Logging in happens here, in a context of its own and before tracing starts,
 * so the password never enters a trace. A traced task restarts tracing on its
 * context, so its trace holds only its own requests.
 */
export class IdentitySessions {
  private readonly stored = new Map<string, Awaited<ReturnType<BrowserContext['storageState']>>>();
  private readonly idle = new Map<string, Lease[]>();
  private readonly counters: SessionStats = { contextsCreated: 0, reused: 0, logins: 0 };
  /** How each context of a paced identity is paced, and whose work it is doing (a pack with a pace only). */
  private readonly pacings = new WeakMap<BrowserContext, PagePacing>();

  constructor(
    private readonly browser: () => Promise<Browser>,
    private readonly pack: SitePack,
    private readonly baseUrl: string,
    private readonly limits: PoolLimits = DEFAULT_LIMITS,
  ) {}

  get stats(): SessionStats {
    return { ...this.counters };
  }

  async open(identityId: string, secret: IdentitySecret, purpose: SessionPurpose, options: { trace: boolean }): Promise<OpenedSession> {
    const browser = await this.browser();
    const slot = `${identityId}/${purpose}`;
    let lease = await this.takeIdle(slot, browser);
    const reused = lease !== undefined;
    try {
      if (!lease) lease = await this.newLease(browser, slot, secret);
      // DOM snapshots let an auditor replay every action; the screencast filmstrip would repeat what the
      // evidence screenshots already show, at the cost of encoding every frame.
      if (options.trace) await lease.context.tracing.start({ screenshots: false, snapshots: true, sources: false });
    } catch (error) {
      await lease?.context.close().catch(() => undefined);
      throw error;
    }
    lease.uses += 1;
    const taken = lease;
    // A paced context counts its pages' 429s and pace waits for the task that holds it (a step), whose async context
    // its events do not run in; the step's navigation and commit waiters then leave those 429s to it.
    const tally = currentRateLimitTally();
    if (this.pack.pace) {
      taken.work.tally = tally;
      if (tally) tally.pagesWatched = true;
    }
    let discard = false;
    let acted = false;
    let closing: Promise<Buffer | undefined> | undefined;
    let stopping: Promise<Buffer | undefined> | undefined;
    const stopTrace = () => (stopping ??= options.trace ? stopTracing(taken.context, this.pack.pageSecrets) : Promise.resolve(undefined));
    return {
      context: taken.context,
      page: taken.page,
      traced: options.trace,
      reused,
      get acted() {
        return acted;
      },
      markActed: () => {
        acted = true;
      },
      discardOnClose: () => {
        discard = true;
      },
      stopTrace,
      ...(this.pack.pace ? { paceRequest: (url: URL) => this.paceRequest(secret.username, url) } : {}),
      // Idempotent: the caller may close early to collect the trace, and a finally block closes again.
      close: () => {
        taken.work.tally = undefined;
        closing ??= this.release(slot, taken, stopTrace, discard);
        return closing;
      },
    };
  }

  /**
   * Opens and keeps one context per purpose for the identity, logging in where no stored session works, so the
   * first task of each purpose finds a kept context. Used where one process runs every step (the embedded stack):
   * the batch warms them while it reads the list.
   */
  async warm(
    identityId: string,
    secret: IdentitySecret,
    purposes: readonly SessionPurpose[],
    /** The purposes whose tasks are traced: warmed with a trace too (discarded), since a context's first trace costs most. */
    traced: readonly SessionPurpose[] = [],
  ): Promise<void> {
    // One at a time: read and write share a login, so the second finds the first one's stored session.
    for (const purpose of purposes) {
      if ((this.idle.get(`${identityId}/${purpose}`)?.length ?? 0) > 0) continue;
      const session = await this.open(identityId, secret, purpose, { trace: traced.includes(purpose) });
      // A context's first page on the vendor's site starts a renderer process for it (blanking the page later
      // keeps that process): one read of the pack's probe page here spares the batch's first item that start.
      await session.page
        .goto(new URL(this.pack.login.probeUrl, this.baseUrl).toString(), { waitUntil: 'domcontentloaded' })
        .catch(() => undefined);
      await devtoolsOf(session.page).catch(() => undefined);
      await session.close();
    }
  }

  /** Forgets stored sessions and closes kept contexts, e.g. after the vendor revoked them. */
  forget(identityId: string): void {
    for (const key of [...this.stored.keys()]) if (key.startsWith(`${identityId}/`)) this.stored.delete(key);
    for (const [slot, leases] of [...this.idle]) {
      if (!slot.startsWith(`${identityId}/`)) continue;
      this.idle.delete(slot);
      for (const lease of leases) void lease.context.close().catch(() => undefined);
    }
  }

  /** Closes every kept context (the browser stays up). */
  async closeIdle(): Promise<void> {
    const leases = [...this.idle.values()].flat();
    this.idle.clear();
    await Promise.all(leases.map((lease) => lease.context.close().catch(() => undefined)));
  }

  /**
   * A kept context of this slot that still works. Whether its vendor session still holds is not asked here:
   * asking costs a vendor request per task, and the task's first page tells anyway (see withSession).
   */
  private async takeIdle(slot: string, browser: Browser): Promise<Lease | undefined> {
    const leases = this.idle.get(slot) ?? [];
    for (let lease = leases.pop(); lease; lease = leases.pop()) {
      const usable =
        (await (lease.reset ?? true)) &&
        !lease.crashed &&
        !lease.page.isClosed() &&
        lease.context.browser() === browser &&
        browser.isConnected() &&
        Date.now() - lease.idleSince < this.limits.maxIdleMs;
      if (usable) {
        this.counters.reused += 1;
        return lease;
      }
      await lease.context.close().catch(() => undefined);
    }
    return undefined;
  }

  /** Waits for the account's pace when the pack declares one and `url` is a request it counts; the wait is tallied. */
  private async paceRequest(username: string, url: URL): Promise<void> {
    const spec = this.pack.pace;
    if (!spec || url.origin !== new URL(this.baseUrl).origin || !pacedPath(url, spec.paths)) return;
    const waited = await paceFor(paceAccount(this.baseUrl, username), spec).take();
    if (waited > 0) currentRateLimitTally()?.add('pacedMs', waited);
  }

  private async newLease(browser: Browser, slot: string, secret: IdentitySecret): Promise<Lease> {
    const login = loginSlot(slot);
    const stored = this.stored.get(login);
    let context = await this.newContext(browser, secret.username, stored);
    try {
      if (!stored || !(await this.stillLoggedIn(context, secret.username))) {
        if (stored) {
          await context.close();
          context = await this.newContext(browser, secret.username);
        }
        await this.login(context, secret);
        this.stored.set(login, await context.storageState());
      }
      const page = await context.newPage();
      // A kept context must not answer a later read from its HTTP cache: a readback reads the vendor, not a copy.
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      await this.pace(context, page);
      const work = this.pacings.get(context)?.work ?? { tally: undefined };
      const lease: Lease = { context, work, page, uses: 0, idleSince: Date.now(), crashed: false };
      page.on('crash', () => {
        lease.crashed = true;
      });
      return lease;
    } catch (error) {
      await context.close().catch(() => undefined);
      throw error;
    }
  }

  private async newContext(
    browser: Browser,
    username: string,
    storageState?: Awaited<ReturnType<BrowserContext['storageState']>>,
  ): Promise<BrowserContext> {
    this.counters.contextsCreated += 1;
    const context = await browser.newContext({ ...CONTEXT_OPTIONS, storageState });
    const spec = this.pack.pace;
    if (spec) {
      // Every context of the identity keeps the one pace: the vendor counts the account, not the page. Until a task
      // holds the context (the login in it), its 429s and waits go to the work that made it.
      const work: ContextWork = { tally: currentRateLimitTally() };
      const pace = paceFor(paceAccount(this.baseUrl, username), spec);
      const pacing: PagePacing = {
        origin: new URL(this.baseUrl).origin,
        paths: spec.paths,
        assets: spec.assets,
        take: () => pace.take(),
        work,
      };
      this.pacings.set(context, pacing);
      paceContext(context, pacing);
    }
    return context;
  }

  /** Paces a page the pool opened before its first request (a paced pack; otherwise nothing at all). */
  private async pace(context: BrowserContext, page: Page): Promise<void> {
    const pacing = this.pacings.get(context);
    if (pacing) await pacePage(context, page, pacing);
  }

  private async release(
    slot: string,
    lease: Lease,
    stopTrace: () => Promise<Buffer | undefined>,
    discard: boolean,
  ): Promise<Buffer | undefined> {
    let trace: Buffer | undefined;
    let keep = !discard && !lease.crashed && lease.uses < this.limits.maxUses;
    try {
      trace = await stopTrace();
    } catch {
      keep = false;
    }
    // The page is blanked while the lease waits for its next task (which waits for this first): the task that
    // just ended does not wait for it.
    if (keep) lease.reset = resetForNextTask(lease).catch(() => false);
    const leases = this.idle.get(slot) ?? [];
    const idleInAll = [...this.idle.values()].reduce((n, kept) => n + kept.length, 0);
    if (keep && leases.length < this.limits.maxIdlePerSlot && idleInAll < this.limits.maxIdle) {
      lease.idleSince = Date.now();
      leases.push(lease);
      this.idle.set(slot, leases);
    } else {
      await lease.context.close().catch(() => undefined);
    }
    return trace;
  }

  private async stillLoggedIn(context: BrowserContext, username: string): Promise<boolean> {
    if ((await context.cookies()).length === 0) return false;
    await this.paceRequest(username, new URL(this.pack.login.probeUrl, this.baseUrl));
    const probe = await context.request.get(new URL(this.pack.login.probeUrl, this.baseUrl).toString(), {
      maxRedirects: 0,
      failOnStatusCode: false,
    });
    const location = probe.headers()['location'] ?? '';
    // A JSON probe (a single-page app's API) says 401/403; a server-rendered page redirects to its login URL.
    if (probe.status() === 401 || probe.status() === 403) return false;
    return !(probe.status() >= 300 && probe.status() < 400 && this.pack.sessionLost.urlContains.some((f) => location.includes(f)));
  }

  private async login(context: BrowserContext, secret: IdentitySecret): Promise<void> {
    this.counters.logins += 1;
    const page = await context.newPage();
    await this.pace(context, page);
    const params = { username: secret.username, password: secret.password };
    const ctx = {
      baseUrl: this.baseUrl,
      params,
      // Logging in is where a login form and a "session ended" notice belong: only the logged-in marker decides.
      sessionLost: { texts: [] },
      traced: false,
    };
    await runStep(page, { action: 'open', url: this.pack.login.url }, ctx);
    for (const step of this.pack.login.steps) await runStep(page, step, ctx);
    const secondFactor = this.pack.login.secondFactor;
    if (secondFactor) await passSecondFactor(page, secondFactor, secret, this.pack.login.loggedIn);
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

/**
 * Whose login a slot uses. Reading the pre-state and writing act as the identity in the same way and neither is
 * the verdict, so they share one login (each still gets its own context); a readback logs in on its own, so the
 * verdict never comes through the session that wrote.
 */
function loginSlot(slot: string): string {
  const cut = slot.lastIndexOf('/');
  const purpose = slot.slice(cut + 1) as SessionPurpose;
  return `${slot.slice(0, cut)}/${purpose === 'readback' ? 'readback' : 'act'}`;
}

async function stopTracing(context: BrowserContext, pageSecrets: readonly string[]): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'paperclip-trace-'));
  try {
    const path = join(dir, 'trace.zip');
    await context.tracing.stop({ path });
    return redactTrace(await readFile(path), pageSecrets);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Leaves one blank page with no dialog history: the next task starts from nothing the last one saw. */
async function resetForNextTask(lease: Lease): Promise<boolean> {
  for (const other of lease.context.pages()) if (other !== lease.page) await other.close();
  if (lease.page.isClosed()) return false;
  await lease.page.goto('about:blank');
  resetDialogPolicy(lease.page);
  return !lease.crashed;
}
