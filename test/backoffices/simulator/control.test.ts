import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SimulatorControl, SimulatorControlError } from '../../../backoffices/simulator/control-client.js';
import { startSimulator, type RunningSimulator } from '../../../backoffices/simulator/server.js';
import { CONTROL_TOKEN, startTestSimulator, type TestSimulator } from './helpers.js';

let t: TestSimulator;

before(async () => {
  t = await startTestSimulator();
});
after(async () => {
  await t.server.close();
});

async function raw(path: string, body?: string, token: string | null = CONTROL_TOKEN) {
  const response = await fetch(`${t.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(token === null ? {} : { 'x-sim-token': token }), 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, body: (await response.json()) as { message?: string; issues?: { path: string }[] } };
}

async function login(base: string, username: string, password: string): Promise<string> {
  const response = await fetch(`${base}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password }).toString(),
    redirect: 'manual',
  });
  assert.equal(response.status, 302);
  return /sid=([^;]+)/.exec(response.headers.get('set-cookie') ?? '')?.[1] ?? '';
}

test('without a control token the control API does not exist', async () => {
  const plain: RunningSimulator = await startSimulator();
  try {
    for (const path of ['/__sim/state', '/__sim/journal', '/__sim/reset']) {
      const response = await fetch(`${plain.url}${path}`, {
        method: path.endsWith('reset') ? 'POST' : 'GET',
        headers: { 'x-sim-token': 'anything' },
      });
      assert.equal(response.status, 404, path);
    }
  } finally {
    await plain.close();
  }
});

test('with a token, a missing or wrong x-sim-token is refused', async () => {
  assert.equal((await raw('/__sim/state', undefined, null)).status, 401);
  assert.equal((await raw('/__sim/state', undefined, 'wrong')).status, 401);
  await assert.rejects(
    new SimulatorControl(t.url, 'wrong').state(),
    (e: unknown) => e instanceof SimulatorControlError && e.status === 401,
  );
});

test('bad control input gets a 400 naming the field and changes nothing', async () => {
  await t.ctl.reset();
  await t.ctl.setFaults([{ kind: 'slow_ms', ms: 1, bill: 'ACME-202611-0001' }]);
  await fetch(`${t.url}/api/v1/bills/ACME-202611-0001/notes`, {
    method: 'POST',
    headers: { authorization: 'Bearer tok-acme', 'idempotency-key': 'k1', 'content-type': 'application/json' },
    body: '{"text":"before"}',
  });
  const before = { journal: await t.ctl.journal(), state: await t.ctl.state() };
  const cases: [string, string, RegExp][] = [
    ['/__sim/faults', '{"faults":[{"kind":"meltdown"}]}', /faults\.0\.kind/],
    ['/__sim/faults', '{"faults":[{"kind":"redesign"},{"kind":"slow_ms"}]}', /faults\.1\.ms: ms is required for a slow_ms fault/],
    ['/__sim/faults', '{"faults":[{"kind":"redesign","bill":"ACME-1"}]}', /faults\.0\.bill/],
    ['/__sim/faults', '{"faults":[{"kind":"redesign","times":0}]}', /faults\.0\.times/],
    ['/__sim/faults', '{"fault":[]}', /faults|fault/],
    ['/__sim/faults/add', '{"kind":"error_500","colour":"red"}', /colour/],
    ['/__sim/faults/add', 'not json', /body: not valid JSON/],
    ['/__sim/reset', '{"seed":-1}', /body\.seed/],
    ['/__sim/reset', '{"tenants":[{"id":"acme"},{"id":"acme"}]}', /tenants\.1\.id: duplicate tenant id "acme"/],
    ['/__sim/reset', '{"tenants":[{"id":"Acme-1"}]}', /tenants\.0\.id/],
    ['/__sim/reset', '{"tenants":[]}', /tenants/],
    ['/__sim/reset', '{"asyncDelayMs":"fast"}', /body\.asyncDelayMs/],
  ];
  for (const [path, body, message] of cases) {
    const answer = await raw(path, body);
    assert.equal(answer.status, 400, `${path} ${body}`);
    assert.match(answer.body.message ?? '', message, `${path} ${body}`);
  }
  assert.deepEqual(await t.ctl.journal(), before.journal);
  assert.deepEqual(await t.ctl.state(), before.state);
  // The client refuses the same mistakes before sending.
  await assert.rejects(t.ctl.addFault({ kind: 'slow_ms' }), /ms is required/);
});

test('reset: same seed gives identical bills, another seed other amounts, everything else cleared', async () => {
  await t.ctl.reset({ seed: 7 });
  const first = (await t.ctl.state()).bills;
  const sid = await login(t.url, 'svc-recon-acme', 'pw-acme-2026');
  assert.ok(sid);
  await t.ctl.addFault({ kind: 'redesign' });
  await fetch(`${t.url}/api/v1/bills/ACME-202611-0001/notes`, {
    method: 'POST',
    headers: { authorization: 'Bearer tok-acme', 'idempotency-key': 'k1', 'content-type': 'application/json' },
    body: '{"text":"a note"}',
  });
  const dirty = await t.ctl.state();
  assert.equal(dirty.sessions, 1);
  assert.equal(dirty.faults.length, 1);
  assert.equal((await t.ctl.journal()).length, 1);
  assert.ok((await t.ctl.timings()).length > 0);

  await t.ctl.reset({ seed: 7 });
  const again = await t.ctl.state();
  assert.deepEqual(again.bills, first);
  assert.equal(again.sessions, 0);
  assert.deepEqual(again.faults, []);
  assert.deepEqual(await t.ctl.journal(), []);
  assert.deepEqual(await t.ctl.timings(), []);
  assert.ok(again.bills.every((b) => b.notes.length === 0));
  // The old session is gone: a page now redirects to the expired notice.
  const page = await fetch(`${t.url}/diff/list`, { headers: { cookie: `sid=${sid}` }, redirect: 'manual' });
  assert.equal(page.headers.get('location'), '/login?expired=1');
  // The same key is free again after a reset.
  const note = await fetch(`${t.url}/api/v1/bills/ACME-202611-0001/notes`, {
    method: 'POST',
    headers: { authorization: 'Bearer tok-acme', 'idempotency-key': 'k1', 'content-type': 'application/json' },
    body: '{"text":"another"}',
  });
  assert.equal(note.status, 201);

  await t.ctl.reset({ seed: 8 });
  const other = (await t.ctl.state()).bills;
  assert.deepEqual(
    other.map((b) => b.billNo),
    first.map((b) => b.billNo),
    'numbering does not depend on the seed',
  );
  assert.notDeepEqual(
    other.map((b) => b.amountCents),
    first.map((b) => b.amountCents),
  );
});

test('reset with tenants: custom counts, bill numbers per tenant, accounts follow the tenants', async () => {
  await t.ctl.reset({ tenants: [{ id: 'hooli', pending: 3, overcharge: 2, processed: 0 }] });
  const bills = (await t.ctl.state()).bills;
  assert.deepEqual(
    bills.map((b) => `${b.billNo}:${b.kind}:${b.status}`),
    [
      'HOOLI-202611-0001:mismatch:PENDING',
      'HOOLI-202611-0002:mismatch:PENDING',
      'HOOLI-202611-0003:mismatch:PENDING',
      'HOOLI-202611-0004:overcharge:PENDING',
      'HOOLI-202611-0005:overcharge:PENDING',
    ],
  );
  assert.ok(await login(t.url, 'svc-recon-hooli', 'pw-hooli-2026'));
  const gone = await fetch(`${t.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'username=svc-recon-acme&password=pw-acme-2026',
    redirect: 'manual',
  });
  assert.equal(gone.status, 401);
  await t.ctl.reset();
  assert.equal((await t.ctl.state()).bills.length, 48, 'an empty reset returns to the startup tenants');
});

test('a reset takes well under 100 ms', async () => {
  const roundTrips: number[] = [];
  const inServer: number[] = [];
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    const result = await t.ctl.reset({ seed: i });
    roundTrips.push(performance.now() - started);
    inServer.push(result.durationMs);
  }
  roundTrips.sort((a, b) => a - b);
  const median = roundTrips[5]!;
  assert.ok(median < 100, `median reset round trip ${median.toFixed(1)} ms`);
  assert.ok(Math.max(...inServer) < 100, `slowest in-server reset ${Math.max(...inServer)} ms`);
});

test('timings record every vendor request with method, path, status and identity, not control calls', async () => {
  await t.ctl.reset();
  const sid = await login(t.url, 'svc-recon-acme', 'pw-acme-2026');
  await fetch(`${t.url}/diff/list?tenant=acme`, { headers: { cookie: `sid=${sid}` } });
  await fetch(`${t.url}/api/v1/bills?tenant=globex`, { headers: { authorization: 'Bearer tok-acme' } });
  const timings = await t.ctl.timings();
  assert.deepEqual(
    timings.map((r) => `${r.method} ${r.path} ${r.status} ${r.identity ?? '-'}`),
    [
      'POST /login 302 svc-recon-acme',
      'GET /diff/list?tenant=acme 200 svc-recon-acme',
      'GET /api/v1/bills?tenant=globex 403 svc-recon-acme',
    ],
  );
  assert.ok(timings.every((r) => !Number.isNaN(Date.parse(r.startedAt)) && r.durationMs >= 0));
  // Each request names its vendor session (the login the one it started), so two logins of one identity are told apart.
  assert.deepEqual(
    timings.map((r) => r.sessionId),
    [sid, sid, undefined],
  );
});
