import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { closeSharedBrowser, sharedBrowser } from '../../src/browser/chromium.js';
import { resetDialogPolicy, runSteps } from '../../src/browser/executor.js';
import { pageSession, type OpenedSession } from '../../src/browser/identity-sessions.js';
import { SitePack } from '../../src/sitepack/schema.js';
import { checkSession, readItem, readList, readOwnership, type ReadContext } from '../../src/browser/vendor-reads.js';
import { startFixtures, type Fixtures } from './fixtures.js';

/**
 * The site-pack v2 patterns against small pages shaped like real back offices
 * (test/sitepack/fixtures.ts), read through the same functions a batch, a
 * readback and `sitepack probe` use. One browser for the file.
 */

const STATUSES = { 待处理: 'PENDING', 已处理: 'PROCESSED', 审核中: 'REVIEW', open: 'PENDING', closed: 'PROCESSED' };

function pack(overrides: Record<string, unknown>): SitePack {
  return SitePack.parse({
    version: 2,
    site: 'fixture',
    description: 'pattern fixtures',
    itemKeyPattern: '^N-\\d{4}$',
    login: {
      url: '/app#/login',
      steps: [{ action: 'click', target: { role: 'button', name: '登录' } }],
      loggedIn: { text: 'x' },
      probeUrl: '/api/bills',
    },
    sessionLost: { urlContains: ['#/login'], httpStatus: [401], loginForm: { label: '密码' }, texts: ['会话已过期'] },
    statuses: STATUSES,
    kinds: { 金额不符: 'mismatch', 重复扣款: 'overcharge' },
    list: {
      steps: [{ action: 'open', url: '/table' }],
      rows: { table: {} },
      key: { column: '单号' },
      fields: { status: { column: '状态' } },
    },
    actions: {},
    ...overrides,
  });
}

describe('site pack v2 patterns', () => {
  let fx: Fixtures;
  let context: BrowserContext;
  let session: OpenedSession;
  const ctx = (p: SitePack): ReadContext => ({ pack: p, baseUrl: fx.url, tenant: 'acme', timeoutMs: 3000 });

  before(async () => {
    fx = await startFixtures();
    context = await (await sharedBrowser()).newContext({ acceptDownloads: true });
    const page = await context.newPage();
    session = pageSession(context, page);
  });
  after(async () => {
    await context?.close();
    await closeSharedBrowser();
    await fx?.close();
  });

  test('a table read by column headers, in any column order, across pages by the next control', async () => {
    const p = pack({
      list: {
        steps: [{ action: 'open', url: '/table?page=1' }],
        rows: { table: { name: '对账单' } },
        key: { column: '单号' },
        fields: { status: { column: '状态' }, kind: { column: '类型' }, amount: { column: '金额', regex: '([\\d,.]+)' } },
        paging: { next: { role: 'link', name: '下一页' } },
      },
    });
    const rows = await readList(session, ctx(p));
    assert.deepEqual(
      rows.map((r) => [r.billNo, r.status, r.kind, r.amount]),
      [
        ['N-7001', 'PENDING', 'mismatch', '1,234.50'],
        ['N-7002', 'PROCESSED', 'overcharge', '88.00'],
        ['N-7003', 'REVIEW', 'mismatch', '10.00'],
      ],
    );
  });

  test('an ARIA grid rendered after load is waited for, not read empty', async () => {
    const p = pack({
      list: {
        steps: [{ action: 'open', url: '/grid' }],
        rows: { table: { name: '差异' } },
        key: { column: '编号' },
        fields: { status: { column: '当前状态' } },
      },
    });
    assert.deepEqual(
      (await readList(session, ctx(p))).map((r) => `${r.billNo}:${r.status}`),
      ['N-7001:PENDING', 'N-7002:PROCESSED', 'N-7003:REVIEW'],
    );
  });

  test('a header row of <td> cells inside <thead>, and a header row repeated in the body, are headers, not data rows', async () => {
    const p = pack({
      list: {
        steps: [{ action: 'open', url: '/td-headers' }],
        rows: { table: { name: '对账单' } },
        key: { column: '单号' },
        fields: { status: { column: '状态' }, amount: { column: '金额', regex: '([\\d,.]+)' } },
      },
    });
    assert.deepEqual(
      (await readList(session, ctx(p))).map((r) => `${r.billNo}:${r.status}:${r.amount}`),
      ['N-7001:PENDING:1,234.50', 'N-7002:PROCESSED:88.00', 'N-7003:REVIEW:10.00'],
    );
    const wrongColumn = pack({
      list: {
        steps: [{ action: 'open', url: '/td-headers' }],
        rows: { table: {} },
        key: { column: 'Bill' },
        fields: { status: { column: '状态' } },
      },
    });
    await assert.rejects(
      readList(session, ctx(wrongColumn)),
      /list\.key \(column "Bill"\) read nothing in row 1 .*the columns are "单号", "组织", "金额", "状态"/,
    );
  });

  test('role-less cards: rows around a label, values next to labels or by regex, "load more" until it is gone', async () => {
    const p = pack({
      list: {
        steps: [{ action: 'open', url: '/cards' }],
        rows: { around: { text: '单号' } },
        key: { label: '单号' },
        fields: { status: { label: '状态' }, owner: { regex: '归属 (\\S+)' } },
        paging: { loadMore: { role: 'button', name: '加载更多' } },
      },
    });
    const rows = await readList(session, ctx(p));
    assert.deepEqual(
      rows.map((r) => [r.billNo, r.status, r.owner]),
      [
        ['N-7001', 'PENDING', '华东一部'],
        ['N-7002', 'PROCESSED', '华东一部'],
        ['N-7003', 'REVIEW', '华北二部'],
      ],
    );
  });

  test('rows visible but not parsed fail loudly, naming the field, the locator and the page; no rows at all too', async () => {
    const unparsed = pack({
      list: {
        steps: [{ action: 'open', url: '/broken' }],
        rows: { table: {} },
        key: { column: '单号' },
        fields: { status: { column: 'State' } },
      },
    });
    await assert.rejects(
      readList(session, ctx(unparsed)),
      (error: Error) =>
        error.name === 'StructuredContractMissingError' &&
        /list\.key \(column "单号"\) read nothing in row 1 of the table on \/broken.*"Bill", "State"/.test(error.message),
    );
    const nothing = pack({
      list: {
        steps: [{ action: 'open', url: '/broken' }],
        rows: { items: { role: 'listitem' } },
        key: { regex: 'N-\\d+' },
        fields: { status: { regex: '待处理' } },
      },
    });
    await assert.rejects(
      readList(session, ctx(nothing)),
      /list\.rows \(items role=listitem\) found no row on \/broken; declare list\.empty/,
    );
  });

  test('hash routes: a 401 the app swallows, and its #/login route, are session loss', async () => {
    const p = pack({});
    await context.clearCookies();
    await runSteps(session.page, [{ action: 'open', url: '/app#/bills' }], {
      baseUrl: fx.url,
      params: {},
      sessionLost: p.sessionLost,
      traced: false,
    }).catch((error: Error) => assert.equal(error.name, 'SessionLostError'));
    await session.page.waitForLoadState('networkidle');
    await assert.rejects(checkSession(session.page, p), /\/api\/bills answered 401/);
    const fresh = await context.newPage();
    await fresh.goto(`${fx.url}/app#/login`);
    await assert.rejects(checkSession(fresh, pack({ sessionLost: { urlContains: ['#/login'] } })), /sent us to \/app#\/login/);
    await assert.rejects(
      checkSession(fresh, pack({ sessionLost: { loginForm: { label: '密码' } } })),
      /login form \(label="密码"\) shows again/,
    );
    await fresh.close();
    resetDialogPolicy(session.page);
  });

  test('readback sources: detail by label after a search, a cookie JSON endpoint with paths and a value map, CSV and XLSX exports', async () => {
    await context.addCookies([{ name: 'sid', value: 'ok', url: fx.url }]);
    const p = pack({
      detail: {
        steps: [
          { action: 'open', url: '/app#/bills' },
          { action: 'fill', target: { placeholder: '搜索单号' }, value: '{{billNo}}' },
          { action: 'click', target: { role: 'button', name: '搜索' } },
          { action: 'click', target: { role: 'link', name: '{{billNo}}', exact: true } },
        ],
        status: { label: '处理状态' },
        fields: { owner: { label: '所属组织' } },
      },
      api: {
        itemUrl: '/api/bills/{{billNo}}',
        auth: 'cookie',
        itemPath: 'data.bill',
        statusPath: 'state',
        ownerPath: 'owner.org',
        statusMap: { open: 'PENDING', closed: 'PROCESSED' },
      },
      export: { url: '/export.xlsx', keyColumn: '编号', statusColumn: '状态', ownerColumn: '组织' },
      ownership: { source: 'detail', field: 'owner', value: '{{org}}' },
    });
    const item = { ...ctx(p), billNo: 'N-7002', session, siteParams: { org: '华东一部' } };
    assert.deepEqual(await readItem('detail', item), { status: 'PROCESSED', owner: '华东一部', fields: { owner: '华东一部' } });
    assert.equal((await readItem('api', item)).status, 'PROCESSED');
    assert.equal((await readItem('api', item)).owner, '华东一部');
    assert.equal((await readItem('api', { ...item, billNo: 'N-0000' })).status, undefined, 'a 404 is "not shown", not an error');
    const xlsx = await readItem('export', item);
    assert.deepEqual([xlsx.status, xlsx.owner], ['PROCESSED', '华东一部']);
    const csv = await readItem('export', {
      ...item,
      pack: pack({ export: { url: '/export.csv', keyColumn: '编号', statusColumn: '状态' } }),
    });
    assert.equal(csv.status, 'PROCESSED');
    assert.equal(csv.fields['备注'], '含逗号, 和 "引号"');
    const gbk = (encoding?: 'gbk') => ({
      ...item,
      pack: pack({ export: { url: '/export-gbk.csv', keyColumn: '编号', statusColumn: '状态', ownerColumn: '组织', encoding } }),
    });
    const legacy = await readItem('export', gbk('gbk'));
    assert.deepEqual([legacy.status, legacy.owner], ['PROCESSED', '华东一部'], 'a GBK export read with export.encoding: gbk');
    await assert.rejects(readItem('export', gbk()), (error: Error) => {
      assert.equal(error.name, 'StructuredContractMissingError', 'the pack does not match the file: not retried as a flaky read');
      assert.match(error.message, /declare export\.encoding \(one of utf-8, gbk, gb18030/);
      return true;
    });
    // The ownership read also carries the status it saw, with when, so routing's answer can serve as the pre-state.
    const { at, ...ownership } = await readOwnership(item);
    assert.deepEqual(ownership, { owner: '华东一部', expected: '华东一部', source: 'detail', listed: true, status: 'PROCESSED' });
    assert.ok(at && !Number.isNaN(Date.parse(at)), `read at an ISO time, got ${at}`);
    const other = await readOwnership({ ...item, billNo: 'N-7003' });
    assert.equal(other.owner, '华北二部', 'the cross-tenant owner is read, so routing can reject it');
  });

  test('a row menu, a role-less modal and a typed confirmation filled from a value extracted on the page', async () => {
    const p = pack({
      list: {
        steps: [{ action: 'open', url: '/app#/bills' }],
        rows: { items: { role: 'listitem' } },
        key: { regex: 'N-\\d{4}' },
        fields: { status: { regex: '(待处理|已处理|审核中)' } },
      },
    });
    const before = fx.journal.length;
    await runSteps(
      session.page,
      [
        { action: 'open', url: '/app#/bills' },
        { action: 'click', within: { row: true }, target: { role: 'button', name: '更多' } },
        { action: 'click', within: { menu: true }, target: { role: 'menuitem', name: '退款' } },
        {
          action: 'extract',
          within: { modal: { text: '确认退款' } },
          target: { text: '请输入金额' },
          as: 'shown_amount',
          mode: 'text',
          pattern: '¥([\\d,.]+)',
        },
        { action: 'fill', within: { modal: { text: '确认退款' } }, target: { placeholder: '输入金额' }, value: '{{shown_amount}}' },
        { action: 'click', within: { modal: { text: '确认退款' } }, target: { role: 'button', name: '确认' }, commit: true },
        { action: 'wait_for', target: { text: '确认退款' }, state: 'hidden', timeoutMs: 5000 },
      ],
      { baseUrl: fx.url, params: {}, row: { list: p.list, key: 'N-7003' }, sessionLost: p.sessionLost, traced: false },
    );
    assert.deepEqual(
      fx.journal.slice(before),
      [{ bill: 'N-7003', typed: '10.00' }],
      'the row chosen by its key, the amount typed as shown',
    );
  });
});
