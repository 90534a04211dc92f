import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AuditLog } from '../../src/adapters/dynamodb/audit-log.js';
import { GENESIS_HASH, hashEvent, sealEvent, verifyChain, type AuditEvent, type AuditEventBody } from '../../src/domain/audit-chain.js';
import {
  AUDIT_EVENT_TYPES,
  AuditEventInputSchema,
  AuditEventRejectedError,
  checkAuditEventInput,
  eventsOfType,
  evidenceOf,
  hasType,
  isEvent,
} from '../../src/domain/audit-events.js';
import { SAMPLE_DATA, sampleEvent } from '../support/audit-events.js';

const chainOf = (bodies: AuditEventBody[]): AuditEvent[] => {
  const events: AuditEvent[] = [];
  for (const body of bodies) events.push(sealEvent('k-acme_1', events.length + 1, events.at(-1)?.hash ?? GENESIS_HASH, body));
  return events;
};

/** A document client that records what it was sent; the audit log's check must refuse before any call. */
function recordingDb(): { db: DynamoDBDocumentClient; sent: unknown[] } {
  const sent: unknown[] = [];
  const db = {
    send: async (command: unknown) => {
      sent.push(command);
      return { Items: [] };
    },
  } as unknown as DynamoDBDocumentClient;
  return { db, sent };
}

function refused(input: unknown, field: string, message: RegExp): void {
  assert.throws(
    () => checkAuditEventInput(input),
    (error: unknown) => {
      assert.ok(error instanceof AuditEventRejectedError, String(error));
      assert.equal(error.field, field);
      assert.match(error.message, message);
      return true;
    },
  );
}

describe('the audit event union at append', () => {
  test('every type is in the one union, and a valid event of each passes unchanged (the same object: nothing to rehash)', () => {
    assert.equal(AuditEventInputSchema.options.length, AUDIT_EVENT_TYPES.length);
    assert.ok(AUDIT_EVENT_TYPES.length >= 30, `${AUDIT_EVENT_TYPES.length} types`);
    for (const type of AUDIT_EVENT_TYPES) {
      const event = sampleEvent(type);
      const before = JSON.stringify(event);
      assert.equal(checkAuditEventInput(event), event, type);
      assert.equal(JSON.stringify(event), before, `${type} is not altered by the check`);
    }
    // Both shapes of the two types with two writers.
    checkAuditEventInput({ type: 'rejected', actor: 'svc', data: SAMPLE_DATA.completed });
    checkAuditEventInput({
      type: 'sealed',
      actor: 'p',
      data: { tenant: 'acme', taskId: 'T-1', item: { key: 'k', events: [], objects: [] }, sealHash: 'b'.repeat(64) },
    });
  });

  test('a missing field is refused, naming it', () => {
    refused(
      { type: 'claimed', actor: 'svc', data: { owner: 'arn:x' } },
      'data.version',
      /audit event claimed: data\.version: .*not appended/,
    );
    refused({ type: 'compensated', actor: 'ops', data: { inverseKey: 'k-i', outcome: 'done' } }, 'data.reason', /data\.reason/);
    refused({ type: 'claimed', actor: '', data: SAMPLE_DATA.claimed }, 'actor', /actor/);
  });

  test('an unknown type is refused, naming the type and where types are declared', () => {
    refused(
      { type: 'x', actor: 'a', data: {} },
      'type',
      /audit event type "x" is not a known event type; add it to src\/domain\/audit-events\.ts/,
    );
    refused({ actor: 'a', data: {} }, 'type', /audit event type undefined/);
    refused({ type: 'toString', actor: 'a', data: {} }, 'type', /"toString" is not a known event type/);
  });

  test('a field the event does not have, or a field of the wrong type, is refused, naming it', () => {
    refused(
      { type: 'claimed', actor: 'svc', data: { ...SAMPLE_DATA.claimed, note: 'x' } },
      'data.note',
      /claimed: data\.note: not a field of claimed events/,
    );
    refused(
      { type: 'readback', actor: 'svc', data: { ...SAMPLE_DATA.readback, degraded: 'no' } },
      'data.degraded',
      /data\.degraded: .*boolean/,
    );
    refused({ type: 'write_started', actor: 'svc', data: { tier: 'desktop' } }, 'data.tier', /data\.tier/);
  });

  test('the audit log refuses a bad event before it reads or writes anything', async () => {
    const { db, sent } = recordingDb();
    const log = new AuditLog(db, 'audit');
    const bad = { type: 'claimed', actor: 'svc', data: { owner: 'arn:x' } } as never;
    await assert.rejects(log.append('k-acme_1', bad), /data\.version/);
    await assert.rejects(log.appendAfter('k-acme_1', undefined, { type: 'x' } as never), /audit event type "x"/);
    assert.deepEqual(sent, []);
    // A good one goes through to the table as given.
    const stored = await log.append('k-acme_1', sampleEvent('claimed'));
    assert.deepEqual(stored.data, SAMPLE_DATA.claimed);
    assert.equal(sent.length, 2, 'one head query, one put');
  });
});

describe('reading stored events', () => {
  test('readers narrow on the type and get the stored object itself, typed', () => {
    const events = chainOf([sampleEvent('routed', { item: { tier: 'browser', compensates: 'k-acme_0' } }), sampleEvent('compensated')]);
    const [routed] = eventsOfType(events, 'routed');
    assert.equal(routed, events[0]);
    assert.equal(routed?.data.item?.compensates, 'k-acme_0');
    assert.equal(eventsOfType(events, 'compensated')[0]?.data.inverseKey, SAMPLE_DATA.compensated.inverseKey);
    assert.deepEqual(eventsOfType(events, 'claimed'), []);
  });

  test('older shapes still verify: fields missing, extra, or of another type, and types no longer written', () => {
    const events = chainOf([
      { type: 'routed', actor: 'svc', data: { item: { tier: 'browser' } } }, // fields missing: still a routed event
      { type: 'readback', actor: 'svc', data: { verdict: 'confirmed', legacy: 1 } }, // an extra field: still a readback
      { type: 'readback', actor: 'svc', data: { verdict: 7 } }, // a field of another type: not read as a readback
      { type: 'retired_event', actor: 'svc', data: { anything: true } }, // a type no longer written
    ]);
    const hashes = events.map((e) => e.hash);
    assert.equal(isEvent(events[0], 'routed'), true);
    assert.equal(isEvent(events[1], 'readback'), true);
    assert.equal(isEvent(events[2], 'readback'), false);
    assert.deepEqual(
      eventsOfType(events, 'readback').map((e) => e.seq),
      [2],
    );
    // Whatever the readers made of them, the chain verifies over the stored bytes, unchanged.
    assert.equal(verifyChain(events), undefined);
    assert.deepEqual(
      events.map((e) => {
        const { hash: _hash, ...body } = e;
        return hashEvent(body);
      }),
      hashes,
    );
    // A presence check counts an event of any shape.
    assert.equal(events.filter((e) => hasType(e, 'readback')).length, 2);
  });

  test('evidence is read from the events that record it, objects and the takeover queue keys alike', () => {
    const events = chainOf([
      sampleEvent('readback', { evidence: [{ key: 'evidence/a/readback.png', sha256: 'c'.repeat(64) }] }),
      sampleEvent('takeover', { evidence: ['evidence/a/after.png'] }),
      sampleEvent('claimed'),
    ]);
    assert.deepEqual(events.map(evidenceOf), [[{ key: 'evidence/a/readback.png', sha256: 'c'.repeat(64) }], ['evidence/a/after.png'], []]);
  });

  test('the type test is part of the type-check (tsc -p tsconfig.json includes test/)', () => {
    const config = JSON.parse(readFileSync('tsconfig.json', 'utf8')) as { include: string[] };
    assert.ok(config.include.includes('test'));
    assert.ok(existsSync('test/domain/audit-events.types.ts'));
    assert.match(
      readFileSync('test/domain/audit-events.types.ts', 'utf8'),
      /@ts-expect-error: `attestation` is a field of compensation_started/,
    );
  });
});
