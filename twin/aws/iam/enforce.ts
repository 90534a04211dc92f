import { AsyncLocalStorage } from 'node:async_hooks';
import { commandRule, SERVICE_OF_CLIENT, type ArnContext, type Need } from './commands.js';
import { evaluate, type Decision } from './evaluate.js';
import type { IamCatalog, Role } from './policies.js';
import type { NamedPolicy, Principal, RequestContext } from './policy.js';

/**
 * IAM enforced on every call the embedded stack's AWS SDK clients make. Each
 * Lambda invocation runs inside a principal context naming its function
 * (runAsFunction); a tenant session is a role session assumed from there
 * (runAsSession), checked against the function's own policy and the
 * tenant-access role's trust policy. A middleware on each client evaluates
 * every command against the current principal's identity policies, its
 * session policies and tags, and the resource's policy (the bucket policy),
 * and throws what AWS answers a denied call: S3 `AccessDenied` (403), the
 * other services `AccessDeniedException` (400), with AWS's message naming
 * the principal, the action and the resource, and the reason.
 *
 * A call with no principal context is the operator's: the CLI's own commands,
 * the embedded runtime starting and polling executions on the operator's
 * behalf, and test setup. They act with the operator's (administrator's)
 * credentials on AWS too, and are not evaluated here (docs/local-stack.md).
 */

export interface CallerPrincipal {
  role: Role;
  sessionName: string;
  tags: Readonly<Record<string, string>>;
  sessionPolicies: readonly NamedPolicy[];
  /** Who the caller is, for messages: `function claim`, `tenant session acme (assumed by function claim)`. */
  label: string;
}

const current = new AsyncLocalStorage<CallerPrincipal>();

/** The principal the calling code runs as; undefined for the operator. */
export function currentPrincipal(): CallerPrincipal | undefined {
  return current.getStore();
}

/** An AssumeRole request as STS takes it (src/adapters/tenant-session/session-request.ts builds one). */
export interface AssumeRoleRequest {
  RoleArn: string;
  RoleSessionName: string;
  Tags?: ReadonlyArray<{ Key: string; Value: string }>;
  /** An inline session policy (JSON), which intersects with the role's policies. */
  Policy?: string;
}

/** What AWS answers a call IAM denies. */
export class LocalAccessDenied extends Error {
  readonly $fault = 'client';
  readonly $metadata: { httpStatusCode: number };
  constructor(
    readonly code: 'AccessDenied' | 'AccessDeniedException',
    message: string,
    readonly decision: Decision,
  ) {
    super(message);
    this.name = code;
    this.$metadata = { httpStatusCode: code === 'AccessDenied' ? 403 : 400 };
  }
}

export interface LocalIamHooks {
  partitionKeyOf(table: string, index?: string): string | undefined;
  stateMachineOfToken(token: string): string | undefined;
}

type MiddlewareClient = { middlewareStack?: { add(middleware: unknown, options: Record<string, unknown>): void } };

/** Condition keys whose value changes from one call to the next: a policy naming one is evaluated on every call. */
const TIME_KEYS = /aws:(CurrentTime|EpochTime)/i;
/** Decisions remembered per principal before the memo starts over (a stack makes a few hundred distinct requests). */
const MEMO_LIMIT = 5000;

export class LocalIam {
  private readonly arns: ArnContext;
  /**
   * IAM's answer is a function of the policies and the request. The catalog is fixed for a stack (a test edits it
   * before the stack starts), so a request a principal made before is answered as it was; each principal's first
   * call of a kind is evaluated in full. Without it, evaluating every statement on every SDK call cost more Node
   * CPU per guarded item than some of the steps themselves.
   */
  private readonly decisions = new WeakMap<object, Map<string, Decision>>();
  /** A function's principal, the same object for each invocation (the memos above and below hang on it). */
  private readonly functionPrincipals = new Map<string, CallerPrincipal>();
  /**
   * The sessions each caller assumed, as the SDK's credential provider keeps a warm function's assumed-role
   * credentials: STS checks sts:AssumeRole when the session is made, not on each call made with it. A refused
   * request is never kept, so it is refused again on the next try.
   */
  private readonly assumed = new WeakMap<object, Map<string, CallerPrincipal>>();
  private readonly operator = {};
  /** Whether any deployed policy names a time key (then nothing is remembered: the answer may change with the clock). */
  private readonly catalogReadsTime: boolean;

  constructor(
    readonly catalog: IamCatalog,
    hooks: LocalIamHooks,
  ) {
    const { partition, region, account } = catalog.names;
    this.arns = {
      partition,
      region,
      account,
      partitionKeyOf: hooks.partitionKeyOf,
      stateMachineOfToken: hooks.stateMachineOfToken,
      // A stand-in for the six characters AWS appends, so a policy's `-??????` matches as on AWS.
      secretArn: (id) => (id.startsWith('arn:') ? id : `arn:${partition}:secretsmanager:${region}:${account}:secret:${id}-LOCAL0`),
    };
    const documents = [...catalog.roles.values()].flatMap((role) => [role.trust, ...role.policies]);
    this.catalogReadsTime = TIME_KEYS.test(JSON.stringify(documents.map((p) => p.document)));
  }

  /** The tenant-access role's local ARN: the functions that act for a tenant assume it. */
  get tenantRoleArn(): string {
    return this.catalog.tenantRole.arn;
  }

  /** Runs one invocation of the Lambda function `name` (`claim`, `approval-http`) as its deployed role. */
  runAsFunction<T>(name: string, body: () => T): T {
    let principal = this.functionPrincipals.get(name);
    if (!principal) {
      const role = this.catalog.functionRole(name);
      principal = { role, sessionName: `${this.catalog.names.prefix}-${name}`, tags: {}, sessionPolicies: [], label: `function ${name}` };
      this.functionPrincipals.set(name, principal);
    }
    return current.run(principal, body);
  }

  /**
   * The session STS would hand the current principal for `request`: sts:AssumeRole (and sts:TagSession
   * when it carries tags) must be allowed by the caller's policies and by the role's trust policy, with
   * the request's tags as aws:RequestTag/… and aws:TagKeys. Throws AccessDenied as STS does.
   */
  assumeRole(request: AssumeRoleRequest): CallerPrincipal {
    const caller = currentPrincipal();
    const id = JSON.stringify([request.RoleArn, request.RoleSessionName, request.Tags ?? [], request.Policy ?? '']);
    // assumeAnew throws on a refusal, so only a session STS would have handed out is kept.
    return remembered(this.assumed, caller ?? this.operator, id, () => this.assumeAnew(caller, request));
  }

  private assumeAnew(caller: CallerPrincipal | undefined, request: AssumeRoleRequest): CallerPrincipal {
    const role = [...this.catalog.roles.values()].find((r) => r.arn === request.RoleArn);
    if (!role) throw new LocalAccessDenied('AccessDenied', `the role ${request.RoleArn} does not exist in the deployed IAM`, implicit());
    const tags = Object.fromEntries((request.Tags ?? []).map((t) => [t.Key, t.Value]));
    const keys: RequestContext['keys'] = { 'aws:TagKeys': Object.keys(tags) };
    for (const [key, value] of Object.entries(tags)) keys[`aws:RequestTag/${key}`] = value;
    const actions = ['sts:AssumeRole', ...(Object.keys(tags).length > 0 ? ['sts:TagSession'] : [])];
    if (caller) {
      for (const action of actions) {
        const decision = evaluate({
          request: { principal: this.principalOf(caller), action, resource: role.arn, keys: { ...this.callerKeys(caller), ...keys } },
          identityPolicies: caller.role.policies,
          sessionPolicies: caller.sessionPolicies,
          resourcePolicy: role.trust,
          resourcePolicyRequired: true,
        });
        if (!decision.allowed) throw this.denied('sts', caller, action, role.arn, decision);
      }
    }
    const sessionPolicies = request.Policy
      ? [{ name: `session policy of ${request.RoleSessionName}`, document: JSON.parse(request.Policy) }]
      : [];
    return {
      role,
      sessionName: request.RoleSessionName,
      tags,
      sessionPolicies,
      label: `session ${request.RoleSessionName} of ${role.name}${caller ? ` (assumed by ${caller.label})` : ''}`,
    };
  }

  /**
   * Runs `body` as the operator, outside any function's context: for a test that plays another party
   * from inside an overridden step (another runner taking a claim over). Product code never calls it.
   */
  asOperator<T>(body: () => T): T {
    return current.exit(body);
  }

  /** Runs `body` as a session assumed with `request` (see assumeRole). */
  runAsSession<T>(request: AssumeRoleRequest, body: () => T): T {
    return current.run(this.assumeRole(request), body);
  }

  /** Checks one action outside any SDK call (a local stand-in for a call that does not happen, e.g. inline credentials). */
  authorize(action: string, resource: string): void {
    const caller = currentPrincipal();
    if (!caller) return;
    this.check(action.split(':')[0]!, caller, { action, resourceType: '', resource, keys: {} });
  }

  /** Evaluates one SDK command for the current principal; throws LocalAccessDenied when IAM would deny it. */
  authorizeCommand(service: string, command: string, input: Record<string, unknown>): void {
    const caller = currentPrincipal();
    if (!caller) return;
    const rule = commandRule(service, command);
    if (!rule) {
      const decision: Decision = { allowed: false, decision: 'ImplicitDeny', reason: 'the local IAM does not know which action it needs' };
      throw new LocalAccessDenied(
        service === 's3' ? 'AccessDenied' : 'AccessDeniedException',
        `${caller.label}: ${service} ${command.replace(/Command$/, '')} is not in the local IAM command table ` +
          '(twin/aws/iam/commands.ts); add the action(s) it needs',
        decision,
      );
    }
    for (const need of rule.describe(input, this.arns)) this.check(service, caller, need);
  }

  /** Adds the evaluating middleware to an SDK client (DynamoDB, S3, SES v2, Step Functions, Secrets Manager). */
  attach(client: object): void {
    const stack = (client as MiddlewareClient).middlewareStack;
    if (!stack) throw new Error('the local IAM attaches to AWS SDK clients only (no middlewareStack)');
    stack.add(
      (next: (args: { input: Record<string, unknown> }) => Promise<unknown>, context: { clientName?: string; commandName?: string }) =>
        async (args: { input: Record<string, unknown> }) => {
          const service = SERVICE_OF_CLIENT[context.clientName ?? ''];
          if (!service) throw new Error(`the local IAM has no service for the SDK client ${context.clientName ?? '(unnamed)'}`);
          this.authorizeCommand(service, context.commandName ?? '', args.input);
          return next(args);
        },
      // Before serializing, after a document client turned its input into the service's (initialize step).
      { step: 'initialize', priority: 'low', name: 'localIamEnforcement', override: true },
    );
  }

  private check(service: string, caller: CallerPrincipal, need: Need): void {
    const decision = this.decide(service, caller, need);
    if (!decision.allowed) throw this.denied(service, caller, need.action, need.resource, decision);
  }

  private decide(service: string, caller: CallerPrincipal, need: Need): Decision {
    const bucket = service === 's3' ? /^arn:[^:]+:s3:::([^/]+)/.exec(need.resource)?.[1] : undefined;
    const resourcePolicy = bucket ? this.catalog.bucketPolicy(bucket) : undefined;
    const evaluateAnew = () =>
      evaluate({
        request: {
          principal: this.principalOf(caller),
          action: need.action,
          resource: need.resource,
          keys: { ...this.callerKeys(caller), ...need.keys },
        },
        identityPolicies: caller.role.policies,
        sessionPolicies: caller.sessionPolicies,
        ...(resourcePolicy ? { resourcePolicy } : {}),
      });
    if (
      this.catalogReadsTime ||
      this.readsTime(caller.sessionPolicies) ||
      (resourcePolicy !== undefined && this.readsTime(resourcePolicy))
    ) {
      return evaluateAnew();
    }
    return remembered(this.decisions, caller, JSON.stringify([need.action, need.resource, need.keys]), evaluateAnew);
  }

  private readonly timeBound = new WeakMap<object, boolean>();

  /** Whether a policy (a bucket's) or a list of them (a session's) names a time key; read once per object. */
  private readsTime(policies: NamedPolicy | readonly NamedPolicy[]): boolean {
    const list = Array.isArray(policies) ? policies : [policies as NamedPolicy];
    if (list.length === 0) return false;
    let reads = this.timeBound.get(policies);
    if (reads === undefined) {
      reads = TIME_KEYS.test(JSON.stringify(list.map((p) => p.document)));
      this.timeBound.set(policies, reads);
    }
    return reads;
  }

  private principalOf(caller: CallerPrincipal): Principal {
    const { account } = this.catalog.names;
    return { arn: caller.role.arn, account, sessionArn: this.sessionArn(caller) };
  }

  private sessionArn(caller: CallerPrincipal): string {
    const { partition, account } = this.catalog.names;
    return `arn:${partition}:sts::${account}:assumed-role/${caller.role.name}/${caller.sessionName}`;
  }

  /** The global condition keys of the request: who calls, with which tags, over TLS (the SDK talks HTTPS to AWS). */
  private callerKeys(caller: CallerPrincipal): RequestContext['keys'] {
    const now = new Date();
    const keys: RequestContext['keys'] = {
      'aws:PrincipalArn': caller.role.arn,
      'aws:PrincipalAccount': this.catalog.names.account,
      'aws:PrincipalType': 'AssumedRole',
      'aws:userid': `LOCAL:${caller.sessionName}`,
      'aws:RequestedRegion': this.catalog.names.region,
      'aws:SecureTransport': 'true',
      's3:TlsVersion': '1.3',
      'aws:CurrentTime': now.toISOString(),
      'aws:EpochTime': String(Math.floor(now.getTime() / 1000)),
    };
    for (const [key, value] of Object.entries(caller.tags)) keys[`aws:PrincipalTag/${key}`] = value;
    return keys;
  }

  private denied(service: string, caller: CallerPrincipal, action: string, resource: string, decision: Decision): LocalAccessDenied {
    const why =
      decision.decision === 'ExplicitDeny'
        ? `with an explicit deny (${decision.reason})`
        : `because no policy allows the ${action} action (${decision.reason})`;
    // S3 and STS answer AccessDenied (403); DynamoDB, Step Functions, SES and Secrets Manager AccessDeniedException (400).
    return new LocalAccessDenied(
      service === 's3' || service === 'sts' ? 'AccessDenied' : 'AccessDeniedException',
      `User: ${this.sessionArn(caller)} (${caller.label}) is not authorized to perform: ${action} on resource: ${resource} ${why}`,
      decision,
    );
  }
}

/** The value `owner` keeps under `id`, made and kept when it has none; an owner's full memo starts over. */
function remembered<V>(memos: WeakMap<object, Map<string, V>>, owner: object, id: string, make: () => V): V {
  let memo = memos.get(owner);
  if (!memo) {
    memo = new Map<string, V>();
    memos.set(owner, memo);
  }
  let value = memo.get(id);
  if (value === undefined) {
    value = make();
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(id, value);
  }
  return value;
}

function implicit(): Decision {
  return { allowed: false, decision: 'ImplicitDeny', reason: 'no such role' };
}
