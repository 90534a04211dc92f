import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readdirSync, readFileSync } from 'node:fs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ClaimsStore } from '../../src/adapters/dynamodb/claims-store.js';
import { ApprovalsStore } from '../../src/adapters/dynamodb/approvals-store.js';
import { TakeoverStore } from '../../src/adapters/dynamodb/takeover-store.js';
import { AuditLog } from '../../src/adapters/dynamodb/audit-log.js';

/**
 * Every DynamoDB read is parsed with its record's schema (src/app/ports), not cast: an item of another shape is
 * refused at the read, naming the table, the item and the field. A client that answers every command with the
 * same page stands in for DynamoDB; the stores' conditional writes are covered on the emulator (test/takeover/store.test.ts, e2e).
 */
function answering(page: Record<string, unknown>): DynamoDBDocumentClient {
  // A document client by prototype (the SDK's paginators check for one) whose every command gets `page`.
  const client = Object.create(DynamoDBDocumentClient.prototype) as DynamoDBDocumentClient;
  Object.assign(client, { send: async () => page });
  return client;
}

const claim = {
  key: 'k-1',
  taskId: 'T-1',
  tenant: 'acme',
  billNo: 'B-1',
  action: 'mark_processed',
  identity: 'acme-bot',
  owner: 'arn:x',
  status: 'CLAIMED',
  version: 1,
  leaseUntil: '2026-12-05T00:00:00.000Z',
  attempts: 1,
  createdAt: '2026-12-05T00:00:00.000Z',
  updatedAt: '2026-12-05T00:00:00.000Z',
};

test('a claim read is parsed: a well-formed item comes back as the claim', async () => {
  assert.deepEqual(await new ClaimsStore(answering({ Item: claim }), 'pc-claims').get('k-1'), claim);
  assert.equal(await new ClaimsStore(answering({}), 'pc-claims').get('k-1'), undefined);
});

test('a claim item of another shape is refused at the read, naming the table, the key and the field', async () => {
  const store = new ClaimsStore(answering({ Item: { ...claim, version: '1' } }), 'pc-claims');
  await assert.rejects(store.get('k-1'), /pc-claims: item key=k-1 is not a stored record of this table: version: /);
  const unknownStatus = new ClaimsStore(answering({ Items: [{ ...claim, status: 'HALF_DONE' }] }), 'pc-claims');
  await assert.rejects(unknownStatus.byTask('T-1'), /pc-claims: item key=k-1 .*: status: /);
});

test('approval, takeover and audit reads are parsed too', async () => {
  await assert.rejects(
    new ApprovalsStore(answering({ Item: { approvalId: 'a-1' } }), 'pc-approvals').get('a-1'),
    /pc-approvals: item approvalId=a-1/,
  );
  await assert.rejects(
    new ApprovalsStore(answering({ Items: [{ approvalId: 'a-1', key: 'k-1' }] }), 'pc-approvals').byKey('k-1'),
    /pc-approvals/,
  );
  await assert.rejects(
    new TakeoverStore(answering({ Item: { key: 'k-1', status: 'OPEN' } }), 'pc-takeover').get('k-1'),
    /pc-takeover: item key=k-1/,
  );
  await assert.rejects(
    new AuditLog(answering({ Items: [{ chain: 'k-1', seq: 1 }] }), 'pc-audit').head('k-1'),
    /pc-audit: item chain=k-1 seq=1/,
  );
});

test('an audit event keeps an attribute nobody wrote, so the chain check sees it rather than the read dropping it', async () => {
  const event = { chain: 'k-1', seq: 1, at: 'now', prevHash: '0', hash: 'h', type: 'claimed', actor: 'a', data: {}, injected: 'x' };
  assert.deepEqual(await new AuditLog(answering({ Items: [event] }), 'pc-audit').head('k-1'), event);
});

test("a guarded transition's returned claim is parsed too, not taken as written", async () => {
  const store = new ClaimsStore(answering({ Attributes: { ...claim, status: 'HALF_DONE' } }), 'pc-claims');
  await assert.rejects(
    store.transition('k-1', { owner: 'arn:x', version: 1, from: ['CLAIMED'] }, 'WRITING'),
    /pc-claims: item key=k-1 .*: status: /,
  );
});

test('no DynamoDB adapter casts what it reads: every Item, Items, Attributes and Responses goes through its schema', () => {
  const folder = new URL('../../src/adapters/dynamodb/', import.meta.url);
  const casts = readdirSync(folder)
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) =>
      readFileSync(new URL(name, folder), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /\.(Item|Items|Attributes|Responses)\b[^;]*\bas [A-Z]/.test(line) ? [`${name}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
  assert.deepEqual(casts, []);
});
