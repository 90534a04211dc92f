import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { STS_LIMITS, tenantSessionRequest } from '../../src/adapters/tenant-session/session-request.js';
import { tenantResources } from '../../src/adapters/tenant-session/tenant-clients.js';
import { tenantSessionPolicy } from '../../src/contracts/tenant-policy.js';

/**
 * The AssumeRole request for a tenant session against STS's documented
 * limits, for the longest ids the config allows (tenant and identity 41
 * characters, prefix 20, bucket 63): a request STS would refuse fails every
 * tenant step on AWS, and the local stack, which has no STS, never shows it.
 */
const LONGEST = { tenant: `t${'x'.repeat(40)}`, identity: `i${'y'.repeat(40)}` };
const ROLE_ARN = 'arn:aws:iam::123456789012:role/Paperclip-prefix-TenantAccessRole0123456789-ABCDEFGHIJKL';

describe('tenant session request within STS limits', () => {
  it('scopes the session by tags alone, each within the tag rules, and a valid session name', () => {
    const request = tenantSessionRequest(ROLE_ARN, LONGEST);
    assert.ok(!('Policy' in request) && !('PolicyArns' in request), 'no inline session policy');
    assert.deepEqual(
      request.Tags.map((t) => t.Key),
      ['tenant', 'identity'],
    );
    assert.ok(request.Tags.length <= STS_LIMITS.sessionTagsMax);
    for (const tag of request.Tags) {
      assert.ok(tag.Key.length <= STS_LIMITS.tagKeyMax && STS_LIMITS.tagPattern.test(tag.Key), tag.Key);
      assert.ok(tag.Value.length >= 1 && tag.Value.length <= STS_LIMITS.tagValueMax && STS_LIMITS.tagPattern.test(tag.Value), tag.Value);
    }
    assert.deepEqual(request.Tags, [
      { Key: 'tenant', Value: LONGEST.tenant },
      { Key: 'identity', Value: LONGEST.identity },
    ]);
    assert.match(request.RoleSessionName, STS_LIMITS.roleSessionNamePattern);
    assert.ok(request.DurationSeconds >= 900 && request.DurationSeconds <= 3600, 'within the role session limits');
    assert.match(tenantSessionRequest(ROLE_ARN, { tenant: 'acme' }).RoleSessionName, STS_LIMITS.roleSessionNamePattern);
  });

  it('the session policy with the values filled in would not fit as an inline session policy, which is why tags carry the scope', () => {
    const deployment = {
      partition: 'aws',
      region: 'ap-southeast-2',
      account: '123456789012',
      prefix: `p${'r'.repeat(19)}`,
      bucket: `b${'u'.repeat(62)}`,
      workingBucket: `w${'u'.repeat(62)}`,
      evidenceKeyArn: 'arn:aws:kms:ap-southeast-2:123456789012:key/0123abcd-0123-abcd-0123-0123456789ab',
      secretIdOf: (identity: string) => `p${'r'.repeat(19)}/identity/${identity}`,
    };
    const inline = JSON.stringify(tenantSessionPolicy(LONGEST, tenantResources(deployment)));
    assert.ok(inline.length > STS_LIMITS.sessionPolicyMax, `${inline.length} characters`);
  });

  it('refuses ids that could not be tag values, naming the field', () => {
    assert.throws(() => tenantSessionRequest(ROLE_ARN, { tenant: 'Acme Corp' }), /field "tenant"/);
    assert.throws(() => tenantSessionRequest(ROLE_ARN, { tenant: `t${'x'.repeat(41)}` }), /field "tenant"/);
    assert.throws(() => tenantSessionRequest(ROLE_ARN, { tenant: 'acme', identity: 'svc_acme' }), /field "identity"/);
  });
});
