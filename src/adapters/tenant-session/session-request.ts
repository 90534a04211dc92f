import { z } from 'zod';
import { SESSION_TAGS, type TenantScope } from '../../contracts/tenant-policy.js';

/**
 * The AssumeRole request a tenant session is made with, checked against the
 * STS rules it must satisfy before it is sent. The session is scoped by its
 * tags alone: the tenant-access role's policy reads `${aws:PrincipalTag/…}`.
 * No inline session policy is passed: the document with a tenant's ARNs
 * filled in is about 2,300 characters for the longest ids (1,850 for short
 * ones), over the 2,048 STS accepts for a session policy, while two tags fit
 * whatever the ids.
 */

/** STS limits on AssumeRole's session name and session tags (IAM User Guide, "Passing session tags in AWS STS"). */
export const STS_LIMITS = {
  roleSessionNameMax: 64,
  roleSessionNamePattern: /^[\w+=,.@-]{2,64}$/,
  sessionTagsMax: 50,
  tagKeyMax: 128,
  tagValueMax: 256,
  /** Characters IAM allows in tag keys and values. */
  tagPattern: /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u,
  /** A session policy passed inline, as plaintext JSON. */
  sessionPolicyMax: 2048,
} as const;

/** Tenant and identity ids as the config schema allows them; both become tag values and part of the session name. */
const SessionId = z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'must be lower-kebab-case (a-z, 0-9, -), 2 to 41 characters');
const Scope = z.object({ tenant: SessionId, identity: SessionId.optional() });

export interface TenantSessionRequest {
  RoleArn: string;
  RoleSessionName: string;
  Tags: Array<{ Key: string; Value: string }>;
  DurationSeconds: number;
}

/**
 * The session name shows in CloudTrail next to the tags; it is cut to STS's
 * 64 characters (the tags, not the name, scope the session).
 */
function sessionName(scope: TenantScope): string {
  return `t-${scope.tenant}-${scope.identity ?? 'none'}`.slice(0, STS_LIMITS.roleSessionNameMax);
}

/** The request for `scope`; throws naming the field when an id could not be a tag value. */
export function tenantSessionRequest(roleArn: string, scope: TenantScope): TenantSessionRequest {
  const parsed = Scope.safeParse(scope);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`tenant session: field "${issue?.path.join('.') ?? 'scope'}" ${issue?.message ?? 'is invalid'}`);
  }
  const tags: TenantSessionRequest['Tags'] = [{ Key: SESSION_TAGS.tenant, Value: parsed.data.tenant }];
  if (parsed.data.identity) tags.push({ Key: SESSION_TAGS.identity, Value: parsed.data.identity });
  return { RoleArn: roleArn, RoleSessionName: sessionName(parsed.data), Tags: tags, DurationSeconds: 900 };
}
