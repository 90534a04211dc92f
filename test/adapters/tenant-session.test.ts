import assert from 'node:assert/strict';
import { after, before, describe, it as test } from 'node:test';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Services } from '../../src/app/services.js';
import { createServices, type WiredServices } from '../../src/composition/services.js';
import { TABLES, tableName } from '../../src/contracts/table-definitions.js';
import { LocalIam } from '../../twin/aws/iam/enforce.js';
import { iamCatalog } from '../../twin/aws/iam/policies.js';
import { tenantResources } from '../../src/adapters/tenant-session/tenant-clients.js';
import { tenantSessionPolicy } from '../../src/contracts/tenant-policy.js';
import type { Claim } from '../../src/domain/claim.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { startLocalStack, type LocalStack } from '../../twin/aws/stack.js';
import { sampleEvent } from '../support/audit-events.js';
import { storedClaim } from '../app/guarded-write/memory-ports.js';

/**
 * The tenant code path with the tenant session's constraints enforced: the
 * services for acme are built as the functions build them (forTenant), each
 * test runs as the claim function (which acts for a tenant), and the local IAM
 * evaluates every call as a session of the tenant-access role, as the template
 * deploys it, with acme's tags: another tenant's claim, approval, audit chain,
 * evidence or identity secret is refused with AccessDenied while acme's own
 * work goes through.
 */

let stack: LocalStack;
let services: WiredServices;
let acme: Services;

const key = (tenant: string, billNo: string) => idempotencyKey({ taskId: 'T-isolation', tenant, billNo, action: 'mark_processed' });
const acmeKey = key('acme', 'ACME-1');
const globexKey = key('globex', 'GLOBEX-1');
/** S3 answers AccessDenied, DynamoDB and Secrets Manager AccessDeniedException. */
const denied = (error: unknown) => /^AccessDenied(Exception)?$/.test((error as Error).name);
let iam: LocalIam;
/** Every test body runs as one invocation of the claim function. */
const it = (name: string, body: () => Promise<void> | void) => test(name, () => iam.runAsFunction('claim', async () => body()));

function claim(key: string, tenant: string): Claim {
  const billNo = `${tenant.toUpperCase()}-1`;
  const item = { key, taskId: 'T-isolation', tenant, billNo, action: 'mark_processed', identity: `svc-recon-${tenant}` };
  const owner = 'arn:aws:states:us-east-1:000000000000:execution:isolation:run';
  return storedClaim(item, { owner, status: 'DONE', leaseUntil: new Date().toISOString() });
}

before(async () => {
  stack = await startLocalStack({ handlers: {}, prefix: 'paperclip-local', bucket: 'paperclip-evidence' });
  const tables = new Map(TABLES.map((t) => [tableName('paperclip-local', t.id), t]));
  iam = new LocalIam(
    iamCatalog({
      prefix: 'paperclip-local',
      bucket: 'paperclip-evidence',
      sender: 'paperclip@example.com',
      region: stack.region,
      account: '000000000000',
    }),
    {
      partitionKeyOf: (table, index) =>
        index ? tables.get(table)?.indexes.find((i) => i.name === index)?.partitionKey.name : tables.get(table)?.partitionKey.name,
      stateMachineOfToken: () => undefined,
    },
  );
  services = createServices(
    {
      PAPERCLIP_CONFIG: 'config/paperclip.local.yaml',
      PAPERCLIP_AWS_REGION: stack.region,
      PAPERCLIP_DYNAMODB_ENDPOINT: stack.endpoints.dynamodb,
      PAPERCLIP_S3_ENDPOINT: stack.endpoints.s3,
      // Nothing listens here: a refused call must fail in the guard, before any request leaves.
      PAPERCLIP_SECRETS_ENDPOINT: 'http://127.0.0.1:9',
    },
    { localIam: iam },
  );
  acme = services.forTenant({ tenant: 'acme', identity: 'svc-recon-acme' });
  // Another tenant's items, written with the unscoped clients.
  await services.claims.tryCreate(claim(globexKey, 'globex'));
  await services.audit.append(globexKey, sampleEvent('claimed', {}, 'svc-recon-globex'));
  await services.evidence.put(`evidence/globex/T-isolation/${globexKey}/before.png`, 'png', 'image/png');
});

after(async () => {
  await stack?.stop();
});

describe('tenant session (local IAM, the deployed tenant-access role)', () => {
  it("reads and writes the tenant's own claims and audit chain", async () => {
    assert.equal(await acme.claims.tryCreate(claim(acmeKey, 'acme')), true);
    assert.equal((await acme.claims.get(acmeKey))?.key, acmeKey);
    await acme.audit.append(acmeKey, sampleEvent('claimed'));
    assert.equal((await acme.audit.events(acmeKey)).length, 1);
    assert.deepEqual(
      (await acme.claims.existing([acmeKey])).map((c) => c.key),
      [acmeKey],
    );
  });

  it("refuses another tenant's claim, audit chain and approvals, also mixed into a batch read", async () => {
    await assert.rejects(acme.claims.get(globexKey), denied);
    await assert.rejects(acme.claims.existing([acmeKey, globexKey]), denied);
    await assert.rejects(acme.audit.events(globexKey), denied);
    await assert.rejects(acme.audit.append(globexKey, sampleEvent('claimed')), denied);
    assert.deepEqual(await acme.approvals.byKey(acmeKey), [], "acme's own approvals are readable through the byKey index");
    await assert.rejects(acme.approvals.byKey(globexKey), denied);
    await assert.rejects(acme.approvals.get(`k-globex_${'a'.repeat(24)}`), denied);
    // A task's claims: the index is keyed by the tenant, so the session lists its own and no other tenant's.
    assert.deepEqual(
      (await acme.claims.byTask('T-isolation', 'acme')).map((c) => c.key),
      [acmeKey],
    );
    await assert.rejects(acme.claims.byTask('T-isolation', 'globex'), denied);
    await assert.rejects(acme.claims.byTask('T-isolation'), denied, 'no scan of every tenant either');
    // A key that does not look like a tenant's (the old unprefixed shape) belongs to no tenant.
    await assert.rejects(acme.claims.get(`k-${'0'.repeat(40)}`), denied);
  });

  it("holds and releases the tenant's own items' open-write records, never another tenant's (the claim function's session)", async () => {
    const lock = { tenant: 'acme', billNo: 'ACME-202611-0001', holder: acmeKey, holderTask: 'T-1', holderAction: 'mark_processed' };
    assert.equal(await acme.claims.holdItem(lock), true);
    assert.equal((await acme.claims.itemLock('acme', 'ACME-202611-0001'))?.holder, acmeKey);
    assert.equal(await acme.claims.releaseItem('acme', 'ACME-202611-0001', acmeKey), true);
    await assert.rejects(acme.claims.itemLock('globex', 'GLOBEX-202611-0001'), denied);
    await assert.rejects(acme.claims.holdItem({ ...lock, tenant: 'globex', billNo: 'GLOBEX-202611-0001' }), denied);
  });

  for (const fn of ['read-list', 'validate-route', 'snapshot', 'browser-write', 'readback']) {
    test(`the ${fn} function takes, renews and releases its tenant's vendor session slots, never another tenant's`, () =>
      iam.runAsFunction(fn, async () => {
        const scope = { tenant: 'acme', identity: 'svc-recon-acme' };
        const hold = await acme.sessionSlots.tryTake(scope, `holder-${fn}`, { slots: 1, leaseMs: 60_000 });
        assert.ok(hold, "acme's slot is free and taken through acme's session");
        assert.ok(await acme.sessionSlots.renew(hold, 60_000));
        assert.equal(await acme.sessionSlots.release(hold), true);
        await assert.rejects(
          acme.sessionSlots.tryTake({ tenant: 'globex', identity: 'svc-recon-globex' }, 'h', { slots: 1, leaseMs: 60_000 }),
          denied,
        );
      }));
  }

  it("reaches only the tenant's own takeover queue entries; plain secrets stay on the function's role", async () => {
    assert.equal(await acme.takeovers.get(acmeKey), undefined, "acme's own queue entry is readable (there is none)");
    await assert.rejects(acme.takeovers.get(globexKey), denied);
    // The signing keys are the function's own (the claim function holds none), never the tenant session's.
    await assert.rejects(acme.secretStrings.get('paperclip-local/approval-signing-key'), denied);
    await assert.rejects(
      services.clients.db.send(new TransactWriteCommand({ TransactItems: [] })),
      /dynamodb TransactWriteItems is not in the local IAM command table/,
    );
  });

  it("writes and reads only under the tenant's evidence prefix and its batches' item lists (in the working bucket)", async () => {
    const own = `evidence/acme/T-isolation/${acmeKey}/before.png`;
    await acme.evidence.put(own, 'png', 'image/png');
    assert.equal((await acme.evidence.get(own))?.toString(), 'png');
    assert.deepEqual(await acme.evidence.list('evidence/acme/T-isolation/'), [own]);
    await acme.working.put('runs/acme/T-isolation/exec-1/items.json', '[]', 'application/json');
    await assert.rejects(
      acme.evidence.put('runs/acme/T-isolation/exec-1/items.json', '[]', 'application/json'),
      denied,
      'item lists are not written into the locked evidence bucket',
    );
    await assert.rejects(acme.evidence.put(`evidence/globex/T-isolation/${globexKey}/after.png`, 'x', 'image/png'), denied);
    await assert.rejects(acme.evidence.get(`evidence/globex/T-isolation/${globexKey}/before.png`), denied);
    await assert.rejects(acme.evidence.list('evidence/globex/'), denied);
    await assert.rejects(acme.evidence.list(''), denied, 'no listing of the whole bucket');
    await assert.rejects(acme.working.put('runs/globex/T-isolation/exec-1/items.json', '[]', 'application/json'), denied);
    await assert.rejects(acme.working.put('runs/acme/T-isolation/exec-1/results/x.json', '{}', 'application/json'), denied);
    await assert.rejects(acme.evidence.list('evidence/acme-eu/'), denied, "acme's prefix is not a prefix of acme-eu's");
  });

  it("appends to the tenant's batch chains and anchors its seals, never another tenant's", async () => {
    await acme.audit.append('batch:acme:T-isolation', sampleEvent('sealed'));
    assert.equal((await acme.audit.events('batch:acme:T-isolation')).length, 1);
    await assert.rejects(acme.audit.append('batch:globex:T-isolation', sampleEvent('sealed')), denied);
    await assert.rejects(acme.audit.events('batch:acme-eu:T-isolation'), denied, "acme's batch chains are not a prefix of acme-eu's");
    await acme.evidence.put('anchors/acme/2026-12-05/batch:acme:T-isolation/1.json', '{}', 'application/json');
    await assert.rejects(acme.evidence.put('anchors/globex/2026-12-05/batch:globex:T-isolation/1.json', '{}', 'application/json'), denied);
    await assert.rejects(
      acme.evidence.put('digests/acme/2026-12-05.json', '{}', 'application/json'),
      denied,
      "digests are not a session's",
    );
  });

  it('a session without an identity (closing, sealing, approvals) keeps the tenant data and reads no secret', async () => {
    const records = services.forTenant({ tenant: 'acme' });
    assert.equal((await records.claims.get(acmeKey))?.key, acmeKey);
    await assert.rejects(records.claims.get(globexKey), denied);
    await assert.rejects(records.secret('svc-recon-acme'), denied, 'no identity tag, no vendor login');
  });

  it("reads only its own identity's secret", async () => {
    assert.equal((await acme.secret('svc-recon-acme')).username, 'svc-recon-acme');
    await assert.rejects(acme.secret('svc-recon-globex'), denied);
    await assert.rejects(acme.vendorApi('svc-recon-globex'), denied);
    await assert.rejects(
      acme.secretStrings.get('paperclip-local/identity/svc-recon-globex'),
      denied,
      'refused by the local IAM, before the request leaves',
    );
  });

  it("is one session per tenant and identity; the function's own role holds no tenant data", async () => {
    assert.equal(services.forTenant({ tenant: 'acme', identity: 'svc-recon-acme' }), acme);
    await assert.rejects(services.claims.get(globexKey), denied, "the claim function's role reaches no claims without a session");
    const globex = services.forTenant({ tenant: 'globex', identity: 'svc-recon-globex' });
    assert.equal((await globex.claims.get(globexKey))?.key, globexKey);
    await assert.rejects(globex.claims.get(acmeKey), denied);
  });

  test('outside any function (the operator, test setup) calls are not evaluated, but no session can be assumed', async () => {
    assert.equal((await services.claims.get(globexKey))?.key, globexKey);
    await assert.rejects(
      iam.runAsFunction('write-digests', async () => services.forTenant({ tenant: 'initech' }).claims.get(acmeKey)),
      (error: Error) => error.name === 'AccessDenied' && /sts:AssumeRole/.test(error.message),
      'write-digests does not act for a tenant: its role may not assume the tenant-access role',
    );
  });

  it("is the role's tag-variable policy with the session's tags filled in, as IAM evaluates it", () => {
    const resources = tenantResources({
      partition: 'aws',
      region: 'ap-southeast-1',
      account: '123456789012',
      prefix: 'paperclip',
      bucket: 'paperclip-evidence',
      workingBucket: 'paperclip-evidence-runs',
      evidenceKeyArn: 'arn:aws:kms:ap-southeast-1:123456789012:key/01234567-89ab-cdef-0123-456789abcdef',
      secretIdOf: (identity) => `paperclip/identity/${identity}`,
    });
    const tagged = JSON.stringify(
      tenantSessionPolicy({ tenant: '${aws:PrincipalTag/tenant}', identity: '${aws:PrincipalTag/identity}' }, resources),
    );
    const filled = tagged.replaceAll('${aws:PrincipalTag/tenant}', 'acme').replaceAll('${aws:PrincipalTag/identity}', 'svc-recon-acme');
    assert.deepEqual(JSON.parse(filled), tenantSessionPolicy({ tenant: 'acme', identity: 'svc-recon-acme' }, resources));
  });
});
