import { z } from 'zod';
import { canonicalJson, type AuditEvent } from '../domain/audit-chain.js';
import { sha256Hex, type EvidenceContext } from './folder.js';
import { anchorKey, dayOf, digestKey } from './anchor-layout.js';
import { digestDue, readDigest, type DigestPublicKey, type ReadDigest } from './digests.js';

export { ANCHOR_PREFIX, anchorKey, digestKey } from './anchor-layout.js';

/**
 * Seal hashes anchored outside the audit table. Every event that seals
 * something (a batch's `sealed`, its later `item_sealed`, an item's own
 * `sealed` in `<key>:seal`) gets a small anchor object in the evidence bucket
 * under anchors/, and every day gets a signed digest listing that day's
 * anchors, written by the digest function (digests.ts), a chain like
 * CloudTrail's digest files. On AWS the bucket's Object Lock (its default
 * retention, from the deployment config) keeps the first version of every
 * anchor and digest; only the sealing functions may put anchors, only the
 * digest function digests, and only it may sign. So rewriting a sealed history
 * consistently needs write access to the table and the locked bucket and the
 * digest key, and a digest already written still lists only the anchors of
 * its day. `audit verify` checks both (verifyAnchors, verifyTenantDigests).
 */

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

type AnchorContext = Pick<EvidenceContext, 'evidence'>;

/**
 * Anchors one sealing event. Throws on failure; the callers' own error
 * handling decides (a missing anchor is what verify reports). Its day's digest
 * is the digest function's to write, once the day is over.
 */
export async function anchorSealEvent(ctx: AnchorContext, tenant: string, event: AuditEvent): Promise<string> {
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
  return key;
}

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
export async function verifyAnchors(
  ctx: AnchorContext & { digestKeys: DigestPublicKey },
  tenant: string,
  chain: readonly AuditEvent[],
  options: { now?: number } = {},
): Promise<AnchorFinding[]> {
  const now = options.now ?? Date.now();
  const findings: AnchorFinding[] = [];
  const digests = new Map<string, ReadDigest>();
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
    if (!digests.has(day)) digests.set(day, await readDigest(ctx, tenant, day));
    const read = digests.get(day)!;
    if (read.state !== 'valid') {
      // Until its day's digest is due the anchor stands alone (Object Lock keeps its first version on AWS).
      if (read.state === 'missing' && !digestDue(day, now)) continue;
      findings.push({
        kind: read.state === 'missing' ? 'removed' : 'altered',
        chain: event.chain,
        seq: event.seq,
        object: digestKey(tenant, day),
        detail:
          `${label}: its anchor ${key} is checked against no signed digest: the digest of ${day} ` +
          (read.state === 'missing' ? `(${digestKey(tenant, day)}) is missing` : `is not valid (${read.problem})`),
      });
      continue;
    }
    const listed = read.digest.anchors.find((a) => a.key === key);
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

function safeJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
