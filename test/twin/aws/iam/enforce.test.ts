import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalIam, LocalAccessDenied } from '../../../../twin/aws/iam/enforce.js';
import { iamCatalog, readDeployedIam } from '../../../../twin/aws/iam/policies.js';
import type { IamExtract } from '../../../../twin/aws/iam/template.js';

/**
 * The local IAM answers a request a principal made before as it was answered, without evaluating every statement
 * again: these tests pin down that remembering never changes an answer. A refused request stays refused, a session
 * a caller may not assume is refused on every try, and a policy that reads the clock is evaluated on every call.
 */

const NAMES = {
  prefix: 'paperclip-local',
  bucket: 'paperclip-evidence',
  sender: 'paperclip@example.com',
  region: 'us-east-1',
  account: '000000000000',
};
/** A table only the clock test's policy names. */
const CLOCKED = 'arn:aws:dynamodb:us-east-1:000000000000:table/clocked';
const CLAIMS = `arn:aws:dynamodb:us-east-1:000000000000:table/${NAMES.prefix}-claims`;

function localIam(extract: IamExtract = readDeployedIam()): LocalIam {
  return new LocalIam(iamCatalog(NAMES, extract), { partitionKeyOf: () => 'key', stateMachineOfToken: () => undefined });
}

const refusal = (body: () => void): string | undefined => {
  try {
    body();
    return undefined;
  } catch (error) {
    assert.ok(error instanceof LocalAccessDenied, `expected AccessDenied, got ${String(error)}`);
    return error.decision.decision;
  }
};

describe('local IAM: remembered answers', () => {
  it('refuses a request every time it is made, and still allows what was allowed around it', () => {
    const iam = localIam();
    iam.runAsFunction('claim', () => {
      for (let i = 0; i < 3; i++) {
        assert.equal(
          refusal(() => iam.authorize('dynamodb:DeleteTable', CLAIMS)),
          'ImplicitDeny',
        );
        assert.equal(
          refusal(() => iam.authorize('sts:AssumeRole', `arn:aws:iam::000000000000:role/${NAMES.prefix}-evidence-auditor`)),
          'ImplicitDeny',
        );
      }
    });
    // The same request by a function whose role does not grant it is refused, whatever another function was told.
    iam.runAsFunction('read-list', () =>
      assert.equal(
        refusal(() => iam.authorize('dynamodb:DeleteTable', CLAIMS)),
        'ImplicitDeny',
      ),
    );
  });

  it('refuses a session its caller may not assume on every try (nothing refused is kept)', () => {
    const iam = localIam();
    const request = { RoleArn: iam.tenantRoleArn, RoleSessionName: 'acme', Tags: [{ Key: 'tenant', Value: 'acme' }] };
    // read-list acts for a tenant: it may assume the tenant-access role; the digest writer may not.
    iam.runAsFunction('read-list', () => assert.doesNotThrow(() => iam.runAsSession(request, () => undefined)));
    for (let i = 0; i < 2; i++) {
      iam.runAsFunction('write-digests', () => assert.ok(refusal(() => iam.runAsSession(request, () => undefined))));
    }
  });

  it('evaluates a policy that reads the clock on every call, so an answer that expires does', async () => {
    const extract = readDeployedIam();
    const role = extract.roles[extract.functions['claim']!]!;
    const turnsAt = new Date(Date.now() + 400).toISOString();
    role.policies = [
      ...role.policies,
      {
        name: 'deny-after',
        document: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: CLOCKED },
            {
              Effect: 'Deny',
              Action: 'dynamodb:GetItem',
              Resource: CLOCKED,
              Condition: { DateGreaterThan: { 'aws:CurrentTime': turnsAt } },
            },
          ],
        },
      },
    ];
    const iam = localIam(extract);
    const read = () => iam.runAsFunction('claim', () => refusal(() => iam.authorize('dynamodb:GetItem', CLOCKED)));
    assert.equal(read(), undefined, 'allowed before the policy turns');
    await sleep(Math.max(0, Date.parse(turnsAt) - Date.now()) + 150);
    assert.equal(read(), 'ExplicitDeny', 'the same request, refused once the time in its condition passed');
  });
});
