import type { PolicyDocument, PolicyStatement } from './policy.js';

/**
 * Evaluates an IAM policy document the way IAM does for the parts the tenant
 * session policy uses: an explicit Deny wins, otherwise some Allow must match
 * the action, the resource and every condition. Wildcards are `*` and `?` in
 * actions, resources and String*Like values. One difference, on purpose: a
 * condition key the request does not carry fails the condition (IAM would let
 * `ForAllValues` pass on an empty set), so a call the guard cannot read is
 * refused rather than waved through.
 */

export interface AuthorizationRequest {
  action: string;
  resource: string;
  /** Condition keys and their values, e.g. `dynamodb:LeadingKeys`, `s3:prefix`. */
  context?: Record<string, string[]>;
}

/** What S3, DynamoDB and Secrets Manager answer a call the caller's policies do not allow. */
export class AccessDeniedError extends Error {
  override readonly name = 'AccessDenied';
  readonly $metadata = { httpStatusCode: 403 };
  constructor(
    readonly request: AuthorizationRequest,
    reason: string,
  ) {
    super(`AccessDenied: ${request.action} on ${request.resource} is not allowed by the tenant session policy (${reason})`);
  }
}

function wildcard(pattern: string, caseInsensitive = false): RegExp {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, caseInsensitive ? 'is' : 's');
}

function matchesAny(patterns: string[], value: string, caseInsensitive = false): boolean {
  return patterns.some((pattern) => wildcard(pattern, caseInsensitive).test(value));
}

function conditionHolds(operator: string, key: string, expected: string | string[], context: Record<string, string[]>): boolean {
  const values = context[key];
  if (!values || values.length === 0) return false;
  const allowed = Array.isArray(expected) ? expected : [expected];
  const [qualifier, base] = operator.includes(':') ? (operator.split(':') as [string, string]) : [undefined, operator];
  const test = (value: string): boolean => {
    if (base === 'StringLike') return matchesAny(allowed, value);
    if (base === 'StringEquals') return allowed.includes(value);
    if (base === 'StringNotLike') return !matchesAny(allowed, value);
    throw new Error(`the local policy guard does not evaluate the ${operator} condition operator`);
  };
  if (qualifier === 'ForAnyValue') return values.some(test);
  // ForAllValues, and a single-valued key: every value the request carries must match.
  return values.every(test);
}

function statementMatches(statement: PolicyStatement, request: AuthorizationRequest): boolean {
  if (!matchesAny(statement.Action, request.action, true)) return false;
  if (!matchesAny(statement.Resource, request.resource)) return false;
  const context = request.context ?? {};
  for (const [operator, keys] of Object.entries(statement.Condition ?? {})) {
    for (const [key, expected] of Object.entries(keys)) {
      if (!conditionHolds(operator, key, expected, context)) return false;
    }
  }
  return true;
}

export class PolicyGuard {
  constructor(readonly policy: PolicyDocument) {}

  /** Throws AccessDeniedError unless the policy allows every request (a call can need several, e.g. one per table). */
  authorize(requests: readonly AuthorizationRequest[]): void {
    for (const request of requests) {
      const denied = this.policy.Statement.find((s) => s.Effect === 'Deny' && statementMatches(s, request));
      if (denied) throw new AccessDeniedError(request, `explicitly denied by ${denied.Sid}`);
      if (!this.policy.Statement.some((s) => s.Effect === 'Allow' && statementMatches(s, request))) {
        throw new AccessDeniedError(request, 'no statement allows it');
      }
    }
  }
}
