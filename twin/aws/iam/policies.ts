import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { NamedPolicy, PolicyDocument } from './policy.js';
import type { ExtractedRole, IamExtract } from './template.js';

/**
 * The IAM the CDK app deploys, as the local stack enforces it: the committed
 * extract of the synthesized template (scripts/extract-iam.ts writes it,
 * test/twin/aws/iam/extract.test.ts keeps it equal to a fresh synth), with its
 * placeholders filled in from the local stack's names.
 */

export const DEPLOYED_IAM_PATH = fileURLToPath(new URL('./deployed-iam.json', import.meta.url));

export interface LocalNames {
  prefix: string;
  bucket: string;
  /** The configured approval sender (ses:FromAddress). */
  sender: string;
  region: string;
  account: string;
  partition?: string;
}

export interface Role {
  name: string;
  arn: string;
  trust: NamedPolicy;
  policies: NamedPolicy[];
}

export interface IamCatalog {
  names: Required<LocalNames>;
  roles: ReadonlyMap<string, Role>;
  /** The role each Lambda function runs as, by short name (`claim`, `approval-http`). */
  functionRole(name: string): Role;
  tenantRole: Role;
  bucketPolicy(bucket: string): NamedPolicy | undefined;
}

export function readDeployedIam(path = DEPLOYED_IAM_PATH): IamExtract {
  return JSON.parse(readFileSync(path, 'utf8')) as IamExtract;
}

function fill<T>(value: T, names: Required<LocalNames>): T {
  const text = JSON.stringify(value)
    .replaceAll('{{prefix}}', names.prefix)
    .replaceAll('{{bucket}}', names.bucket)
    .replaceAll('{{sender}}', names.sender)
    .replaceAll('{{region}}', names.region)
    .replaceAll('{{account}}', names.account)
    .replaceAll('{{partition}}', names.partition);
  return JSON.parse(text) as T;
}

/** The catalog for one local stack; `edit` lets a test remove a grant before it is filled in. */
export function iamCatalog(local: LocalNames, extract: IamExtract = readDeployedIam()): IamCatalog {
  const names = { partition: 'aws', ...local };
  const filled = fill(extract, names);
  const roles = new Map<string, Role>();
  for (const [name, role] of Object.entries(filled.roles) as Array<[string, ExtractedRole]>) {
    roles.set(name, {
      name,
      arn: role.arn,
      trust: { name: `trust policy of ${name}`, document: role.trust as PolicyDocument },
      policies: role.policies,
    });
  }
  const get = (name: string, what: string): Role => {
    const role = roles.get(name);
    if (!role)
      throw new Error(
        `the deployed IAM has no role ${name} (${what}); regenerate twin/aws/iam/deployed-iam.json with scripts/extract-iam.ts`,
      );
    return role;
  };
  return {
    names,
    roles,
    functionRole(fn) {
      const role = filled.functions[fn];
      if (!role) throw new Error(`the deployed IAM has no function ${fn}: the CDK app does not deploy it`);
      return get(role, `the role of ${fn}`);
    },
    tenantRole: get(filled.tenantRole, 'the tenant-access role'),
    bucketPolicy: (bucket) => filled.bucketPolicies[bucket],
  };
}
