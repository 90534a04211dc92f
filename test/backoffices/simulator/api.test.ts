import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestSimulator } from './helpers.js';

const t = useTestSimulator();

interface Answer {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

async function call(path: string, init: { token?: string; method?: string; body?: string; key?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.key !== undefined) headers['idempotency-key'] = init.key;
  const response = await fetch(`${t.url}${path}`, { method: init.method ?? 'GET', headers, body: init.body });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, headers: response.headers, text };
}

test('reads: bearer token required, scoped to the identity tenants, one bill or a tenant list', async () => {
  assert.equal((await call('/api/v1/bills?tenant=acme')).status, 401);
  assert.equal((await call('/api/v1/bills?tenant=acme', { token: 'tok-nobody' })).status, 401);
  const list = await call('/api/v1/bills?tenant=acme', { token: 'tok-acme' });
  assert.equal(list.status, 200);
  assert.equal(list.body.bills.length, 16);
  assert.deepEqual(Object.keys(list.body.bills[0]).sort(), ['amountCents', 'billNo', 'kind', 'notes', 'status', 'tenant', 'updatedAt']);
  assert.equal(list.body.bills[0].billNo, 'ACME-202611-0001');

  const denied = await call('/api/v1/bills?tenant=globex', { token: 'tok-acme' });
  assert.equal(denied.status, 403);
  assert.equal((await call('/api/v1/bills/GLOBEX-202611-0001', { token: 'tok-acme' })).status, 403);
  assert.equal((await call('/api/v1/bills?tenant=globex', { token: 'tok-ops' })).status, 200);
  const missing = await call('/api/v1/bills', { token: 'tok-acme' });
  assert.equal(missing.status, 400);
  assert.match(missing.body.message, /^tenant:/);

  const one = await call('/api/v1/bills/ACME-202611-0013', { token: 'tok-acme' });
  assert.equal(one.status, 200);
  assert.equal(one.body.kind, 'overcharge');
  assert.equal(one.body.status, 'PENDING');
  assert.equal((await call('/api/v1/bills/ACME-202611-9999', { token: 'tok-acme' })).status, 404);
  assert.equal((await call("/api/v1/bills/ACME-202611-0001'%20or%201=1", { token: 'tok-acme' })).status, 404);
});

test('notes: Idempotency-Key required; a replay answers the same note without a new journal entry', async () => {
  const path = '/api/v1/bills/ACME-202611-0001/notes';
  const body = JSON.stringify({ text: '已与客户核对，差异为运费' });
  const noKey = await call(path, { token: 'tok-acme', method: 'POST', body });
  assert.equal(noKey.status, 400);
  assert.match(noKey.body.message, /Idempotency-Key/);

  const first = await call(path, { token: 'tok-acme', method: 'POST', body, key: 'K-1' });
  assert.equal(first.status, 201);
  assert.deepEqual(Object.keys(first.body).sort(), ['billNo', 'noteId', 'text']);
  assert.equal(first.body.billNo, 'ACME-202611-0001');

  const replay = await call(path, { token: 'tok-acme', method: 'POST', body, key: 'K-1' });
  assert.equal(replay.status, 200);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(replay.body, first.body);

  const reused = await call(path, { token: 'tok-acme', method: 'POST', body: JSON.stringify({ text: '别的内容' }), key: 'K-1' });
  assert.equal(reused.status, 422);
  const otherBill = await call('/api/v1/bills/ACME-202611-0002/notes', { token: 'tok-acme', method: 'POST', body, key: 'K-1' });
  assert.equal(otherBill.status, 422);

  const journal = await t.ctl.journal();
  assert.equal(journal.length, 1);
  assert.deepEqual(
    { action: journal[0]?.action, via: journal[0]?.via, sessionId: journal[0]?.sessionId, identity: journal[0]?.identity },
    { action: 'note', via: 'api', sessionId: 'api', identity: 'svc-recon-acme' },
  );
  const bill = await call('/api/v1/bills/ACME-202611-0001', { token: 'tok-acme' });
  assert.deepEqual(
    bill.body.notes.map((n: { text: string }) => n.text),
    ['已与客户核对，差异为运费'],
  );
});

test('notes: invalid JSON or fields get a 400 naming the field; nothing is recorded', async () => {
  const path = '/api/v1/bills/ACME-202611-0001/notes';
  const cases: [string, RegExp][] = [
    ['{not json', /^body: not valid JSON/],
    ['{}', /body\.text/],
    [JSON.stringify({ text: '' }), /body\.text: text must not be empty/],
    [JSON.stringify({ text: 'x'.repeat(501) }), /body\.text: text must be at most 500/],
    [JSON.stringify({ text: 7 }), /body\.text: text must be a string/],
    [JSON.stringify({ text: 'ok', extra: true }), /extra/],
  ];
  for (const [i, [body, message]] of cases.entries()) {
    const answer = await call(path, { token: 'tok-acme', method: 'POST', body, key: `bad-${i}` });
    assert.equal(answer.status, 400, body);
    assert.match(answer.body.message, message);
  }
  const scope = await call('/api/v1/bills/GLOBEX-202611-0001/notes', { token: 'tok-acme', method: 'POST', body: '{"text":"x"}', key: 'k' });
  assert.equal(scope.status, 403);
  assert.deepEqual(await t.ctl.journal(), []);
});

test('API faults: error_500 records nothing; commit_then_timeout records, and the same key then replays', async () => {
  const path = '/api/v1/bills/ACME-202611-0003/notes';
  const body = JSON.stringify({ text: '核对完成' });
  await t.ctl.setFaults([{ kind: 'error_500', times: 1 }]);
  assert.equal((await call(path, { token: 'tok-acme', method: 'POST', body, key: 'K-9' })).status, 500);
  assert.deepEqual(await t.ctl.journal(), []);

  await t.ctl.setFaults([{ kind: 'commit_then_timeout', ms: 50, times: 1 }]);
  assert.equal((await call(path, { token: 'tok-acme', method: 'POST', body, key: 'K-9' })).status, 504);
  assert.equal((await t.ctl.journal()).length, 1);
  const retry = await call(path, { token: 'tok-acme', method: 'POST', body, key: 'K-9' });
  assert.equal(retry.status, 200);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.equal((await t.ctl.journal()).length, 1, 'the retry with the same key did not write twice');
});

test('the settlement file is also served to a bearer token, scoped like the list', async () => {
  const ok = await call('/settlement.csv?tenant=acme', { token: 'tok-acme' });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('content-disposition'), 'attachment; filename="settlement-acme.csv"');
  assert.match(ok.headers.get('content-type') ?? '', /^text\/csv; charset=utf-8/);
  assert.equal(ok.text.split('\r\n')[0], 'bill_no,tenant,kind,amount_cents,status,updated_at');
  assert.equal((await call('/settlement.csv?tenant=globex', { token: 'tok-acme' })).status, 403);
  assert.equal((await call('/settlement.csv?tenant=acme', { token: 'bogus' })).status, 401);
});
