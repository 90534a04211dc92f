import { z } from 'zod';
import { canonicalJson, type AuditEvent } from '../domain/audit-chain.js';
import { sha256Hex, type EvidenceContext } from './folder.js';

/**
 * Seal hashes anchored outside the audit table. Every event that seals
 * something (a batch's `sealed`, its later `item_sealed`, an item's own
 * `sealed` in `<key>:seal`) gets a small anchor object in the evidence bucket
 * under anchors/, and each finished day gets a digest listing that day's
 * anchors with their sha256 and the previous digest's, a chain like
 * CloudTrail's digest files. On AWS the bucket's Object Lock (its default
 * retention, from the deployment config) keeps the first version of every
 * anchor and digest; only the sealing functions may put objects there. So
 * rewriting a sealed history consistently needs write access to the table
 * and to the locked bucket, and a digest already written still lists only
 * the anchors of its day. `audit verify` checks both (verifyAnchors,
 * verifyDigestChain).
 */

export const ANCHOR_PREFIX = 'anchors/';
/** A day is digested this long after it ended, so a seal made just before midnight is anchored in time to be listed. */
export const DIGEST_GRACE_MS = 60 * 60 * 1000;

export const SEAL_EVENT_TYPES = ['sealed', 'item_sealed'] as const;

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const SealAnchor = z.strictObject({
  version: z.literal(1),
  tenant: z.string(),
  chain: z.string(),
  seq: z.number().int().min(1),
  type: z.string(),
  /** The audit event's own hash: the whole event, its data (the seal) included. */
  eventHash: Hex64,
  sealHash: Hex64.nullable(),
  at: z.string(),
});
export type SealAnchor = z.infer<typeof SealAnchor>;

export const DailyDigest = z.strictObject({
  version: z.literal(1),
  tenant: z.string(),
  day: z.string(),
  anchors: z.array(z.strictObject({ key: z.string(), sha256: Hex64 })),
  previous: z.strictObject({ key: z.string(), sha256: Hex64 }).nullable(),
  digestedAt: z.string(),
});
export type DailyDigest = z.infer<typeof DailyDigest>;

const dayOf = (iso: string) => iso.slice(0, 10);

export function anchorKey(tenant: string, event: Pick<AuditEvent, 'chain' | 'seq' | 'at'>): string {
  return `${ANCHOR_PREFIX}${tenant}/${dayOf(event.at)}/${event.chain}/${event.seq}.json`;
}

export function digestKey(tenant: string, day: string): string {
  return `${ANCHOR_PREFIX}${tenant}/digests/${day}.json`;
}

type AnchorContext = Pick<EvidenceContext, 'evidence'>;

/**
 * Anchors one sealing event, then digests every earlier day of the tenant
 * that has anchors and no digest yet. Throws on failure; the callers' own
 * error handling decides (a missing anchor is what verify reports).
 */
export async function anchorSealEvent(ctx: AnchorContext, tenant: string, event: AuditEvent, now = Date.now()): Promise<string> {
  const anchor: SealAnchor = {
    version: 1,
    tenant,
    chain: event.chain,
    seq: event.seq,
    type: event.type,
    eventHash: event.hash,
    sealHash: typeof event.data['sealHash'] === 'string' ? event.data['sealHash'] : null,
    at: event.at,
  };
  const key = anchorKey(tenant, event);
  await ctx.evidence.put(key, `${canonicalJson(anchor)}\n`, 'application/json');
  await digestFinishedDays(ctx, tenant, now);
  return key;
}

/**
 * Writes the digest of each finished day (oldest first) that has anchors and none yet, each linking
 * the one before. It walks the days after the latest digest one listing each (the tenant's whole
 * anchor prefix is listed only before its first digest, or after a gap of more than a year).
 */
export async function digestFinishedDays(ctx: AnchorContext, tenant: string, now = Date.now()): Promise<string[]> {
  const root = `${ANCHOR_PREFIX}${tenant}/`;
  const digested = (await ctx.evidence.list(`${root}digests/`)).sort();
  let previousKey = digested.at(-1);
  const finished = (day: string) => Date.parse(`${day}T00:00:00Z`) + DAY_MS + DIGEST_GRACE_MS <= now;
  let days: string[];
  const from = previousKey ? addDays(dayFromDigestKey(previousKey), 1) : undefined;
  if (from && Date.parse(`${from}T00:00:00Z`) > now - 400 * DAY_MS) {
    days = [];
    for (let day = from; finished(day); day = addDays(day, 1)) days.push(day);
  } else {
    const all = await ctx.evidence.list(root);
    days = [...new Set(all.map((k) => k.slice(root.length).split('/')[0]!))].filter((d) => /^\d{4}-\d{2}-\d{2}$/.test(d)).sort();
    days = days.filter((d) => (!from || d >= from) && finished(d));
  }
  const written: string[] = [];
  for (const day of days) {
    const keys = (await ctx.evidence.list(`${root}${day}/`)).sort();
    if (keys.length === 0) continue;
    const anchors = [];
    for (const key of keys) {
      const body = await ctx.evidence.get(key);
      if (body) anchors.push({ key, sha256: sha256Hex(body) });
    }
    const previousBody = previousKey ? await ctx.evidence.get(previousKey) : undefined;
    const digest: DailyDigest = {
      version: 1,
      tenant,
      day,
      anchors,
      previous: previousKey && previousBody ? { key: previousKey, sha256: sha256Hex(previousBody) } : null,
      digestedAt: new Date(now).toISOString(),
    };
    const key = digestKey(tenant, day);
    await ctx.evidence.put(key, `${canonicalJson(digest)}\n`, 'application/json');
    written.push(key);
    previousKey = key;
  }
  return written;
}

const DAY_MS = 24 * 3600 * 1000;
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
const dayFromDigestKey = (key: string) => key.slice(key.lastIndexOf('/') + 1, -'.json'.length);

export interface AnchorFinding {
  kind: 'altered' | 'removed' | 'added';
  chain?: string;
  seq?: number;
  object?: string;
  detail: string;
}

/**
 * Each sealing event of a chain against its anchor: the anchor must exist and
 * name the same event hash and seal hash, and where its day was digested, the
 * digest must list it with the same sha256.
 */
export async function verifyAnchors(ctx: AnchorContext, tenant: string, chain: readonly AuditEvent[]): Promise<AnchorFinding[]> {
  const findings: AnchorFinding[] = [];
  const digests = new Map<string, DailyDigest | null>();
  for (const event of chain) {
    if (!(SEAL_EVENT_TYPES as readonly string[]).includes(event.type)) continue;
    const key = anchorKey(tenant, event);
    const label = `event seq ${event.seq} (${event.type}) of chain ${event.chain}`;
    const body = await ctx.evidence.get(key);
    if (!body) {
      findings.push({
        kind: 'removed',
        chain: event.chain,
        seq: event.seq,
        object: key,
        detail: `${label} has no anchor outside the table (${key} is missing): the seal may have been forged in the table`,
      });
      continue;
    }
    const parsed = SealAnchor.safeParse(safeJson(body));
    const anchor = parsed.success ? parsed.data : undefined;
    const sealHash = typeof event.data['sealHash'] === 'string' ? event.data['sealHash'] : null;
    if (!anchor || anchor.eventHash !== event.hash || anchor.sealHash !== sealHash || anchor.chain !== event.chain) {
      findings.push({
        kind: 'altered',
        chain: event.chain,
        seq: event.seq,
        object: key,
        detail: `${label} differs from its anchor ${key}: the sealed history in the table is not the one anchored`,
      });
      continue;
    }
    const day = dayOf(event.at);
    if (!digests.has(day)) digests.set(day, parseDigest(await ctx.evidence.get(digestKey(tenant, day))));
    const digest = digests.get(day);
    if (!digest) continue;
    const listed = digest.anchors.find((a) => a.key === key);
    if (!listed || listed.sha256 !== sha256Hex(body)) {
      findings.push({
        kind: listed ? 'altered' : 'added',
        chain: event.chain,
        seq: event.seq,
        object: key,
        detail: `${label}: its anchor ${key} is ${listed ? 'not the one' : 'not'} listed in the digest of ${day} (written after the day was digested)`,
      });
    }
  }
  return findings;
}

/** The tenant's daily digests: each one parses and links the one before it by key and sha256; every anchor it lists is there unchanged. */
export async function verifyDigestChain(ctx: AnchorContext, tenant: string): Promise<AnchorFinding[]> {
  const findings: AnchorFinding[] = [];
  const keys = (await ctx.evidence.list(`${ANCHOR_PREFIX}${tenant}/digests/`)).sort();
  let previous: { key: string; sha256: string } | null = null;
  for (const key of keys) {
    const body = await ctx.evidence.get(key);
    const digest = parseDigest(body);
    if (!body || !digest) {
      findings.push({ kind: 'altered', object: key, detail: `${key} altered: not a daily digest` });
      previous = body ? { key, sha256: sha256Hex(body) } : null;
      continue;
    }
    if (previous && (digest.previous?.key !== previous.key || digest.previous.sha256 !== previous.sha256)) {
      findings.push({
        kind: 'altered',
        object: key,
        detail: `${key} does not link the digest before it (${previous.key}): the digest chain was rewritten`,
      });
    }
    for (const anchor of digest.anchors) {
      const now = await ctx.evidence.get(anchor.key);
      if (!now) findings.push({ kind: 'removed', object: anchor.key, detail: `${anchor.key} removed (listed in ${key})` });
      else if (sha256Hex(now) !== anchor.sha256)
        findings.push({ kind: 'altered', object: anchor.key, detail: `${anchor.key} altered since ${key} listed it` });
    }
    const listed = new Set(digest.anchors.map((a) => a.key));
    for (const stray of await ctx.evidence.list(`${ANCHOR_PREFIX}${tenant}/${digest.day}/`)) {
      if (!listed.has(stray)) findings.push({ kind: 'added', object: stray, detail: `${stray} added after ${key} digested its day` });
    }
    previous = { key, sha256: sha256Hex(body) };
  }
  return findings;
}

function parseDigest(body: Buffer | undefined): DailyDigest | null {
  if (!body) return null;
  const parsed = DailyDigest.safeParse(safeJson(body));
  return parsed.success ? parsed.data : null;
}

function safeJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
