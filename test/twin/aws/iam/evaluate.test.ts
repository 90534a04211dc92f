import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluate, type Authorization } from '../../../../twin/aws/iam/evaluate.js';
import type { PolicyDocument, Principal, Statement } from '../../../../twin/aws/iam/policy.js';

/**
 * The evaluator against IAM's documented evaluation logic (IAM User Guide:
 * "Policy evaluation logic", "Condition operators", "Single-valued vs.
 * multivalued context keys", "Policy variables"), one row per documented rule.
 */

const ROLE = 'arn:aws:iam::000000000000:role/app-fn';
const SESSION = 'arn:aws:sts::000000000000:assumed-role/app-fn/s1';
const caller: Principal = { arn: ROLE, account: '000000000000', sessionArn: SESSION };
const BUCKET = 'arn:aws:s3:::evidence';

const doc = (...Statement: Statement[]): PolicyDocument => ({ Version: '2012-10-17', Statement });
const allow = (Action: string | string[], Resource: string | string[], Condition?: Statement['Condition']): Statement => ({
  Effect: 'Allow',
  Action,
  Resource,
  ...(Condition ? { Condition } : {}),
});

interface Row {
  rule: string;
  identity?: PolicyDocument[];
  session?: PolicyDocument[];
  resource?: PolicyDocument;
  trust?: boolean;
  action: string;
  resourceArn: string;
  keys?: Record<string, string | string[]>;
  principal?: Principal;
  expect: 'Allow' | 'ExplicitDeny' | 'ImplicitDeny';
}

const rows: Row[] = [
  { rule: 'nothing allows: implicit deny', action: 's3:GetObject', resourceArn: `${BUCKET}/a`, expect: 'ImplicitDeny' },
  {
    rule: 'identity Allow',
    identity: [doc(allow('s3:GetObject', `${BUCKET}/*`))],
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'Allow',
  },
  {
    rule: 'actions match without regard to case, with wildcards',
    identity: [doc(allow('S3:get*', `${BUCKET}/*`))],
    action: 's3:GetObjectAttributes',
    resourceArn: `${BUCKET}/a`,
    expect: 'Allow',
  },
  {
    rule: '? matches one character',
    identity: [doc(allow('s3:GetObjec?', `${BUCKET}/a?`))],
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/ab`,
    expect: 'Allow',
  },
  {
    rule: '? needs one character',
    identity: [doc(allow('s3:GetObject', `${BUCKET}/a?`))],
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'ImplicitDeny',
  },
  {
    rule: 'resources are case-sensitive',
    identity: [doc(allow('s3:GetObject', `${BUCKET}/A*`))],
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'ImplicitDeny',
  },
  {
    rule: 'an explicit Deny wins over an Allow',
    identity: [doc(allow('s3:*', '*'), { Effect: 'Deny', Action: 's3:GetObject', Resource: `${BUCKET}/*trace.zip` })],
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/evidence/x/trace.zip`,
    expect: 'ExplicitDeny',
  },
  {
    rule: 'NotAction allows everything else',
    identity: [doc({ Effect: 'Allow', NotAction: 's3:Delete*', Resource: '*' })],
    action: 's3:DeleteObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'ImplicitDeny',
  },
  {
    rule: 'NotAction applies to actions it does not name',
    identity: [doc({ Effect: 'Allow', NotAction: 's3:Delete*', Resource: '*' })],
    action: 's3:PutObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'Allow',
  },
  {
    rule: 'NotResource with Deny denies everything outside it',
    identity: [doc(allow('s3:*', '*'), { Effect: 'Deny', Action: 's3:*', NotResource: [`${BUCKET}/evidence/*`] })],
    action: 's3:PutObject',
    resourceArn: `${BUCKET}/runs/x`,
    expect: 'ExplicitDeny',
  },
  {
    rule: 'an ARN wildcard does not run across segments',
    identity: [doc(allow('dynamodb:GetItem', 'arn:aws:dynamodb:*:000000000000:table/t'))],
    action: 'dynamodb:GetItem',
    resourceArn: 'arn:aws:dynamodb:us-east-1:111111111111:table/t',
    expect: 'ImplicitDeny',
  },
  {
    rule: 'a table grant does not cover its indexes',
    identity: [doc(allow('dynamodb:Query', 'arn:aws:dynamodb:us-east-1:000000000000:table/t'))],
    action: 'dynamodb:Query',
    resourceArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/t/index/byKey',
    expect: 'ImplicitDeny',
  },
  // Resource policies, same account.
  {
    rule: 'a bucket policy naming the role allows without an identity policy',
    resource: doc({ Effect: 'Allow', Principal: { AWS: ROLE }, Action: 's3:GetObject', Resource: `${BUCKET}/*` }),
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'Allow',
  },
  {
    rule: 'a bucket policy naming only the account delegates to identity policies',
    resource: doc({
      Effect: 'Allow',
      Principal: { AWS: 'arn:aws:iam::000000000000:root' },
      Action: 's3:GetObject',
      Resource: `${BUCKET}/*`,
    }),
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'ImplicitDeny',
  },
  {
    rule: "a bucket policy's Deny for everyone but the auditor",
    identity: [doc(allow('s3:GetObject', `${BUCKET}/*`))],
    resource: doc({
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Action: ['s3:GetObject'],
      Resource: `${BUCKET}/*trace.zip`,
      Condition: { ArnNotEquals: { 'aws:PrincipalArn': 'arn:aws:iam::000000000000:role/auditor' } },
    }),
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/evidence/a/trace.zip`,
    keys: { 'aws:PrincipalArn': ROLE },
    expect: 'ExplicitDeny',
  },
  {
    rule: 'the same Deny spares the auditor',
    identity: [doc(allow('s3:GetObject', `${BUCKET}/*`))],
    resource: doc({
      Effect: 'Deny',
      Principal: '*',
      Action: ['s3:GetObject'],
      Resource: `${BUCKET}/*trace.zip`,
      Condition: { ArnNotEquals: { 'aws:PrincipalArn': 'arn:aws:iam::000000000000:role/auditor' } },
    }),
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/evidence/a/trace.zip`,
    keys: { 'aws:PrincipalArn': 'arn:aws:iam::000000000000:role/auditor' },
    principal: { arn: 'arn:aws:iam::000000000000:role/auditor', account: '000000000000' },
    expect: 'Allow',
  },
  {
    rule: 'NotPrincipal: a Deny applies to everyone not named',
    identity: [doc(allow('s3:GetObject', '*'))],
    resource: doc({ Effect: 'Deny', NotPrincipal: { AWS: 'arn:aws:iam::000000000000:role/other' }, Action: 's3:*', Resource: '*' }),
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'ExplicitDeny',
  },
  {
    rule: 'NotPrincipal: the one named is not denied',
    identity: [doc(allow('s3:GetObject', '*'))],
    resource: doc({ Effect: 'Deny', NotPrincipal: { AWS: ROLE }, Action: 's3:*', Resource: '*' }),
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'Allow',
  },
  // Session policies.
  {
    rule: 'a session policy intersects: both must allow',
    identity: [doc(allow('s3:*', '*'))],
    session: [doc(allow('s3:GetObject', `${BUCKET}/evidence/acme/*`))],
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/evidence/globex/a`,
    expect: 'ImplicitDeny',
  },
  {
    rule: 'a session policy alone grants nothing',
    session: [doc(allow('s3:GetObject', '*'))],
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'ImplicitDeny',
  },
  {
    rule: 'a resource policy naming the role is limited by the session policy',
    session: [doc(allow('s3:PutObject', '*'))],
    resource: doc({ Effect: 'Allow', Principal: { AWS: ROLE }, Action: 's3:GetObject', Resource: `${BUCKET}/*` }),
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'ImplicitDeny',
  },
  {
    rule: 'a resource policy naming the session is not limited by the session policy',
    session: [doc(allow('s3:PutObject', '*'))],
    resource: doc({ Effect: 'Allow', Principal: { AWS: SESSION }, Action: 's3:GetObject', Resource: `${BUCKET}/*` }),
    action: 's3:GetObject',
    resourceArn: `${BUCKET}/a`,
    expect: 'Allow',
  },
  // Trust policies.
  {
    rule: 'a trust policy naming the account needs the identity policy too',
    trust: true,
    resource: doc({ Effect: 'Allow', Principal: { AWS: 'arn:aws:iam::000000000000:root' }, Action: 'sts:AssumeRole' }),
    action: 'sts:AssumeRole',
    resourceArn: 'arn:aws:iam::000000000000:role/tenant',
    expect: 'ImplicitDeny',
  },
  {
    rule: 'a trust policy naming the account with the identity policy allowing',
    trust: true,
    identity: [doc(allow('sts:AssumeRole', 'arn:aws:iam::000000000000:role/tenant'))],
    resource: doc({ Effect: 'Allow', Principal: { AWS: '000000000000' }, Action: 'sts:AssumeRole' }),
    action: 'sts:AssumeRole',
    resourceArn: 'arn:aws:iam::000000000000:role/tenant',
    expect: 'Allow',
  },
  {
    rule: 'no trust, no assume, whatever the identity policy says',
    trust: true,
    identity: [doc(allow('sts:AssumeRole', '*'))],
    resource: doc({ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }),
    action: 'sts:AssumeRole',
    resourceArn: 'arn:aws:iam::000000000000:role/tenant',
    expect: 'ImplicitDeny',
  },
];

const condition = (
  Condition: Statement['Condition'],
  keys: Record<string, string | string[]>,
  expect: Row['expect'],
  rule: string,
): Row => ({
  rule,
  identity: [doc(allow('dynamodb:GetItem', '*', Condition))],
  action: 'dynamodb:GetItem',
  resourceArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/t',
  keys,
  expect,
});

const conditionRows: Row[] = [
  condition(
    { StringEquals: { 'aws:PrincipalTag/tenant': 'acme' } },
    { 'aws:principaltag/tenant': 'acme' },
    'Allow',
    'condition key names are case-insensitive',
  ),
  condition(
    { StringEquals: { 'aws:PrincipalTag/tenant': 'acme' } },
    { 'aws:PrincipalTag/tenant': 'ACME' },
    'ImplicitDeny',
    'StringEquals is case-sensitive',
  ),
  condition(
    { StringEqualsIgnoreCase: { 'aws:PrincipalTag/tenant': 'acme' } },
    { 'aws:PrincipalTag/tenant': 'ACME' },
    'Allow',
    'StringEqualsIgnoreCase',
  ),
  condition({ StringEquals: { 'aws:PrincipalTag/tenant': 'acme' } }, {}, 'ImplicitDeny', 'a missing key fails a positive operator'),
  condition({ StringNotEquals: { 'aws:PrincipalTag/tenant': 'acme' } }, {}, 'Allow', 'a missing key passes a negated operator'),
  condition({ StringEqualsIfExists: { 'aws:PrincipalTag/tenant': 'acme' } }, {}, 'Allow', '…IfExists: a missing key passes'),
  condition(
    { StringEqualsIfExists: { 'aws:PrincipalTag/tenant': 'acme' } },
    { 'aws:PrincipalTag/tenant': 'globex' },
    'ImplicitDeny',
    '…IfExists: a present key is tested',
  ),
  condition(
    { StringEquals: { 'aws:PrincipalTag/tenant': ['globex', 'acme'] } },
    { 'aws:PrincipalTag/tenant': 'acme' },
    'Allow',
    'values of one key OR',
  ),
  condition(
    { StringNotEquals: { 'aws:PrincipalTag/tenant': ['globex', 'acme'] } },
    { 'aws:PrincipalTag/tenant': 'acme' },
    'ImplicitDeny',
    'negated values NOR',
  ),
  condition(
    { StringEquals: { 'aws:PrincipalTag/tenant': 'acme', 'aws:PrincipalTag/identity': 'svc' } },
    { 'aws:PrincipalTag/tenant': 'acme', 'aws:PrincipalTag/identity': 'other' },
    'ImplicitDeny',
    'keys of one block AND',
  ),
  condition({ StringLike: { 's3:prefix': 'evidence/*' } }, { 's3:prefix': 'evidence/acme/' }, 'Allow', 'StringLike with *'),
  condition({ StringNotLike: { 's3:prefix': 'evidence/*' } }, { 's3:prefix': 'runs/' }, 'Allow', 'StringNotLike'),
  condition(
    { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': 'k-acme_*' } },
    { 'dynamodb:LeadingKeys': ['k-acme_1', 'k-acme_2'] },
    'Allow',
    'ForAllValues: every value matches',
  ),
  condition(
    { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': 'k-acme_*' } },
    { 'dynamodb:LeadingKeys': ['k-acme_1', 'k-globex_2'] },
    'ImplicitDeny',
    'ForAllValues: one value outside fails',
  ),
  condition(
    { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': 'k-acme_*' } },
    {},
    'Allow',
    'ForAllValues: a missing key is an empty set, which passes',
  ),
  condition(
    { 'ForAnyValue:StringEquals': { 'aws:TagKeys': ['tenant'] } },
    { 'aws:TagKeys': ['x', 'tenant'] },
    'Allow',
    'ForAnyValue: one value matches',
  ),
  condition({ 'ForAnyValue:StringEquals': { 'aws:TagKeys': ['tenant'] } }, {}, 'ImplicitDeny', 'ForAnyValue: a missing key fails'),
  condition({ ArnLike: { 'aws:PrincipalArn': 'arn:aws:iam::*:role/app-*' } }, { 'aws:PrincipalArn': ROLE }, 'Allow', 'ArnLike'),
  condition(
    { ArnEquals: { 'aws:PrincipalArn': ROLE } },
    { 'aws:PrincipalArn': 'arn:aws:iam::000000000000:role/x' },
    'ImplicitDeny',
    'ArnEquals',
  ),
  condition({ ArnNotEquals: { 'aws:PrincipalArn': ROLE } }, { 'aws:PrincipalArn': ROLE }, 'ImplicitDeny', 'ArnNotEquals'),
  condition({ Bool: { 'aws:SecureTransport': 'false' } }, { 'aws:SecureTransport': 'true' }, 'ImplicitDeny', 'Bool'),
  condition(
    { Bool: { 'aws:SecureTransport': true } as Record<string, unknown> },
    { 'aws:SecureTransport': 'TRUE' },
    'Allow',
    'Bool with a JSON boolean',
  ),
  condition({ Null: { 'aws:PrincipalTag/tenant': 'true' } }, {}, 'Allow', 'Null true: the key is absent'),
  condition({ Null: { 'aws:PrincipalTag/tenant': 'false' } }, {}, 'ImplicitDeny', 'Null false: the key must be present'),
  condition(
    { NumericLessThan: { 's3:TlsVersion': 1.2 } as Record<string, unknown> },
    { 's3:TlsVersion': '1.3' },
    'ImplicitDeny',
    'NumericLessThan',
  ),
  condition({ NumericGreaterThanEquals: { 's3:max-keys': '10' } }, { 's3:max-keys': '10' }, 'Allow', 'NumericGreaterThanEquals'),
  condition(
    { DateLessThan: { 'aws:CurrentTime': '2030-01-01T00:00:00Z' } },
    { 'aws:CurrentTime': '2026-12-05T00:00:00Z' },
    'Allow',
    'DateLessThan',
  ),
  condition(
    { DateGreaterThan: { 'aws:EpochTime': '2000000000' } },
    { 'aws:EpochTime': '1800000000' },
    'ImplicitDeny',
    'DateGreaterThan, epoch seconds',
  ),
  condition({ IpAddress: { 'aws:SourceIp': '127.0.0.0/8' } }, { 'aws:SourceIp': '127.0.0.1' }, 'Allow', 'IpAddress'),
  condition({ NotIpAddress: { 'aws:SourceIp': '10.0.0.0/8' } }, { 'aws:SourceIp': '10.1.2.3' }, 'ImplicitDeny', 'NotIpAddress'),
  // Policy variables.
  condition(
    { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': 'k-${aws:PrincipalTag/tenant}_*' } },
    { 'aws:PrincipalTag/tenant': 'acme', 'dynamodb:LeadingKeys': ['k-acme_1'] },
    'Allow',
    'a policy variable in a condition value',
  ),
  condition(
    { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': 'k-${aws:PrincipalTag/tenant}_*' } },
    { 'aws:PrincipalTag/tenant': 'globex', 'dynamodb:LeadingKeys': ['k-acme_1'] },
    'ImplicitDeny',
    'the variable takes the caller’s tag',
  ),
  condition(
    { StringLike: { 's3:prefix': 'home/${aws:username}/*' } },
    { 'aws:username': 'ana', 's3:prefix': 'home/ana/x' },
    'Allow',
    '${aws:username}',
  ),
  condition(
    { StringEquals: { 'aws:PrincipalTag/team': "${aws:PrincipalTag/tenant, 'none'}" } },
    { 'aws:PrincipalTag/team': 'none' },
    'Allow',
    'a variable default fills a missing key',
  ),
  condition({ StringLike: { 's3:prefix': '${*}' } }, { 's3:prefix': '*' }, 'Allow', '${*} is a literal *'),
  condition({ StringLike: { 's3:prefix': '${*}' } }, { 's3:prefix': 'x' }, 'ImplicitDeny', '${*} is not a wildcard'),
];

const variableRows: Row[] = [
  {
    rule: 'a variable in a resource',
    identity: [doc(allow('s3:PutObject', `${BUCKET}/evidence/\${aws:PrincipalTag/tenant}/*`))],
    action: 's3:PutObject',
    resourceArn: `${BUCKET}/evidence/acme/x`,
    keys: { 'aws:PrincipalTag/tenant': 'acme' },
    expect: 'Allow',
  },
  {
    rule: 'a resource whose variable is missing matches nothing',
    identity: [doc(allow('s3:PutObject', `${BUCKET}/evidence/\${aws:PrincipalTag/tenant}*`))],
    action: 's3:PutObject',
    resourceArn: `${BUCKET}/evidence/acme/x`,
    expect: 'ImplicitDeny',
  },
  {
    rule: "a tag value's * is not a wildcard",
    identity: [doc(allow('s3:PutObject', `${BUCKET}/evidence/\${aws:PrincipalTag/tenant}/x`))],
    action: 's3:PutObject',
    resourceArn: `${BUCKET}/evidence/acme/x`,
    keys: { 'aws:PrincipalTag/tenant': '*' },
    expect: 'ImplicitDeny',
  },
];

describe('IAM policy evaluation (documented logic)', () => {
  for (const row of [...rows, ...conditionRows, ...variableRows]) {
    it(`${row.rule} → ${row.expect}`, () => {
      const input: Authorization = {
        request: { principal: row.principal ?? caller, action: row.action, resource: row.resourceArn, keys: row.keys ?? {} },
        identityPolicies: (row.identity ?? []).map((document, i) => ({ name: `identity${i}`, document })),
        ...(row.session ? { sessionPolicies: row.session.map((document, i) => ({ name: `session${i}`, document })) } : {}),
        ...(row.resource ? { resourcePolicy: { name: 'resource policy', document: row.resource } } : {}),
        ...(row.trust ? { resourcePolicyRequired: true } : {}),
      };
      const decision = evaluate(input);
      assert.equal(decision.decision, row.expect, decision.reason);
    });
  }

  it('names the deciding statement', () => {
    const decision = evaluate({
      request: { principal: caller, action: 's3:GetObject', resource: `${BUCKET}/t/trace.zip`, keys: {} },
      identityPolicies: [
        {
          name: 'fn-role',
          document: doc(allow('s3:*', '*'), { Sid: 'NoTraces', Effect: 'Deny', Action: 's3:GetObject', Resource: '*trace.zip' }),
        },
      ],
    });
    assert.equal(decision.reason, 'explicitly denied by fn-role statement NoTraces');
  });

  it('refuses to guess an unknown condition operator', () => {
    assert.throws(
      () =>
        evaluate({
          request: { principal: caller, action: 's3:GetObject', resource: `${BUCKET}/a`, keys: { k: 'v' } },
          identityPolicies: [{ name: 'p', document: doc(allow('s3:GetObject', '*', { StringSortOf: { k: 'v' } })) }],
        }),
      /does not know the condition operator StringSortOf/,
    );
  });
});
