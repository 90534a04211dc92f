import type { NamedPolicy, PolicyDocument } from './policy.js';

/**
 * Reads the IAM a synthesized CloudFormation template deploys: every role
 * with its identity policies (inline, and the AWS::IAM::Policy resources
 * attached to it) and trust policy, which function runs as which role, and
 * the bucket policies. CloudFormation's intrinsic functions are resolved to
 * local names written with placeholders (`{{prefix}}`, `{{bucket}}`,
 * `{{sender}}`, `{{partition}}`, `{{region}}`, `{{account}}`), which
 * policies.ts fills in from the local stack's config, so the extract made
 * from the sample deployment serves any local prefix and bucket.
 */

export interface ExtractedRole {
  arn: string;
  trust: PolicyDocument;
  policies: NamedPolicy[];
}

export interface IamExtract {
  /** Roles by local role name (with placeholders). */
  roles: Record<string, ExtractedRole>;
  /** Lambda function name (`read-list`, `approval-http`, …) to its role's local name. */
  functions: Record<string, string>;
  /** The role the tenant-scoped sessions assume. */
  tenantRole: string;
  /** Bucket policies by bucket name (with placeholders). */
  bucketPolicies: Record<string, NamedPolicy>;
}

/** The deployment's own names, which become placeholders. */
export interface DeployedNames {
  prefix: string;
  bucketName: string;
  senderAddress: string;
}

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
}

type Template = { Resources: Record<string, Resource> };

export class UnresolvableError extends Error {
  override readonly name = 'Unresolvable';
}

const ARN = (service: string, resource: string, regional = true) =>
  `arn:{{partition}}:${service}:${regional ? '{{region}}' : ''}:${regional ? '{{account}}' : ''}:${resource}`;

export function extractIam(template: Template, names: DeployedNames): IamExtract {
  const resources = template.Resources;
  const prop = (id: string, name: string) => resources[id]?.Properties?.[name];

  const literal = (text: string): string =>
    text
      .split(names.bucketName)
      .join('{{bucket}}')
      .split(names.senderAddress)
      .join('{{sender}}')
      .split(`${names.prefix}-`)
      .join('{{prefix}}-')
      .split(`${names.prefix}/`)
      .join('{{prefix}}/');

  // Function roles are named after their function; the tenant-access role after its construct.
  const roleNames = new Map<string, string>();
  const functions: Record<string, string> = {};
  for (const [, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const physical = String(resource.Properties?.['FunctionName'] ?? '');
    const role = (resource.Properties?.['Role'] as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0];
    if (!physical.startsWith(`${names.prefix}-`) || !role) continue;
    const name = physical.slice(names.prefix.length + 1);
    roleNames.set(role, `{{prefix}}-${name}-role`);
    functions[name] = `{{prefix}}-${name}-role`;
  }
  const tenantRoleId = Object.keys(resources).find((id) => id.startsWith('TenantAccessRole') && resources[id]!.Type === 'AWS::IAM::Role');
  if (!tenantRoleId) throw new UnresolvableError('the template has no TenantAccess role');
  roleNames.set(tenantRoleId, '{{prefix}}-tenant-access');

  const roleName = (id: string): string => {
    const explicit = prop(id, 'RoleName');
    if (explicit !== undefined) return String(resolve(explicit));
    return roleNames.get(id) ?? `{{prefix}}-${id.replace(/[0-9A-F]{8}$/, '')}`;
  };

  const reference = (id: string, attribute: 'Ref' | string): string => {
    if (id === 'AWS::Partition') return '{{partition}}';
    if (id === 'AWS::Region') return '{{region}}';
    if (id === 'AWS::AccountId') return '{{account}}';
    if (id === 'AWS::URLSuffix') return 'amazonaws.com';
    const resource = resources[id];
    if (!resource) throw new UnresolvableError(`${id} is not a resource of the template`);
    const named = (property: string, fallback: string) =>
      prop(id, property) !== undefined ? String(resolve(prop(id, property))) : `{{prefix}}-${fallback}`;
    const simpleId = id.replace(/[0-9A-F]{8}$/, '');
    switch (resource.Type) {
      case 'AWS::DynamoDB::Table':
        return ARN('dynamodb', `table/${named('TableName', simpleId)}`);
      case 'AWS::S3::Bucket': {
        const bucket = named('BucketName', simpleId.toLowerCase());
        return attribute === 'Ref' ? bucket : `arn:{{partition}}:s3:::${bucket}`;
      }
      case 'AWS::KMS::Key':
        return ARN('kms', `key/${simpleId}`);
      case 'AWS::IAM::Role':
        return attribute === 'Ref' ? roleName(id) : `arn:{{partition}}:iam::{{account}}:role/${roleName(id)}`;
      case 'AWS::SecretsManager::Secret':
        // A secret's ARN ends in six random characters; locally they are LOCAL0.
        return ARN('secretsmanager', `secret:${named('Name', simpleId)}-LOCAL0`);
      case 'AWS::Logs::LogGroup':
        return ARN('logs', `log-group:${named('LogGroupName', simpleId)}:*`);
      case 'AWS::Lambda::Function':
        return ARN('lambda', `function:${named('FunctionName', simpleId)}`);
      case 'AWS::StepFunctions::StateMachine':
        return ARN('states', `stateMachine:${named('StateMachineName', simpleId)}`);
      case 'AWS::SQS::Queue':
        return ARN('sqs', named('QueueName', simpleId));
      case 'AWS::SNS::Topic':
        return ARN('sns', named('TopicName', simpleId));
      default:
        throw new UnresolvableError(`${id} (${resource.Type}): no local ARN for this resource type; add it to twin/aws/iam/template.ts`);
    }
  };

  function resolve(value: unknown): unknown {
    if (typeof value === 'string') return literal(value);
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const object = value as Record<string, unknown>;
    if ('Ref' in object) return reference(String(object['Ref']), 'Ref');
    if ('Fn::GetAtt' in object) {
      const [id, attribute] = object['Fn::GetAtt'] as [string, string];
      if (attribute !== 'Arn') throw new UnresolvableError(`Fn::GetAtt ${id}.${attribute}: only Arn is resolved`);
      return reference(id, attribute);
    }
    if ('Fn::Join' in object) {
      const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
      return (resolve(parts) as unknown[]).map(String).join(separator);
    }
    if ('Fn::Select' in object) {
      const [index, list] = object['Fn::Select'] as [number, unknown];
      return (resolve(list) as unknown[])[Number(index)];
    }
    if ('Fn::Split' in object) {
      const [separator, text] = object['Fn::Split'] as [string, unknown];
      return String(resolve(text)).split(separator);
    }
    const intrinsic = Object.keys(object).find((k) => k.startsWith('Fn::'));
    if (intrinsic) throw new UnresolvableError(`${intrinsic} is not resolved locally; add it to twin/aws/iam/template.ts`);
    return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, resolve(v)]));
  }

  const roles: Record<string, ExtractedRole> = {};
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::IAM::Role') continue;
    const name = roleName(id);
    const inline = (resource.Properties?.['Policies'] ?? []) as Array<{ PolicyName: string; PolicyDocument: unknown }>;
    if (resource.Properties?.['ManagedPolicyArns'] !== undefined) {
      throw new UnresolvableError(
        `${id} has managed policies; the local evaluator reads only inline and attached AWS::IAM::Policy documents`,
      );
    }
    roles[name] = {
      arn: `arn:{{partition}}:iam::{{account}}:role/${name}`,
      trust: resolve(resource.Properties?.['AssumeRolePolicyDocument']) as PolicyDocument,
      policies: inline.map((p) => ({ name: `${name}/${p.PolicyName}`, document: resolve(p.PolicyDocument) as PolicyDocument })),
    };
  }
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    for (const ref of (resource.Properties?.['Roles'] ?? []) as Array<{ Ref: string }>) {
      const role = roles[roleName(ref.Ref)];
      if (!role) throw new UnresolvableError(`${id} is attached to ${ref.Ref}, which is not a role of the template`);
      role.policies.push({
        name: `${roleName(ref.Ref)}/${id.replace(/[0-9A-F]{8}$/, '')}`,
        document: resolve(resource.Properties?.['PolicyDocument']) as PolicyDocument,
      });
    }
  }

  const bucketPolicies: Record<string, NamedPolicy> = {};
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::S3::BucketPolicy') continue;
    const bucket = String(resolve(resource.Properties?.['Bucket']));
    bucketPolicies[bucket] = {
      name: `bucket policy of ${bucket} (${id.replace(/[0-9A-F]{8}$/, '')})`,
      document: resolve(resource.Properties?.['PolicyDocument']) as PolicyDocument,
    };
  }

  return { roles, functions, tenantRole: '{{prefix}}-tenant-access', bucketPolicies };
}
