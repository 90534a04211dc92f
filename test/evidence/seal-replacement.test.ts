import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AuditEvent } from '../../src/domain/audit-chain.js';
import { manifestOf, replacementProblem, sealedItem, type Seal, type SealedItem } from '../../src/evidence/seal.js';

/**
 * What a later `item_sealed` entry may change about an item its batch's seal
 * already holds. A finished item (DONE, FAILED, …) only grows its chain; an item
 * sealed in TAKEOVER waits for an operator, whose answer (a retry through the
 * guarded path, done, abandon) closes it later: its status and the objects the
 * retry stores anew may change, but only on a chain that grew from the sealed one.
 */
const hex = (c: string) => c.repeat(64);
const object = (name: string, c: string) => ({ name, sha256: hex(c), bytes: 10 });
const sealedTakeover: SealedItem = {
  key: 'k-acme_1',
  billNo: 'ACME-202611-0001',
  action: 'mark_processed',
  status: 'TAKEOVER',
  events: [hex('1'), hex('2')],
  objects: [object('after.png', 'a'), object('index.html', 'b'), object('readback.png', 'c'), object('record.json', 'd')],
};
const retried: SealedItem = {
  ...sealedTakeover,
  status: 'DONE',
  events: [hex('1'), hex('2'), hex('3'), hex('4')],
  objects: [
    object('after.png', 'e'),
    object('before-commit.png', 'f'),
    object('index.html', '0'),
    object('readback.png', '5'),
    object('record.json', '6'),
  ],
};

test('a takeover answered after the seal: the grown chain may change the status and the objects its retry stored anew', () => {
  assert.equal(replacementProblem(sealedTakeover, retried), undefined);
  assert.equal(replacementProblem(sealedTakeover, { ...retried, status: 'FAILED' }), undefined, 'abandoned by the operator');
  assert.equal(replacementProblem(sealedTakeover, { ...retried, status: 'TAKEOVER' }), undefined, 'the retry ended in takeover again');
});

test('a takeover entry still cannot be rewritten: sealed events, bill, action and objects stay, and the chain must grow', () => {
  assert.match(
    replacementProblem(sealedTakeover, { ...retried, events: [hex('1'), hex('9'), hex('3')] }) ?? '',
    /rewrites event hashes that were sealed/,
  );
  assert.match(replacementProblem(sealedTakeover, { ...retried, billNo: 'ACME-202611-0002' }) ?? '', /changes the sealed bill or action/);
  assert.match(
    replacementProblem(sealedTakeover, { ...retried, objects: retried.objects.filter((o) => o.name !== 'record.json') }) ?? '',
    /drops the sealed object record.json/,
  );
  // No resolution appended: a new status or a swapped record is a forgery, not an answer.
  assert.match(replacementProblem(sealedTakeover, { ...sealedTakeover, status: 'DONE' }) ?? '', /re-seals a finished item/);
  assert.match(
    replacementProblem(sealedTakeover, {
      ...sealedTakeover,
      objects: [...sealedTakeover.objects.slice(0, 3), object('record.json', '7')],
    }) ?? '',
    /re-seals a finished item whose chain did not grow/,
  );
});

test('a finished item is unchanged by this: its status stays and its objects are kept', () => {
  const done: SealedItem = { ...sealedTakeover, status: 'DONE' };
  assert.match(replacementProblem(done, { ...retried, status: 'FAILED' }) ?? '', /changes the sealed status DONE to FAILED/);
  assert.match(replacementProblem(done, retried) ?? '', /replaces the sealed object after.png/);
});

test('the manifest takes the answered entry; re-sealing an answered takeover makes its entry afresh', () => {
  const seal = { items: [sealedTakeover], batchObjects: [] } as unknown as Seal;
  const later = [
    { seq: 3, type: 'item_sealed', data: { basedOn: hex('a'), items: [retried], batchObjects: [] } },
  ] as unknown as AuditEvent[];
  const manifest = manifestOf(seal, 2, later);
  assert.deepEqual(manifest.refused, []);
  assert.equal(manifest.items.get(sealedTakeover.key)?.status, 'DONE');

  const events = retried.events.map((hash) => ({ hash })) as unknown as AuditEvent[];
  const objects = new Map(retried.objects.map((o) => [o.name, { ...o, key: o.name }]));
  const fresh = sealedItem(sealedTakeover.key, { events, objects, status: 'DONE' }, sealedTakeover, { pageRendered: true });
  assert.equal(fresh.status, 'DONE');
  assert.deepEqual(
    fresh.objects.map((o) => o.sha256),
    retried.objects.map((o) => o.sha256),
    'the objects as the folder holds them now',
  );
  const unanswered = sealedItem(sealedTakeover.key, { events: events.slice(0, 2), objects, status: 'DONE' }, sealedTakeover);
  assert.deepEqual(unanswered, sealedTakeover, 'a chain that did not grow keeps what was sealed');
});
