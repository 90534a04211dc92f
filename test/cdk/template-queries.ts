import type { Template } from 'aws-cdk-lib/assertions';

/** Small readers over a synthesized template, so the tests talk about functions and roles, not logical ids. */

export interface CfnResource {
  Type: string;
  Properties: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string[];
}

export interface Statement {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource?: unknown;
  Condition?: Record<string, unknown>;
  Principal?: unknown;
  Sid?: string;
}

export function resources(template: Template, type: string): Array<[string, CfnResource]> {
  return Object.entries(template.findResources(type)) as Array<[string, CfnResource]>;
}

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

export function resourcesOf(statement: Statement): unknown[] {
  if (statement.Resource === undefined) return [];
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

/** The Lambda function whose FunctionName is `<prefix>-<name>`. */
export function functionNamed(template: Template, physicalName: string): [string, CfnResource] {
  const found = resources(template, 'AWS::Lambda::Function').find(([, r]) => r.Properties['FunctionName'] === physicalName);
  if (!found) throw new Error(`no function named ${physicalName}`);
  return found;
}

export function roleLogicalId(fn: CfnResource): string {
  const role = fn.Properties['Role'] as { 'Fn::GetAtt': [string, string] };
  return role['Fn::GetAtt'][0];
}

/** Every statement of every AWS::IAM::Policy attached to the role. */
export function statementsOfRole(template: Template, role: string): Statement[] {
  const statements: Statement[] = [];
  for (const [, policy] of resources(template, 'AWS::IAM::Policy')) {
    const roles = (policy.Properties['Roles'] ?? []) as Array<{ Ref: string }>;
    if (roles.some((r) => r.Ref === role)) statements.push(...(policy.Properties['PolicyDocument'].Statement as Statement[]));
  }
  const inline = template.findResources('AWS::IAM::Role')[role]?.['Properties']?.['Policies'] ?? [];
  for (const policy of inline as Array<{ PolicyDocument: { Statement: Statement[] } }>) statements.push(...policy.PolicyDocument.Statement);
  return statements;
}

export function actionsOfRole(template: Template, role: string): string[] {
  return [...new Set(statementsOfRole(template, role).flatMap(actionsOf))].sort();
}

/** A stable text form of an intrinsic, e.g. `GetAtt:TablesClaims123.Arn` or `Ref:Secret123`. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const v = value as Record<string, any>;
    if ('Ref' in v) return `Ref:${v['Ref']}`;
    if ('Fn::GetAtt' in v) return `GetAtt:${v['Fn::GetAtt'].join('.')}`;
    if ('Fn::Join' in v) return (v['Fn::Join'][1] as unknown[]).map(describe).join(v['Fn::Join'][0]);
  }
  return JSON.stringify(value);
}

/** Statements granting `action`, as (resource descriptions). */
export function resourcesGranted(template: Template, role: string, action: string): string[] {
  return statementsOfRole(template, role)
    .filter((s) => s.Effect === 'Allow' && actionsOf(s).includes(action))
    .flatMap((s) => resourcesOf(s).map(describe))
    .sort();
}
