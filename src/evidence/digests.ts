import { verify as verifySignature, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../domain/audit-chain.js';
import type { DigestSignature } from '../app/ports/keys.js';
import { ANCHOR_PREFIX, DIGEST_PREFIX, addDays, dayEnd, digestKey, isDay } from './anchor-layout.js';
import { sha256Hex, type EvidenceContext } from './folder.js';

/**
 * Daily digests, kept the way CloudTrail keeps its digest files: one signed
 * digest per tenant for every day from the tenant's first seal on, quiet days
 * included, each naming the previous day's digest by key and sha256. They are
 * written on schedule by a function of their own (`write-digests`; an hourly
 * EventBridge rule on AWS, the embedded stack at start and after each batch
 * locally), the only one that may sign with the digest key (KMS, ECDSA P-256).
 *
 * So `audit verify` knows which digests must exist (every finished day from
 * the first seal to now), and a digest deleted, forged, rebuilt or re-ordered
 * is a finding: forging one needs the signing key, not bucket access.
 */

/** A day is digested this long after it ended, so a seal made just before midnight is anchored in time to be listed. */
export const DIGEST_GRACE_MS = 60 * 60 * 1000;
/**
 * `verify` requires a day's digest this long after the day ended: the grace, the hourly schedule, and an hour
 * for the rule's retries.
 */
export const DIGEST_DUE_MS = 3 * 60 * 60 * 1000;
/**
 * A digest written later than this after its day ended was not written on schedule: either the writer did not
 * run for a day, or the digest was deleted and the writer wrote it again from what the anchors say now.
 */
export const DIGEST_LATE_MS = 26 * 60 * 60 * 1000;

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const Link = z.strictObject({ key: z.string(), sha256: Hex64 });

const UnsignedDigest = z.strictObject({
  version: z.literal(2),
  tenant: z.string(),
  day: z.string().refine(isDay),
  /** Every anchor of the day with its sha256, sorted by key; empty on a quiet day. */
  anchors: z.array(Link),
  /** The previous day's digest; null only on the tenant's first day. */
  previous: Link.nullable(),
  digestedAt: z.string(),
});
type UnsignedDigest = z.infer<typeof UnsignedDigest>;

export const DailyDigest = UnsignedDigest.extend({
  signature: z.strictObject({ keyId: z.string(), algorithm: z.literal('ECDSA_SHA_256'), value: z.string().min(1) }),
});
export type DailyDigest = z.infer<typeof DailyDigest>;

/** What is signed: a fixed label and the sha256 of the digest's canonical JSON without its signature (KMS signs at most 4 KB raw). */
export function digestSigningMessage(digest: UnsignedDigest | DailyDigest): Buffer {
  const { signature: _ignored, ...unsigned } = digest as DailyDigest;
  return Buffer.from(`paperclip-daily-digest:v2:${sha256Hex(canonicalJson(unsigned))}`);
}

export interface DigestSigner {
  sign(message: Buffer): Promise<DigestSignature>;
}
export interface DigestPublicKey {
  publicKey(): Promise<KeyObject>;
}

type WriterContext = Pick<EvidenceContext, 'evidence'> & { digestKeys: DigestSigner };

const finishedBy = (day: string, now: number) => dayEnd(day) + DIGEST_GRACE_MS <= now;
const dueBy = (day: string, now: number) => dayEnd(day) + DIGEST_DUE_MS <= now;
const dayOfDigestKey = (key: string) => key.slice(key.lastIndexOf('/') + 1, -'.json'.length);

async function digestDays(ctx: Pick<EvidenceContext, 'evidence'>, tenant: string): Promise<Map<string, string>> {
  const days = new Map<string, string>();
  for (const key of await ctx.evidence.list(`${DIGEST_PREFIX}${tenant}/`)) {
    const day = dayOfDigestKey(key);
    if (key === digestKey(tenant, day) && isDay(day)) days.set(day, key);
  }
  return days;
}

/**
 * The days the tenant has anchors for, oldest first. A whole listing of its anchors, not a delimited one (s3rver
 * reports no common prefix for keys nested deeper than one folder): the writer lists them only until the tenant's
 * first digest exists, verify reads them all anyway.
 */
async function anchorDays(ctx: Pick<EvidenceContext, 'evidence'>, tenant: string): Promise<string[]> {
  const root = `${ANCHOR_PREFIX}${tenant}/`;
  const days = new Set((await ctx.evidence.list(root)).map((k) => k.slice(root.length).split('/')[0]!));
  return [...days].filter(isDay).sort();
}

/**
 * Writes the tenant's digest for each finished day after its latest one (from its first anchored day when it has
 * none), oldest first, each naming the one before; a day without seals gets a digest with no anchors. Digests of
 * days not over yet are never written, and a digest that exists is never replaced. A tenant that never sealed
 * anything gets none. Returns the keys written.
 */
export async function writeTenantDigests(ctx: WriterContext, tenant: string, now = Date.now()): Promise<string[]> {
  const existing = [...(await digestDays(ctx, tenant)).entries()]
    .filter(([day]) => finishedBy(day, now))
    .sort(([a], [b]) => a.localeCompare(b));
  let previousKey = existing.at(-1)?.[1];
  let from: string | undefined;
  if (previousKey) from = addDays(dayOfDigestKey(previousKey), 1);
  else from = (await anchorDays(ctx, tenant))[0];
  if (!from) return [];
  const written: string[] = [];
  for (let day = from; finishedBy(day, now); day = addDays(day, 1)) {
    const keys = (await ctx.evidence.list(`${ANCHOR_PREFIX}${tenant}/${day}/`)).sort();
    const anchors = [];
    for (const key of keys) {
      const body = await ctx.evidence.get(key);
      if (body) anchors.push({ key, sha256: sha256Hex(body) });
    }
    const previousBody = previousKey ? await ctx.evidence.get(previousKey) : undefined;
    const unsigned: UnsignedDigest = {
      version: 2,
      tenant,
      day,
      anchors,
      previous: previousKey && previousBody ? { key: previousKey, sha256: sha256Hex(previousBody) } : null,
      digestedAt: new Date(now).toISOString(),
    };
    const digest: DailyDigest = { ...unsigned, signature: await ctx.digestKeys.sign(digestSigningMessage(unsigned)) };
    const key = digestKey(tenant, day);
    await ctx.evidence.put(key, `${canonicalJson(digest)}\n`, 'application/json');
    written.push(key);
    previousKey = key;
  }
  return written;
}

/** The tenants to digest: the configured ones and any that has digests already (a tenant since removed from the config). */
export async function digestTenants(ctx: Pick<EvidenceContext, 'evidence' | 'config'>): Promise<string[]> {
  const digested = (await ctx.evidence.folders(DIGEST_PREFIX)).map((f) => f.slice(DIGEST_PREFIX.length, -1));
  return [...new Set([...ctx.config.tenants.map((t) => t.id), ...digested])].filter(Boolean).sort();
}

export interface DigestFinding {
  kind: 'altered' | 'removed' | 'added' | 'unsealed';
  object?: string;
  detail: string;
}

/** A digest as read: parsed and its signature checked, or why it cannot be trusted. */
export type ReadDigest =
  | { state: 'missing' }
  | { state: 'invalid'; problem: string; body: Buffer }
  | { state: 'valid'; digest: DailyDigest; body: Buffer };

/** Reads one digest and checks its signature with the digest key's public half. */
export async function readDigest(
  ctx: Pick<EvidenceContext, 'evidence'> & { digestKeys: DigestPublicKey },
  tenant: string,
  day: string,
): Promise<ReadDigest> {
  const key = digestKey(tenant, day);
  const body = await ctx.evidence.get(key);
  if (!body) return { state: 'missing' };
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString('utf8'));
  } catch {
    raw = undefined;
  }
  const parsed = DailyDigest.safeParse(raw);
  if (!parsed.success) return { state: 'invalid', body, problem: 'not a signed daily digest (version 2)' };
  const digest = parsed.data;
  if (digest.tenant !== tenant || digest.day !== day) {
    return { state: 'invalid', body, problem: `it names tenant ${digest.tenant}, day ${digest.day}: not the digest of this key` };
  }
  let publicKey: KeyObject;
  try {
    publicKey = await ctx.digestKeys.publicKey();
  } catch (error) {
    return {
      state: 'invalid',
      body,
      problem: `its signature cannot be checked: no public key for the digest key (${(error as Error).message})`,
    };
  }
  const signature = Buffer.from(digest.signature.value, 'base64');
  if (!verifySignature('sha256', digestSigningMessage(digest), { key: publicKey, dsaEncoding: 'der' }, signature)) {
    return {
      state: 'invalid',
      body,
      problem: `its signature does not verify with the digest key: forged or edited without the key (it claims key ${digest.signature.keyId})`,
    };
  }
  return { state: 'valid', digest, body };
}

export interface VerifyDigestsOptions {
  now?: number;
  /** The day of the tenant's first seal as the audit table records it (the first digest or anchor may be gone). */
  firstSealDay?: string;
  /** A digest written late: a finding on AWS (the schedule runs hourly), a note on the local stack (it runs when started). */
  late?: 'finding' | 'note';
}

/**
 * The tenant's chain of digests: a signed digest for every day from the first seal to the last day that is due,
 * each naming the previous day's digest with its sha256, written after its day and after the previous one;
 * every anchor it lists is unchanged and no anchor was added to its day afterwards.
 */
export async function verifyTenantDigests(
  ctx: Pick<EvidenceContext, 'evidence'> & { digestKeys: DigestPublicKey },
  tenant: string,
  options: VerifyDigestsOptions = {},
): Promise<{ findings: DigestFinding[]; notes: string[] }> {
  const now = options.now ?? Date.now();
  const findings: DigestFinding[] = [];
  const notes: string[] = [];
  const existing = await digestDays(ctx, tenant);
  for (const key of await ctx.evidence.list(`${DIGEST_PREFIX}${tenant}/`)) {
    if (![...existing.values()].includes(key))
      findings.push({ kind: 'added', object: key, detail: `${key} added: not a daily digest key` });
  }
  const anchored = await anchorDays(ctx, tenant);
  const firsts = [[...existing.keys()].sort()[0], anchored[0], options.firstSealDay].filter((d): d is string => d !== undefined);
  const first = firsts.sort()[0];
  if (!first) return { findings, notes };

  // Every day that is due must have its digest.
  const missing: string[] = [];
  for (let day = first; dueBy(day, now); day = addDays(day, 1)) if (!existing.has(day)) missing.push(day);
  for (const day of missing) {
    findings.push({
      kind: 'removed',
      object: digestKey(tenant, day),
      detail:
        `${digestKey(tenant, day)} is missing: every day from the tenant's first seal (${first}) has a signed digest once ` +
        `it is ${DIGEST_DUE_MS / 3600_000} h over; it was deleted, or the digest writer did not run (locally: paperclip audit digest)`,
    });
  }

  let previous: { day: string; sha256: string; digestedAt: number } | undefined;
  for (const day of [...existing.keys()].sort()) {
    const key = digestKey(tenant, day);
    const read = await readDigest(ctx, tenant, day);
    if (read.state === 'missing') continue;
    if (read.state === 'invalid') {
      findings.push({ kind: 'altered', object: key, detail: `${key} altered: ${read.problem}` });
      previous = { day, sha256: sha256Hex(read.body), digestedAt: Number.NaN };
      continue;
    }
    const { digest, body } = read;
    const digestedAt = Date.parse(digest.digestedAt);
    if (!finishedBy(day, now) || !(digestedAt >= dayEnd(day))) {
      findings.push({
        kind: 'added',
        object: key,
        detail: `${key} added: a digest written before its day was over (digestedAt ${digest.digestedAt})`,
      });
    }
    const expectedPrevious = day > first ? digestKey(tenant, addDays(day, -1)) : null;
    if ((digest.previous?.key ?? null) !== expectedPrevious) {
      findings.push({
        kind: 'altered',
        object: key,
        detail:
          `${key} names ${digest.previous?.key ?? 'no digest'} as the one before it, not ${expectedPrevious ?? 'none (the first day)'}: ` +
          'the chain of digests is not continuous (a day left out, or the chain rebuilt)',
      });
    } else if (digest.previous && previous?.day === addDays(day, -1) && digest.previous.sha256 !== previous.sha256) {
      findings.push({
        kind: 'altered',
        object: key,
        detail: `${key} does not link the digest before it (${digest.previous.key}): that digest was replaced after ${key} named it`,
      });
    }
    if (previous && previous.day === addDays(day, -1) && digestedAt < previous.digestedAt) {
      findings.push({
        kind: 'altered',
        object: key,
        detail: `${key} was written (${digest.digestedAt}) before the digest of the day before it: out of order, the chain was rebuilt`,
      });
    }
    if (digestedAt > dayEnd(day) + DIGEST_LATE_MS) {
      const text =
        `${key} was written ${Math.round((digestedAt - dayEnd(day)) / 3600_000)} h after its day ended (${digest.digestedAt}), not on ` +
        'schedule: the digest writer did not run, or the digest was deleted and written again from what the anchors say now';
      if (options.late === 'finding') findings.push({ kind: 'altered', object: key, detail: text });
      else notes.push(text);
    }
    for (const anchor of digest.anchors) {
      const now = await ctx.evidence.get(anchor.key);
      if (!now) findings.push({ kind: 'removed', object: anchor.key, detail: `${anchor.key} removed (listed in ${key})` });
      else if (sha256Hex(now) !== anchor.sha256)
        findings.push({ kind: 'altered', object: anchor.key, detail: `${anchor.key} altered since ${key} listed it` });
    }
    const listed = new Set(digest.anchors.map((a) => a.key));
    for (const stray of await ctx.evidence.list(`${ANCHOR_PREFIX}${tenant}/${day}/`)) {
      if (!listed.has(stray)) findings.push({ kind: 'added', object: stray, detail: `${stray} added after ${key} digested its day` });
    }
    previous = { day, sha256: sha256Hex(body), digestedAt };
  }
  return { findings, notes };
}

/** Whether verify requires the digest of this day by `now`. */
export function digestDue(day: string, now: number): boolean {
  return dueBy(day, now);
}
