import {
  contextValues,
  describeStatement,
  principalMatch,
  statementApplies,
  statementsOf,
  type NamedPolicy,
  type RequestContext,
} from './policy.js';

/**
 * IAM's policy evaluation logic for a request within one account ("Policy
 * evaluation logic", IAM User Guide), for the policy types the local stack
 * has: identity-based policies, session policies, and one resource-based
 * policy (a bucket policy, or a role's trust policy for sts:AssumeRole).
 *
 * 1. An explicit Deny in any of them wins.
 * 2. Otherwise an Allow in the identity policies, or a resource policy that
 *    names the caller, allows. A resource policy that names only the account
 *    delegates to the identity policies and allows nothing by itself.
 * 3. Session policies intersect: with any present, what the identity policies
 *    (or a resource policy naming the role rather than the session) allow must
 *    also be allowed by a session policy. A resource policy naming the session
 *    ARN itself is not limited by them.
 * 4. A role's trust policy must allow sts:AssumeRole (resourcePolicyRequired):
 *    when it names the account, the caller's identity policy must allow too.
 *
 * Not evaluated: SCPs and RCPs, permission boundaries, KMS key policies and
 * grants, cross-account requests, VPC endpoint policies (docs/local-stack.md).
 */

export interface Authorization {
  request: RequestContext;
  identityPolicies: readonly NamedPolicy[];
  sessionPolicies?: readonly NamedPolicy[];
  resourcePolicy?: NamedPolicy;
  /** The resource policy must allow (a role's trust policy); otherwise it can only add to the identity policies. */
  resourcePolicyRequired?: boolean;
}

export type Decision =
  | { allowed: true; decision: 'Allow'; reason: string }
  | { allowed: false; decision: 'ExplicitDeny' | 'ImplicitDeny'; reason: string };

export function evaluate(input: Authorization): Decision {
  const { request } = input;
  const context = contextValues(request.keys);
  const sessions = input.sessionPolicies ?? [];

  const applying = (policy: NamedPolicy, effect: 'Allow' | 'Deny', resource: boolean) =>
    statementsOf(policy.document)
      .map((statement, index) => ({ statement, index, named: resource ? principalMatch(statement, request.principal) : 'specific' }))
      .filter(
        ({ statement, named }) => statement.Effect === effect && named !== undefined && statementApplies(statement, request, context),
      );

  const all: Array<[NamedPolicy, boolean]> = [
    ...input.identityPolicies.map((p) => [p, false] as [NamedPolicy, boolean]),
    ...sessions.map((p) => [p, false] as [NamedPolicy, boolean]),
    ...(input.resourcePolicy ? [[input.resourcePolicy, true] as [NamedPolicy, boolean]] : []),
  ];
  for (const [policy, resource] of all) {
    const deny = applying(policy, 'Deny', resource)[0];
    if (deny)
      return {
        allowed: false,
        decision: 'ExplicitDeny',
        reason: `explicitly denied by ${describeStatement(policy.name, deny.statement, deny.index)}`,
      };
  }

  const identityAllow = input.identityPolicies.flatMap((p) => applying(p, 'Allow', false).map((a) => ({ policy: p, ...a })))[0];
  const sessionAllows = sessions.length === 0 || sessions.some((p) => applying(p, 'Allow', false).length > 0);
  const resourceAllows = input.resourcePolicy ? applying(input.resourcePolicy, 'Allow', true) : [];
  const namesSession = resourceAllows.some(
    ({ statement }) => request.principal.sessionArn !== undefined && mentions(statement, request.principal.sessionArn),
  );
  const namesCaller = resourceAllows.some(({ named }) => named === 'specific');
  const delegates = resourceAllows.some(({ named }) => named === 'account');
  const resourceName = input.resourcePolicy?.name ?? 'the resource policy';

  if (input.resourcePolicyRequired) {
    if (!namesCaller && !delegates) return implicit(`${resourceName} does not allow it`);
    if (!namesCaller && !identityAllow) return implicit(`no identity-based policy allows it (${resourceName} trusts the account only)`);
    if (!namesSession && !sessionAllows) return implicit('the session policy does not allow it');
    return { allowed: true, decision: 'Allow', reason: `allowed by ${resourceName}` };
  }
  if (namesSession) return { allowed: true, decision: 'Allow', reason: `allowed by ${resourceName} (names the session)` };
  if ((identityAllow || namesCaller) && !sessionAllows) return implicit('the session policy does not allow it');
  if (identityAllow) {
    return {
      allowed: true,
      decision: 'Allow',
      reason: `allowed by ${describeStatement(identityAllow.policy.name, identityAllow.statement, identityAllow.index)}`,
    };
  }
  if (namesCaller) return { allowed: true, decision: 'Allow', reason: `allowed by ${resourceName}` };
  return implicit(
    input.resourcePolicy
      ? `no identity-based policy allows it, and ${resourceName} does not grant it`
      : 'no identity-based policy allows it',
  );
}

function implicit(reason: string): Decision {
  return { allowed: false, decision: 'ImplicitDeny', reason };
}

function mentions(statement: { Principal?: unknown }, arn: string): boolean {
  return JSON.stringify(statement.Principal ?? null).includes(JSON.stringify(arn));
}
