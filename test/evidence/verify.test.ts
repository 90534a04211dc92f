import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Claim } from '../../src/domain/claim.js';
import { batchKey, evidenceKey } from '../../src/app/ports/evidence.js';
import { checkChain, verifyBatch, verifyKey } from '../../src/evidence/verify.js';
import { sealEvent, GENESIS_HASH, type AuditEvent } from '../../src/domain/audit-chain.js';
import { standaloneSealHash } from '../../src/evidence/seal.js';
import { anchorKey } from '../../src/evidence/anchors.js';
import { startHarness, type Harness } from '../support/embedded.js';
import { GetExecutionHistoryCommand } from '@aws-sdk/client-sfn';
import { handler as completeHandler } from '../../lambdas/complete.js';
import { runPaperclipSource, type Finished } from '../support/processes.js';
import { appendUnchecked } from '../support/audit-events.js';
import { finishBatchEvidence } from '../../src/evidence/batch-end.js';

/**
 * Tamper evidence after a real batch: the untouched batch verifies clean;
 * then an audit event is edited in the table, a screenshot deleted and a stray
 * object added, and `paperclip audit verify` must name each one (exit 1).
 */
const TASK = 'T-evidence-verify';
const BATCH = `acme/${TASK}`;

/** `paperclip audit verify` with these arguments, as an operator runs it; its exit code asserted (0 clean, 1 a finding). */
async function auditVerify(h: Harness, args: string[], code: 0 | 1): Promise<Finished> {
  const run = await runPaperclipSource(['audit', 'verify', ...args], {
    PAPERCLIP_DYNAMODB_ENDPOINT: h.paperclip.stack.endpoints.dynamodb,
    PAPERCLIP_S3_ENDPOINT: h.paperclip.stack.endpoints.s3,
  });
  assert.equal(run.code, code, run.stdout + run.stderr);
  return run;
}

/** Sets fields of one stored audit event straight in the table, as someone with write access to it could. */
async function editStoredEvent(s: Harness['paperclip']['services'], chain: string, seq: number, fields: Record<string, unknown>) {
  const names = Object.keys(fields);
  await s.clients.db.send(
    new UpdateCommand({
      TableName: s.table('audit'),
      Key: { chain, seq },
      UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#f${i}`, name])),
      ExpressionAttributeValues: Object.fromEntries(names.map((name, i) => [`:v${i}`, fields[name]])),
    }),
  );
}

/**
 * What write access to the audit table allows: the item's chain replaced by one without its readback, every event
 * re-hashed so that the chain alone is consistent again (`actorOf` may also change who did what). Returns the new chain.
 */
async function rewriteChainWithoutReadback(
  s: Harness['paperclip']['services'],
  key: string,
  actorOf: (event: AuditEvent) => string = (event) => event.actor,
): Promise<AuditEvent[]> {
  const original = await s.audit.events(key);
  const forged: AuditEvent[] = [];
  for (const [i, e] of original.filter((e) => e.type !== 'readback').entries()) {
    forged.push(sealEvent(key, i + 1, forged[i - 1]?.hash ?? GENESIS_HASH, { type: e.type, actor: actorOf(e), data: e.data }, e.at));
  }
  for (const e of original) await s.clients.db.send(new DeleteCommand({ TableName: s.table('audit'), Key: { chain: key, seq: e.seq } }));
  for (const e of forged) await s.clients.db.send(new PutCommand({ TableName: s.table('audit'), Item: e }));
  return forged;
}

describe('audit verify', () => {
  let h: Harness;
  let claims: Claim[];

  before(async () => {
    h = await startHarness();
    await h.control.reset({ seed: 5, tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 0 }] });
    const run = await h.paperclip.runBatch({ taskId: TASK, tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.counts.done, 3);
    claims = (await h.paperclip.services.claims.byTask(TASK)).sort((a, b) => a.billNo.localeCompare(b.billNo));
  });
  after(async () => {
    await h?.stop();
  });

  /** A scenario of one pending acme bill, and the task that marks it processed outside any batch. */
  const writeOfOnePendingBill = async (seed: number, taskId: string) => {
    await h.control.reset({ seed, tenants: [{ id: 'acme', pending: 1, overcharge: 0, processed: 0 }] });
    const billNo = (await h.control.state()).bills.find((b) => b.tenant === 'acme' && b.status === 'PENDING')!.billNo;
    return { taskId, tenant: 'acme', billNo, action: 'mark_processed' };
  };

  test('the batch is sealed: seal.json in the folder, its hash in the batch chain; an untouched batch verifies clean (exit 0)', async () => {
    const { evidence, audit } = h.paperclip.services;
    const seal = JSON.parse((await evidence.get(batchKey({ tenant: 'acme', taskId: TASK }, 'seal.json')))!.toString());
    const chain = await audit.events(`batch:acme:${TASK}`);
    assert.equal(chain.at(-1)?.type, 'sealed');
    assert.equal(chain.at(-1)?.data['sealHash'], seal.sealHash);
    assert.deepEqual(seal.items.map((i: { key: string }) => i.key).sort(), claims.map((c) => c.key).sort());
    for (const item of seal.items as Array<{ key: string; events: string[]; objects: Array<{ name: string }> }>) {
      const events = await audit.events(item.key);
      assert.deepEqual(
        item.events,
        events.map((e) => e.hash),
        'every event hash of the chain, up to its head',
      );
      for (const name of ['before.png', 'after.png', 'trace.zip', 'record.json', 'index.html']) {
        assert.ok(
          item.objects.some((o) => o.name === name),
          `${item.key} seals ${name}`,
        );
      }
    }
    const result = await verifyBatch(h.paperclip.services, { tenant: 'acme', taskId: TASK });
    assert.deepEqual(result.findings, []);
    assert.equal(result.checked.chains, 4);
    const run = await auditVerify(h, ['--batch', BATCH], 0);
    assert.match(run.stdout, /clean: 1 batch\(es\), 4 chain\(s\)/);
  });

  test('an edited audit event, a deleted screenshot and a stray object are each named; exit 1', async () => {
    const s = h.paperclip.services;
    const [first, second, third] = claims as [Claim, Claim, Claim];
    // Someone rewrites who committed the write, straight in the table.
    await editStoredEvent(s, first.key, 4, { actor: 'ops-shared' });
    const deleted = evidenceKey(second, 'before.png');
    await s.clients.s3.send(new DeleteObjectCommand({ Bucket: s.evidence.bucket, Key: deleted }));
    const stray = evidenceKey(third, 'after-fixed.png');
    const strayBody = Buffer.from('not evidence');
    // The evidence bucket is Object Locked: a PUT must carry a checksum, as on AWS.
    const strayChecksum = createHash('sha256').update(strayBody).digest('base64');
    await s.clients.s3.send(
      new PutObjectCommand({ Bucket: s.evidence.bucket, Key: stray, Body: strayBody, ChecksumSHA256: strayChecksum }),
    );

    const run = await auditVerify(h, ['--batch', BATCH], 1);
    assert.match(run.stdout, new RegExp(`ALTERED +event seq 4 \\(write_started\\) of chain ${first.key} altered`));
    assert.match(run.stdout, new RegExp(`REMOVED +${deleted} removed`));
    assert.match(run.stdout, new RegExp(`ADDED +${stray} added`));
    assert.match(run.stdout, /3 finding\(s\)/);

    const json = await auditVerify(h, ['--key', first.key, '--json'], 1);
    const result = JSON.parse(json.stdout) as { findings: Array<{ kind: string; chain?: string; seq?: number; object?: string }> };
    assert.deepEqual(
      result.findings.map((f) => [f.kind, f.chain, f.seq]),
      [['altered', first.key, 4]],
      'scoped to the key: only its own finding',
    );
  });

  test('a re-hashed event, a removed event, an altered seal and an altered batch object are named too', async () => {
    const s = h.paperclip.services;
    const third = claims[2]!;
    const events = await s.audit.events(third.key);
    // Rewrite event 2 and recompute its hash: its own hash checks out, the link and the seal do not.
    const forged = sealEvent(
      third.key,
      2,
      events[0]!.hash,
      { type: events[1]!.type, actor: 'ops-shared', data: events[1]!.data },
      events[1]!.at,
    );
    await editStoredEvent(s, third.key, 2, { actor: 'ops-shared', hash: forged.hash });
    await s.clients.db.send(new DeleteCommand({ TableName: s.table('audit'), Key: { chain: third.key, seq: 5 } }));
    await s.evidence.put(batchKey({ tenant: 'acme', taskId: TASK }, 'list.json'), '[]', 'application/json');

    const result = await verifyKey(s, third.key);
    const named = result.findings.map((f) => `${f.kind} ${f.seq ?? ''} ${f.object ?? ''}`.trim());
    assert.ok(named.includes('altered 2'), named.join('; '));
    assert.ok(named.includes('removed 5'), named.join('; '));
    assert.ok(
      result.findings.every((f) => f.chain === third.key || f.object?.includes(third.key)),
      'nothing about other keys',
    );

    const batch = await verifyBatch(s, { tenant: 'acme', taskId: TASK });
    assert.ok(batch.findings.some((f) => f.kind === 'altered' && f.object === batchKey({ tenant: 'acme', taskId: TASK }, 'list.json')));

    const sealKey = batchKey({ tenant: 'acme', taskId: TASK }, 'seal.json');
    const seal = JSON.parse((await s.evidence.get(sealKey))!.toString());
    seal.items[0].objects = seal.items[0].objects.filter((o: { name: string }) => o.name !== 'before.png');
    await s.evidence.put(sealKey, JSON.stringify(seal), 'application/json');
    const afterSeal = await verifyBatch(s, { tenant: 'acme', taskId: TASK });
    assert.ok(
      afterSeal.findings.some((f) => f.kind === 'altered' && f.object === sealKey),
      'a seal edited to hide an object is caught',
    );
  });

  test('a finished item whose chain was rewritten and re-hashed, then re-sealed by an appended item_sealed, is a finding', async () => {
    const s = h.paperclip.services;
    const taskId = 'T-evidence-launder';
    await h.control.reset({ seed: 6, tenants: [{ id: 'acme', pending: 1, overcharge: 0, processed: 0 }] });
    const run = await h.paperclip.runBatch({ taskId, tenant: 'acme' });
    assert.equal(run.summary?.counts.done, 1, run.error);
    const batch = { tenant: 'acme', taskId };
    assert.deepEqual((await verifyBatch(s, batch)).findings, []);
    const [claim] = await s.claims.byTask(taskId);
    const key = claim!.key;

    // With write access to the audit table: drop the readback, change who wrote, re-hash the whole chain...
    const forged = await rewriteChainWithoutReadback(s, key, (e) => (e.type === 'write_started' ? 'ops-shared' : e.actor));
    // ...and append one correctly chained item_sealed that vouches for the new hashes.
    const seal = JSON.parse((await s.evidence.get(batchKey(batch, 'seal.json')))!.toString());
    const entry = seal.items.find((i: { key: string }) => i.key === key);
    await s.audit.append(`batch:acme:${taskId}`, {
      type: 'item_sealed',
      actor: claim!.identity,
      data: { basedOn: seal.sealHash, items: [{ ...entry, events: forged.map((e) => e.hash) }], batchObjects: [] },
    });
    assert.equal(checkChain(key, await s.audit.events(key)).length, 0, 'the forged chain is internally consistent');

    const result = await verifyBatch(s, batch);
    const named = result.findings.map((f) => f.detail);
    assert.ok(
      result.findings.some(
        (f) => f.kind === 'altered' && f.chain === `batch:acme:${taskId}` && /item_sealed.*rewrites event hashes/.test(f.detail),
      ),
      named.join('; '),
    );
    assert.ok(
      result.findings.some((f) => f.chain === key && f.kind === 'altered'),
      `the rewritten events are named against the original seal: ${named.join('; ')}`,
    );
    await auditVerify(h, ['--key', key], 1);
  });

  test('a write run outside a batch is sealed when it closes: an edit to its record is tampering, not "unsealed"; a forged re-seal is named', async () => {
    const s = h.paperclip.services;
    const task = await writeOfOnePendingBill(7, 'T-evidence-standalone');
    const run = await h.runTask(task);
    assert.equal(run.output['outcome'], 'done', JSON.stringify(run.output));
    const key = String(run.output['key'] ?? (await s.claims.byTask(task.taskId))[0]?.key);
    const batch = { tenant: 'acme', taskId: task.taskId };
    const clean = await verifyBatch(s, batch);
    assert.deepEqual(clean.findings, [], 'the untouched write verifies clean: it has its own seal');
    const sealChain = await s.audit.events(`${key}:seal`);
    assert.equal(sealChain.length, 1);
    assert.deepEqual(
      (sealChain[0]!.data['item'] as { events: string[] }).events,
      (await s.audit.events(key)).map((e) => e.hash),
    );

    // With write access to the bucket: the record is edited to name someone else.
    const recordKey = evidenceKey({ ...batch, key }, 'record.json');
    const record = JSON.parse((await s.evidence.get(recordKey))!.toString());
    await s.evidence.put(recordKey, JSON.stringify({ ...record, identity: 'ops-shared' }, null, 2), 'application/json');
    const edited = await verifyKey(s, key);
    assert.ok(
      edited.findings.some((f) => f.kind === 'altered' && f.object === recordKey),
      edited.findings.map((f) => f.detail).join('; '),
    );
    assert.ok(!edited.findings.some((f) => f.kind === 'unsealed'));
    const cliRun = await auditVerify(h, ['--key', key], 1);
    assert.match(cliRun.stdout, /record\.json altered/);

    // With write access to the table as well: its chain rewritten and re-hashed, and a second seal appended that vouches for it.
    const forged = await rewriteChainWithoutReadback(s, key);
    const entry = sealChain[0]!.data['item'] as Record<string, unknown>;
    const item = { ...entry, events: [...forged.map((e) => e.hash), 'f'.repeat(64)] };
    const body = { tenant: 'acme', taskId: task.taskId, item };
    await appendUnchecked(s, `${key}:seal`, {
      type: 'sealed',
      actor: 'paperclip',
      data: { ...body, sealHash: standaloneSealHash(body as never) },
    });
    const laundered = await verifyKey(s, key);
    const named = laundered.findings.map((f) => f.detail).join('; ');
    assert.ok(
      laundered.findings.some((f) => f.chain === `${key}:seal` && /rewrites event hashes/.test(f.detail)),
      named,
    );
    assert.ok(
      laundered.findings.some((f) => f.chain === key && f.kind === 'altered'),
      named,
    );
  });

  test('a write run outside a batch that finds its bill already handled ends stale, and is sealed like any other outcome', async () => {
    const s = h.paperclip.services;
    await h.control.reset({ seed: 9, tenants: [{ id: 'acme', pending: 0, overcharge: 0, processed: 1 }] });
    const billNo = (await h.control.state()).bills.find((b) => b.tenant === 'acme' && b.status === 'PROCESSED')!.billNo;
    const journalBefore = (await h.control.journal()).length;
    const task = { taskId: 'T-evidence-stale', tenant: 'acme', billNo, action: 'mark_processed' };
    const executionArn = await h.startTask(task);
    const run = await h.waitForExecution(executionArn);
    assert.equal(run.output['outcome'], 'stale', JSON.stringify(run.output));
    assert.equal((await h.control.journal()).length, journalBefore, 'nothing written');
    const [claim] = await s.claims.byTask(task.taskId);
    assert.equal(claim?.status, 'STALE');
    const key = claim!.key;
    const batch = { tenant: 'acme', taskId: task.taskId };
    const record = JSON.parse((await s.evidence.get(evidenceKey({ ...batch, key }, 'record.json')))!.toString());
    assert.equal(record.outcome, 'stale');
    assert.equal(record.reason, run.output['reason'], 'the record gives the reason the workflow gave');
    assert.equal(record.preState, 'PROCESSED');
    assert.equal(record.executionArn, claim!.owner);
    assert.deepEqual(
      record.evidence.map((e: { key: string }) => e.key.split('/').at(-1)),
      ['before.png'],
    );
    assert.ok(await s.evidence.exists(evidenceKey({ ...batch, key }, 'index.html')), 'the item has its page');
    const sealChain = await s.audit.events(`${key}:seal`);
    assert.equal(sealChain.length, 1, 'the item has a seal of its own');
    assert.deepEqual((await verifyBatch(s, batch)).findings, [], 'and verifies clean');

    // Step Functions retries the closing task when its answer is lost: the repeat changes nothing that is sealed.
    const { events } = await s.clients.sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }));
    const closing = events!.filter((e) => e.type === 'LambdaFunctionScheduled').at(-1)!;
    const recordBefore = await s.evidence.get(evidenceKey({ ...batch, key }, 'record.json'));
    await completeHandler(JSON.parse(closing.lambdaFunctionScheduledEventDetails!.input!));
    assert.deepEqual(await s.evidence.get(evidenceKey({ ...batch, key }, 'record.json')), recordBefore, 'the same record');
    assert.equal((await s.audit.events(`${key}:seal`)).length, 1, 'no second seal');
    assert.deepEqual((await verifyBatch(s, batch)).findings, [], 'still clean after the repeat');
  });

  test('seals are anchored outside the table: a sealed history forged consistently in the table alone is named against its anchor', async () => {
    const s = h.paperclip.services;
    const task = await writeOfOnePendingBill(8, 'T-evidence-anchored');
    assert.equal((await h.runTask(task)).output['outcome'], 'done');
    const [claim] = await s.claims.byTask(task.taskId);
    const key = claim!.key;
    const batch = { tenant: 'acme', taskId: task.taskId };
    const [seal] = await s.audit.events(`${key}:seal`);
    assert.ok(await s.evidence.get(anchorKey('acme', seal!)), 'the item seal is anchored in the bucket');
    assert.deepEqual((await verifyBatch(s, batch)).findings, []);

    // With write access to the audit table only: the item's chain rewritten (its readback dropped) and its own
    // seal re-made over the new hashes, every hash recomputed. The table alone is consistent again.
    const forged = await rewriteChainWithoutReadback(s, key);
    const body = { tenant: 'acme', taskId: task.taskId, item: { ...(seal!.data['item'] as object), events: forged.map((e) => e.hash) } };
    const reSealed = sealEvent(
      `${key}:seal`,
      1,
      GENESIS_HASH,
      { type: 'sealed', actor: seal!.actor, data: { ...body, sealHash: standaloneSealHash(body as never) } },
      seal!.at,
    );
    await s.clients.db.send(new PutCommand({ TableName: s.table('audit'), Item: reSealed }));
    assert.equal(checkChain(key, await s.audit.events(key)).length, 0, 'the forged chain is internally consistent');

    const result = await verifyKey(s, key);
    const named = result.findings.map((f) => f.detail).join('; ');
    assert.ok(
      result.findings.some((f) => f.kind === 'altered' && f.chain === `${key}:seal` && /differs from its anchor/.test(f.detail)),
      named,
    );
    await auditVerify(h, ['--key', key], 1);
  });

  test("an object the seal left out as unreadable is verify's finding (UNREADABLE, exit 1), not a stray object", async () => {
    const s = h.paperclip.services;
    const task = await writeOfOnePendingBill(9, 'T-evidence-unreadable');
    assert.equal((await h.runTask(task)).output['outcome'], 'done');
    const [claim] = await s.claims.byTask(task.taskId);
    const batch = { tenant: 'acme', taskId: task.taskId };
    // A trace no record.json or audit event lists: never read to seal it (the bucket policy keeps the sealing role from
    // reading traces anyway), so the seal records it as unreadable instead of dropping the seal.
    const leftOut = evidenceKey(claim!, 'extra-trace.zip');
    await s.evidence.put(leftOut, 'listed nowhere', 'application/zip');
    const finished = await h.paperclip.iam.runAsFunction('summarize-batch', () =>
      finishBatchEvidence(s.forTenant({ tenant: batch.tenant }), batch, 'test'),
    );
    assert.deepEqual(
      finished.seal.unreadable?.map((u) => u.name),
      [`${claim!.key}/extra-trace.zip`],
    );

    const result = await verifyBatch(s, batch);
    assert.deepEqual(
      result.findings.map((f) => [f.kind, f.object]),
      [['unreadable', leftOut]],
      'named once, as what the seal said: left out, not added behind its back',
    );
    assert.match(result.findings[0]!.detail, /left out of the seal: a trace no record.json or audit event lists/);
    const scoped = await verifyKey(s, claim!.key);
    assert.deepEqual(
      scoped.findings.map((f) => f.kind),
      ['unreadable'],
      'and in the scope of its item',
    );
    const run = await auditVerify(h, ['--batch', `acme/${task.taskId}`], 1);
    assert.match(run.stdout, new RegExp(`UNREADABLE +${leftOut} was left out of the seal`));
  });

  test('chain checks name the exact event: edited, re-hashed, removed', () => {
    const chain = 'k-test';
    const one = sealEvent(chain, 1, GENESIS_HASH, { type: 'routed', actor: 'a', data: {} });
    const two = sealEvent(chain, 2, one.hash, { type: 'claimed', actor: 'a', data: {} });
    const three = sealEvent(chain, 3, two.hash, { type: 'completed', actor: 'a', data: {} });
    assert.deepEqual(checkChain(chain, [one, two, three]), []);
    assert.deepEqual(
      checkChain(chain, [one, { ...two, actor: 'b' }, three]).map((f) => [f.kind, f.seq]),
      [['altered', 2]],
    );
    const rehashed = sealEvent(chain, 2, one.hash, { type: 'claimed', actor: 'b', data: {} });
    assert.deepEqual(
      checkChain(chain, [one, rehashed, three]).map((f) => [f.kind, f.seq]),
      [['altered', 2]],
    );
    assert.deepEqual(
      checkChain(chain, [one, three]).map((f) => [f.kind, f.seq]),
      [['removed', 2]],
    );
  });
});
