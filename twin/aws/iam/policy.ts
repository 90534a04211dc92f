import { conditionHolds } from './conditions.js';
import { matchArn, matchWildcard } from './wildcards.js';
import { substituteVariables } from './variables.js';

/**
 * IAM policy documents as they are written (one value or a list for Action,
 * Resource and Principal), and the request they are evaluated against. The
 * request's condition keys are matched case-insensitively, as IAM does.
 */

export type OneOrMany<T> = T | T[];

export interface Statement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action?: OneOrMany<string>;
  NotAction?: OneOrMany<string>;
  Resource?: OneOrMany<string>;
  NotResource?: OneOrMany<string>;
  Principal?: '*' | Record<string, OneOrMany<string>>;
  NotPrincipal?: Record<string, OneOrMany<string>>;
  Condition?: Record<string, Record<string, unknown>>;
}

export interface PolicyDocument {
  Version?: string;
  Id?: string;
  Statement: OneOrMany<Statement>;
}

/** A named document, so a decision can say which policy and statement decided. */
export interface NamedPolicy {
  name: string;
  document: PolicyDocument;
}

/** Who calls: an IAM role or a session of one, as the request context's aws:Principal* keys describe it. */
export interface Principal {
  /** The ARN a resource policy names: the role ARN for a role's sessions. */
  arn: string;
  account: string;
  /** The assumed-role session ARN (arn:aws:sts::<account>:assumed-role/<role>/<session>), when there is one. */
  sessionArn?: string;
  /** A service principal (`states.amazonaws.com`), for service-linked calls. */
  service?: string;
}

export interface RequestContext {
  principal: Principal;
  action: string;
  resource: string;
  /** Condition keys (any case) and their values; a multivalued key has several. */
  keys: Record<string, string | readonly string[] | undefined>;
}

export function asList<T>(value: OneOrMany<T> | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

export function statementsOf(document: PolicyDocument): Statement[] {
  return asList(document.Statement);
}

/** The request's keys by lower-cased name, values always a list. */
export type ContextValues = ReadonlyMap<string, readonly string[]>;

export function contextValues(keys: RequestContext['keys']): ContextValues {
  const values = new Map<string, readonly string[]>();
  for (const [key, value] of Object.entries(keys)) {
    if (value === undefined) continue;
    values.set(key.toLowerCase(), typeof value === 'string' ? [value] : value);
  }
  return values;
}

function actionMatches(statement: Statement, action: string): boolean {
  if (statement.Action !== undefined) return asList(statement.Action).some((pattern) => matchWildcard(pattern, action, true));
  if (statement.NotAction !== undefined) return !asList(statement.NotAction).some((pattern) => matchWildcard(pattern, action, true));
  return false;
}

/**
 * A Resource entry with policy variables filled in from the request; an entry
 * whose variable the request lacks (and that has no default) matches nothing.
 */
function resourceMatches(statement: Statement, resource: string, context: ContextValues): boolean {
  const matchesAny = (patterns: string[]) =>
    patterns.some((pattern) => {
      const filled = substituteVariables(pattern, context);
      return filled !== undefined && matchArn(filled, resource);
    });
  if (statement.Resource !== undefined) return matchesAny(asList(statement.Resource));
  if (statement.NotResource !== undefined) return !matchesAny(asList(statement.NotResource));
  // A resource policy's statement may leave Resource out only in a role's trust policy: it applies to the role itself.
  return true;
}

/** What a principal entry names: everyone, an account (root or bare id), a role, a session, or a service. */
function principalNamed(entry: string, kind: string, principal: Principal): 'specific' | 'account' | undefined {
  if (kind === 'Service') return principal.service === entry ? 'specific' : undefined;
  if (kind !== 'AWS') return undefined;
  if (entry === '*') return 'specific';
  if (entry === principal.account || entry === `arn:aws:iam::${principal.account}:root`) return 'account';
  if (entry === principal.arn || (principal.sessionArn !== undefined && entry === principal.sessionArn)) return 'specific';
  return undefined;
}

/**
 * How a resource policy's statement names the caller: 'specific' (the caller
 * itself, or everyone), 'account' (the account, which delegates to the
 * caller's identity policies), or undefined (not at all).
 */
export function principalMatch(statement: Statement, principal: Principal): 'specific' | 'account' | undefined {
  const entries = (block: '*' | Record<string, OneOrMany<string>>) =>
    block === '*' ? [['AWS', '*'] as const] : Object.entries(block).flatMap(([kind, v]) => asList(v).map((e) => [kind, e] as const));
  if (statement.Principal !== undefined) {
    const found = entries(statement.Principal).map(([kind, entry]) => principalNamed(entry, kind, principal));
    return found.includes('specific') ? 'specific' : found.includes('account') ? 'account' : undefined;
  }
  if (statement.NotPrincipal !== undefined) {
    const excluded = entries(statement.NotPrincipal).some(([kind, entry]) => principalNamed(entry, kind, principal) !== undefined);
    return excluded ? undefined : 'specific';
  }
  return undefined;
}

/** Every condition block holds: operators AND keys AND; within a key, values OR (NOR for negated operators). */
function conditionsHold(statement: Statement, context: ContextValues): boolean {
  for (const [operator, keys] of Object.entries(statement.Condition ?? {})) {
    for (const [key, expected] of Object.entries(keys)) {
      const values = asList(expected as OneOrMany<unknown>).map((v) => String(v));
      if (!conditionHolds(operator, values, context.get(key.toLowerCase()), context)) return false;
    }
  }
  return true;
}

/** Whether the statement applies to the request, ignoring Principal (identity policies have none). */
export function statementApplies(statement: Statement, request: RequestContext, context: ContextValues): boolean {
  return (
    actionMatches(statement, request.action) && resourceMatches(statement, request.resource, context) && conditionsHold(statement, context)
  );
}

export function describeStatement(policy: string, statement: Statement, index: number): string {
  return `${policy} statement ${statement.Sid ?? `#${index + 1}`}`;
}
