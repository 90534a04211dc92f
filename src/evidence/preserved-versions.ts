import type { ObjectVersion } from '../app/ports/evidence.js';
import { ANCHOR_PREFIX, DIGEST_PREFIX } from './anchor-layout.js';
import { batchChain, SEAL_NAME, type BatchRef, type EvidenceContext } from './folder.js';
import { parseSeal, SEALED_EVENT } from './seal.js';
import { eventsOfType } from '../domain/audit-events.js';
import { verifyAll, verifyBatch, verifyKey, type Finding, type VerifyResult } from './verify.js';

/**
 * `audit verify` on what Object Lock preserves, not on what the bucket shows now.
 *
 * With write access to the evidence bucket, an object cannot be removed or
 * changed under Object Lock, only covered: a PUT adds a later version, a
 * DELETE without a version id adds a delete marker, and a plain GET or
 * listing then sees the cover. So before verifying, this lists the versions
 * (ListObjectVersions) of the objects that are written once per key or must
 * match the chain, and pins each to the version that is the evidence:
 *
 * - anchors and daily digests (`anchors/…`) are written once: any later
 *   version or delete marker is a finding naming both version ids, and the
 *   FIRST version is the one verified;
 * - `seal.json` is written again by design (a re-run of the task, a late item
 *   re-sealed), each time with a `sealed` event in the batch chain: a version
 *   whose sealHash no `sealed` event records, and a delete marker, are
 *   findings naming both version ids; the latest version the chain records
 *   (else the first) is the one verified.
 *
 * Then the ordinary checks run (verify.ts) on the pinned view, so a seal or
 * an anchor covered by a forged version or a marker is checked as it was
 * written. Needs s3:ListBucketVersions and s3:GetObjectVersion (the auditor
 * role holds both).
 */

export type VerifyScope = { kind: 'all'; tenant?: string } | { kind: 'batch'; batch: BatchRef } | { kind: 'key'; key: string };

/** What the lock preserves: the version each covered key is pinned to, and a finding per cover. */
export interface PreservedVersions {
  pins: Map<string, string>;
  findings: Finding[];
  /** Versions and delete markers looked at. */
  versions: number;
}

const isSealKey = (key: string) => key.startsWith('evidence/') && key.endsWith(`/${SEAL_NAME}`);
const short = (versionId: string) => (versionId.length > 16 ? `${versionId.slice(0, 16)}…` : versionId);

/** Where the versions of a scope live: the tenant's anchors and evidence, or everything's. */
function prefixesOf(scope: { tenant?: string; batch?: BatchRef }): string[] {
  if (scope.batch) return [`${ANCHOR_PREFIX}${scope.batch.tenant}/`, `evidence/${scope.batch.tenant}/${scope.batch.taskId}/`];
  if (scope.tenant) return [`${ANCHOR_PREFIX}${scope.tenant}/`, `evidence/${scope.tenant}/`];
  return [ANCHOR_PREFIX, 'evidence/'];
}

function batchOfSealKey(key: string): BatchRef | undefined {
  const [, tenant, taskId] = key.split('/');
  return tenant && taskId ? { tenant, taskId } : undefined;
}

/** Anchors and digests: one version, ever. */
function writeOnceFindings(key: string, versions: ObjectVersion[], label: string | undefined): { pin?: string; findings: Finding[] } {
  const first = versions.find((v) => !v.deleteMarker);
  const findings: Finding[] = [];
  if (!first) return { findings };
  for (const later of versions.slice(versions.indexOf(first) + 1)) {
    findings.push({
      kind: later.deleteMarker ? 'removed' : 'altered',
      ...(label ? { batch: label } : {}),
      object: key,
      detail: later.deleteMarker
        ? `${key} deleted: delete marker ${short(later.versionId)} covers version ${short(first.versionId)}, which Object Lock keeps and which is verified`
        : `${key} rewritten: version ${short(later.versionId)} was written over version ${short(first.versionId)}; ` +
          'an anchor or digest is written once, and the first version is the one verified',
    });
  }
  return { pin: first.versionId, findings };
}

async function sealFindings(ctx: EvidenceContext, key: string, versions: ObjectVersion[]): Promise<{ pin?: string; findings: Finding[] }> {
  const batch = batchOfSealKey(key);
  const real = versions.filter((v) => !v.deleteMarker);
  if (!batch || real.length === 0) return { findings: [] };
  const label = `${batch.tenant}/${batch.taskId}`;
  const recorded = new Set(eventsOfType(await ctx.audit.events(batchChain(batch)), SEALED_EVENT).flatMap((e) => e.data.sealHash ?? []));
  const findings: Finding[] = [];
  let pin: string | undefined;
  let previous: ObjectVersion | undefined;
  for (const version of versions) {
    if (version.deleteMarker) {
      const covered = previous ? `covers version ${short(previous.versionId)}` : 'covers no version';
      findings.push({
        kind: 'removed',
        batch: label,
        object: key,
        detail: `${key} deleted: delete marker ${short(version.versionId)} ${covered}, which Object Lock keeps and which is verified`,
      });
      continue;
    }
    const { seal } = parseSeal(await ctx.evidence.getVersion(key, version.versionId));
    if (seal && recorded.has(seal.sealHash)) pin = version.versionId;
    else if (previous) {
      findings.push({
        kind: 'altered',
        batch: label,
        object: key,
        detail:
          `${key} rewritten: version ${short(version.versionId)} was written over version ${short(previous.versionId)} ` +
          `and no sealed event of chain ${batchChain(batch)} records it`,
      });
    }
    previous = version;
  }
  // A first version the chain does not record is reported by the ordinary seal checks, which read it.
  return { pin: pin ?? real[0]!.versionId, findings };
}

/** Lists the versions in scope, pins what the lock preserves, and names every cover. */
export async function preservedVersions(
  ctx: EvidenceContext,
  scope: { tenant?: string; batch?: BatchRef } = {},
): Promise<PreservedVersions> {
  const result: PreservedVersions = { pins: new Map(), findings: [], versions: 0 };
  const label = scope.batch ? `${scope.batch.tenant}/${scope.batch.taskId}` : undefined;
  const [anchorPrefix, evidencePrefix] = prefixesOf(scope) as [string, string];
  // Evidence first: in a batch's scope, its item folders say which anchor chains are its own.
  const digestPrefix = `${DIGEST_PREFIX}${scope.batch?.tenant ?? scope.tenant ?? ''}${scope.batch || scope.tenant ? '/' : ''}`;
  const listed = [
    ...(await ctx.evidence.versions(evidencePrefix)),
    ...(await ctx.evidence.versions(anchorPrefix)),
    ...(await ctx.evidence.versions(digestPrefix)),
  ];
  const items = new Set(listed.map(([key]) => key.split('/')[3]).filter((k): k is string => k !== undefined));
  const inScope = (anchor: string) => {
    if (!scope.batch) return true;
    const [, , day, chain] = anchor.split('/');
    return day === 'digests' || chain === batchChain(scope.batch) || (chain?.endsWith(':seal') === true && items.has(chain.slice(0, -5)));
  };
  for (const [key, versions] of listed) {
    result.versions += versions.length;
    let outcome: { pin?: string; findings: Finding[] } | undefined;
    if (key.startsWith(ANCHOR_PREFIX)) {
      const tenant = key.slice(ANCHOR_PREFIX.length).split('/')[0];
      outcome = writeOnceFindings(key, versions, label ?? (tenant ? `${tenant}/(anchors)` : undefined));
      if (!inScope(key)) outcome = { ...(outcome.pin ? { pin: outcome.pin } : {}), findings: [] };
    } else if (key.startsWith(DIGEST_PREFIX)) {
      const tenant = key.slice(DIGEST_PREFIX.length).split('/')[0];
      outcome = writeOnceFindings(key, versions, label ?? (tenant ? `${tenant}/(digests)` : undefined));
    } else if (isSealKey(key) && (versions.length > 1 || versions[0]?.deleteMarker)) {
      outcome = await sealFindings(ctx, key, versions);
    }
    if (!outcome) continue;
    // Only a key with more than one version needs a pin: a single version is what a plain read sees.
    if (outcome.pin && versions.length > 1) result.pins.set(key, outcome.pin);
    result.findings.push(...outcome.findings);
  }
  return result;
}

/**
 * `audit verify`: the ordinary verification (verify.ts) on the view Object Lock preserves, plus a
 * finding for every later version or delete marker that covers an anchor, digest or seal.
 */
export async function verifyPreserved(ctx: EvidenceContext, scope: VerifyScope): Promise<VerifyResult> {
  let tenant: string | undefined;
  let batch: BatchRef | undefined;
  if (scope.kind === 'batch') batch = scope.batch;
  else if (scope.kind === 'all') tenant = scope.tenant;
  else tenant = (await ctx.claims.get(scope.key))?.tenant;
  const preserved = await preservedVersions(ctx, { ...(tenant ? { tenant } : {}), ...(batch ? { batch } : {}) });
  const view: EvidenceContext = preserved.pins.size > 0 ? { ...ctx, evidence: ctx.evidence.pinned(preserved.pins) } : ctx;
  const result =
    scope.kind === 'batch'
      ? await verifyBatch(view, scope.batch)
      : scope.kind === 'key'
        ? await verifyKey(view, scope.key)
        : await verifyAll(view, scope.tenant);
  return { ...result, findings: [...preserved.findings, ...result.findings] };
}
