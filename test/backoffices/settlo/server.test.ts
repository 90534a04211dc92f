import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import iconv from 'iconv-lite';
import { api, codeFor, signInByHttp, startTestSettlo, type TestSettlo } from './helpers.js';

/**
 * Settlo over HTTP, no browser: the password-then-TOTP login, the journal, the controls (undo window, rate
 * limit, top-level work area), the faults every back office shares, and the GBK export's bytes.
 */
describe('Settlo over HTTP', () => {
  let t: TestSettlo;
  before(async () => {
    t = await startTestSettlo();
  });
  after(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    await t.ctl.reset({ undoWindowSeconds: 1 });
  });

  test('login takes the password, then a TOTP code; a wrong code is refused on the code page; the portal needs the session', async () => {
    const noSession = await fetch(`${t.url}/portal`, { redirect: 'manual' });
    assert.equal(noSession.status, 302);
    assert.equal(noSession.headers.get('location'), '/login');
    const wrongPassword = await fetch(`${t.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'username=js-acme&password=nope',
    });
    assert.equal(wrongPassword.status, 401);
    assert.match(await wrongPassword.text(), /用户名或密码错误/);
    const wrongCode = String((Number(codeFor('acme')) + 500_000) % 1_000_000).padStart(6, '0');
    await assert.rejects(signInByHttp(t.url, 'acme', wrongCode), /code step answered 401/);
    const cookie = await signInByHttp(t.url, 'acme');
    const portal = await fetch(`${t.url}/portal`, { headers: { cookie } });
    const page = await portal.text();
    assert.equal(portal.status, 200);
    assert.match(page, /<iframe class="work" name="work" title="工作区" src="\/portal\/work\/bills">/);
    assert.match(page, /当前机构：华东结算中心/);
    const me = await api(t.url, cookie, 'GET', '/portal/api/me');
    assert.deepEqual(me.json, { user: 'js-acme', tenant: 'acme', tenantName: '华东结算中心' });
  });

  test('two tenants of 30 bills each; a user sees only its own, another tenant’s bill is not found', async () => {
    const cookie = await signInByHttp(t.url, 'acme');
    const list = await api(t.url, cookie, 'GET', '/portal/api/bills');
    assert.equal(list.json['total'], 30);
    const rows = list.json['rows'] as Array<{ billNo: string; status: string; kind: string }>;
    assert.ok(rows.every((r) => /^JS-1\d{4}$/.test(r.billNo)));
    assert.equal(rows.filter((r) => r.status === 'PENDING' && r.kind === 'mismatch').length, 26);
    assert.equal((await api(t.url, cookie, 'GET', '/portal/api/bills/JS-20001')).status, 404);
    const state = await t.ctl.state();
    assert.equal(state.bills.length, 60);
  });

  test('the undo window: 处理 is held, not sent; an early send is refused; an undone write is never sent; a sent one is journaled once', async () => {
    const cookie = await signInByHttp(t.url, 'acme');
    const held = await api(t.url, cookie, 'POST', '/portal/api/bills/JS-10001/settle', { note: '已与对方核对' });
    assert.equal(held.status, 202);
    assert.equal(held.json['undoSeconds'], 1);
    const id = String(held.json['writeId']);
    assert.deepEqual(await t.ctl.journal(), [], 'nothing committed while the write is held');
    assert.equal((await t.ctl.state()).pendingWrites, 1);
    const early = await api(t.url, cookie, 'POST', `/portal/api/writes/${id}/send`, {});
    assert.equal(early.status, 409);
    assert.equal(early.json['error'], 'undo_window_open');
    await sleep(1100);
    const sent = await api(t.url, cookie, 'POST', `/portal/api/writes/${id}/send`, {});
    assert.equal(sent.status, 200, JSON.stringify(sent.json));
    assert.equal((await api(t.url, cookie, 'POST', `/portal/api/writes/${id}/send`, {})).status, 409, 'a write is sent once');
    const journal = await t.ctl.journal();
    assert.equal(journal.length, 1);
    assert.deepEqual(
      { billNo: journal[0]?.billNo, action: journal[0]?.action, identity: journal[0]?.identity, tenant: journal[0]?.tenant },
      { billNo: 'JS-10001', action: 'settle', identity: 'js-acme', tenant: 'acme' },
    );
    assert.deepEqual(journal[0]?.detail?.['after'], { status: 'PROCESSING', note: '已与对方核对' });

    const second = await api(t.url, cookie, 'POST', '/portal/api/bills/JS-10002/settle', { note: '撤销测试' });
    const secondId = String(second.json['writeId']);
    assert.equal((await api(t.url, cookie, 'POST', `/portal/api/writes/${secondId}/undo`, {})).status, 200);
    await sleep(1100);
    const afterUndo = await api(t.url, cookie, 'POST', `/portal/api/writes/${secondId}/send`, {});
    assert.equal(afterUndo.json['error'], 'undone');
    // A page that left inside the window never sends: nothing but the first write is in the journal.
    await api(t.url, cookie, 'POST', '/portal/api/bills/JS-10003/settle', { note: '页面关闭' });
    await sleep(1100);
    assert.deepEqual(
      (await t.ctl.journal()).map((e) => e.billNo),
      ['JS-10001'],
    );
    await sleep(200);
    assert.equal((await t.ctl.state()).bills.find((b) => b.billNo === 'JS-10001')?.status, 'PROCESSED', 'settled after the review delay');
  });

  test('undoWindowSeconds 0 commits at once; refund is immediate and checks the typed amount', async () => {
    await t.ctl.reset({ undoWindowSeconds: 0 });
    const cookie = await signInByHttp(t.url, 'acme');
    const settled = await api(t.url, cookie, 'POST', '/portal/api/bills/JS-10004/settle', { note: '直接生效' });
    assert.equal(settled.status, 200);
    const overcharge = (await t.ctl.state()).bills.find((b) => b.tenant === 'acme' && b.kind === 'overcharge')!;
    const wrong = await api(t.url, cookie, 'POST', `/portal/api/bills/${overcharge.billNo}/refund`, { confirmAmount: '1.00' });
    assert.equal(wrong.status, 422);
    const typed = `${Math.floor(overcharge.amountCents / 100)}.${String(overcharge.amountCents % 100).padStart(2, '0')}`;
    assert.equal((await api(t.url, cookie, 'POST', `/portal/api/bills/${overcharge.billNo}/refund`, { confirmAmount: typed })).status, 200);
    assert.deepEqual(
      (await t.ctl.journal()).map((e) => [e.billNo, e.action]),
      [
        ['JS-10004', 'settle'],
        [overcharge.billNo, 'refund'],
      ],
    );
  });

  test('the rate limit: past max calls in the window a call is 429 with Retry-After, nothing written; the kit’s rate_limited fault too', async () => {
    await t.ctl.reset({ rateLimit: { max: 3, windowSeconds: 2 }, undoWindowSeconds: 0 });
    const cookie = await signInByHttp(t.url, 'acme');
    for (let i = 0; i < 3; i++) assert.equal((await api(t.url, cookie, 'GET', '/portal/api/me')).status, 200);
    const limited = await api(t.url, cookie, 'POST', '/portal/api/bills/JS-10005/settle', { note: '限流' });
    assert.equal(limited.status, 429);
    assert.match(String(limited.json['message']), /请求过于频繁/);
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter}`);
    assert.deepEqual(await t.ctl.journal(), []);
    await sleep(retryAfter * 1000);
    assert.equal((await api(t.url, cookie, 'POST', '/portal/api/bills/JS-10005/settle', { note: '限流后' })).status, 200, 'waited out');

    await t.ctl.reset({ rateLimit: { max: 0, windowSeconds: 1 } });
    const again = await signInByHttp(t.url, 'acme');
    await t.ctl.addFault({ kind: 'rate_limited', ms: 3000, times: 1, requests: 'writes' });
    const faulted = await api(t.url, again, 'POST', '/portal/api/bills/JS-10006/settle', { note: 'x' });
    assert.equal(faulted.status, 429);
    assert.equal(faulted.headers.get('retry-after'), '3');
  });

  test('the work area is for the frame: a top-level browser navigation goes to the portal unless allowTopLevelWork is on', async () => {
    const cookie = await signInByHttp(t.url, 'acme');
    const topLevel = { cookie, 'sec-fetch-dest': 'document' };
    const refused = await fetch(`${t.url}/portal/work/bills`, { headers: topLevel, redirect: 'manual' });
    assert.equal(refused.status, 302);
    assert.equal(refused.headers.get('location'), '/portal');
    const framed = await fetch(`${t.url}/portal/work/bills`, { headers: { cookie, 'sec-fetch-dest': 'iframe' }, redirect: 'manual' });
    assert.equal(framed.status, 200);
    await t.ctl.reset({ allowTopLevelWork: true });
    const again = await signInByHttp(t.url, 'acme');
    const allowed = await fetch(`${t.url}/portal/work/bills/JS-10001`, { headers: { cookie: again, 'sec-fetch-dest': 'document' } });
    assert.equal(allowed.status, 200);
    assert.match(await allowed.text(), /<dt>状态<\/dt><dd>待处理<\/dd>/);
  });

  test('the export is a GBK CSV: its bytes decode as GBK to the Chinese header, and are not UTF-8', async () => {
    const cookie = await signInByHttp(t.url, 'acme');
    const response = await fetch(`${t.url}/portal/api/export.csv?q=JS-1000`, { headers: { cookie } });
    assert.equal(response.headers.get('content-type'), 'text/csv; charset=GBK');
    assert.match(response.headers.get('content-disposition') ?? '', /attachment; filename="settlement-acme.csv"/);
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 4)], [0xb5, 0xa5, 0xba, 0xc5], '单号 in GBK');
    const text = iconv.decode(bytes, 'gbk');
    const lines = text.split('\r\n');
    assert.equal(lines[0], '单号,所属机构,对方单位,类型,金额,状态,处理说明,更新时间');
    assert.match(lines[1] ?? '', /^JS-10001,华东结算中心,.+,金额差异,\d+\.\d{2},待处理,,2026-/);
    assert.equal(lines.length, 11, 'nine bills match JS-1000, a header and the final CRLF');
    assert.throws(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes), 'not UTF-8');
  });

  test('faults: half_success writes nothing; commit_then_timeout commits and times out; session_revoked ends the session', async () => {
    await t.ctl.reset({ undoWindowSeconds: 0 });
    const cookie = await signInByHttp(t.url, 'acme');
    await t.ctl.setFaults([
      { kind: 'half_success', bill: 'JS-10001' },
      { kind: 'commit_then_timeout', bill: 'JS-10002', ms: 50 },
      { kind: 'session_revoked', bill: 'JS-10003' },
    ]);
    const half = await api(t.url, cookie, 'POST', '/portal/api/bills/JS-10001/settle', { note: 'a' });
    assert.equal(half.status, 200);
    assert.equal((half.json['bill'] as { status: string }).status, 'PROCESSING');
    const hung = await api(t.url, cookie, 'POST', '/portal/api/bills/JS-10002/settle', { note: 'b' });
    assert.equal(hung.status, 504);
    assert.deepEqual(
      (await t.ctl.journal()).map((e) => [e.billNo, e.detail?.['fault']]),
      [['JS-10002', 'commit_then_timeout']],
    );
    assert.equal((await api(t.url, cookie, 'GET', '/portal/api/bills/JS-10003')).status, 401);
    assert.equal((await api(t.url, cookie, 'GET', '/portal/api/me')).status, 401, 'revoked for good');
  });
});
