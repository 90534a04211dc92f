import { test } from 'node:test';
import assert from 'node:assert/strict';
import { confirmRowAction, loggedInPage, markedOnTheList, login, newContext, readRows, row, useTestSimulator, waitFor } from './helpers.js';
import { setTimeout as sleep } from 'node:timers/promises';

const t = useTestSimulator();

test('login page follows the contract; bad credentials get 401 and an alert; good ones land on the list', async () => {
  const context = await newContext();
  const page = await context.newPage();
  const first = await page.goto(`${t.url}/login`);
  assert.equal(first?.status(), 200);
  assert.equal(await page.title(), '登录 - 供应商对账后台');
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await page.getByLabel('密码').getAttribute('type'), 'password');

  await page.getByLabel('用户名').fill('svc-recon-acme');
  await page.getByLabel('密码').fill('wrong');
  const [bad] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/login') && r.request().method() === 'POST'),
    page.getByRole('button', { name: '登录' }).click(),
  ]);
  assert.equal(bad.status(), 401);
  assert.equal(await page.getByRole('alert').textContent(), '用户名或密码错误');

  await page.getByLabel('密码').fill('pw-acme-2026');
  await page.getByRole('button', { name: '登录' }).click();
  await page.waitForURL(`${t.url}/diff/list`);
  assert.equal(await page.getByTestId('current-user').textContent(), '当前账号：svc-recon-acme');
  const cookie = (await context.cookies()).find((c) => c.name === 'sid');
  assert.ok(cookie?.httpOnly, 'sid is HttpOnly');
  assert.equal(cookie?.sameSite, 'Lax');
  await context.close();
});

test('a page asked for without a session returns there after login; 退出 ends the session', async () => {
  const context = await newContext();
  const page = await context.newPage();
  await page.goto(`${t.url}/diff/list?tenant=acme&status=PENDING`);
  assert.match(page.url(), /\/login\?next=/);
  await page.getByLabel('用户名').fill('svc-recon-acme');
  await page.getByLabel('密码').fill('pw-acme-2026');
  await page.getByRole('button', { name: '登录' }).click();
  await page.waitForURL(/\/diff\/list\?tenant=acme&status=PENDING$/);
  assert.equal((await readRows(page)).length, 10);

  await page.getByRole('link', { name: '退出' }).click();
  await page.waitForURL(`${t.url}/login`);
  assert.equal((await t.ctl.state()).sessions, 0);
  await page.goto(`${t.url}/diff/list`);
  assert.match(page.url(), /\/login\?next=/);
  await context.close();
});

test('an idle session expires after the TTL and the next page asks to log in again', async () => {
  await t.ctl.reset({ sessionTtlSeconds: 1 });
  const { context, page } = await loggedInPage(t.url, 'acme');
  await sleep(1300);
  await page.goto(`${t.url}/diff/list?tenant=acme`);
  assert.equal(page.url(), `${t.url}/login?expired=1`);
  assert.equal(await page.getByRole('alert').textContent(), '会话已过期，请重新登录');
  await context.close();
});

test('the list needs a tenant, pages by bill number, and filters by status', async () => {
  const { context, page } = await loggedInPage(t.url, 'acme');
  assert.equal(await page.title(), '差异清单 - 供应商对账后台');
  assert.equal(await page.getByText('请选择租户后点击查询').count(), 1);
  assert.equal(await page.locator('table#diff').count(), 0);

  await page.getByRole('button', { name: '查询' }).click();
  const table = page.getByRole('table', { name: '差异清单' });
  assert.deepEqual(await table.locator('thead th').allTextContents(), ['单号', '租户', '差异类型', '金额', '状态', '更新时间', '操作']);
  const firstPage = await readRows(page);
  assert.deepEqual(
    firstPage.map((r) => r.billNo),
    Array.from({ length: 10 }, (_, i) => `ACME-202611-${String(i + 1).padStart(4, '0')}`),
  );
  assert.ok(firstPage.every((r) => r.status === 'PENDING' && r.statusLabel === '待处理'));
  assert.ok(
    firstPage.every((r) => /^¥[\d,]+\.\d{2}$/.test(r.amount)),
    'amounts look like ¥1,234.50',
  );
  const pager = page.getByRole('navigation', { name: '分页' });
  assert.match((await pager.textContent()) ?? '', /第 1\/2 页，共 16 条/);

  await pager.getByRole('link', { name: '下一页' }).click();
  const secondPage = await readRows(page);
  assert.deepEqual(
    secondPage.map((r) => `${r.billNo}:${r.status}`),
    ['0011:PENDING', '0012:PENDING', '0013:PENDING', '0014:PROCESSED', '0015:PROCESSED', '0016:PROCESSED'].map((s) => `ACME-202611-${s}`),
  );
  assert.equal(await row(page, 'ACME-202611-0013').locator('[data-field="kind"]').textContent(), '重复扣款');
  assert.equal(await row(page, 'ACME-202611-0013').getByRole('button', { name: '退款' }).count(), 1);
  assert.equal(await row(page, 'ACME-202611-0014').getByRole('button', { name: '撤销处理' }).count(), 1);
  assert.equal(await row(page, 'ACME-202611-0014').getByRole('button', { name: '标记处理' }).count(), 0);
  assert.match((await pager.textContent()) ?? '', /第 2\/2 页，共 16 条/);

  await page.getByLabel('状态').selectOption('PROCESSED');
  await page.getByRole('button', { name: '查询' }).click();
  const processed = await readRows(page);
  assert.deepEqual(
    processed.map((r) => r.statusLabel),
    ['已处理', '已处理', '已处理'],
  );
  assert.match((await pager.textContent()) ?? '', /第 1\/1 页，共 3 条/);

  await page.goto(`${t.url}/diff/list?tenant=acme&page_size=5&page=4`);
  assert.deepEqual(
    (await readRows(page)).map((r) => r.billNo),
    ['ACME-202611-0016'],
  );
  const bad = await page.goto(`${t.url}/diff/list?tenant=acme&page_size=500`);
  assert.equal(bad?.status(), 400);
  assert.match((await page.getByRole('alert').textContent()) ?? '', /page_size/);
  await context.close();
});

test('tenant scope: a tenant identity sees only its tenant, the shared ops account sees all', async () => {
  const { context, page } = await loggedInPage(t.url, 'acme');
  assert.deepEqual(await page.getByLabel('租户').locator('option').allTextContents(), ['acme']);
  const denied = await page.goto(`${t.url}/diff/list?tenant=globex`);
  assert.equal(denied?.status(), 403);
  assert.equal(await page.getByText('无权访问该租户').count(), 1);
  assert.equal(await page.locator('tr[data-bill]').count(), 0);
  const detail = await page.goto(`${t.url}/diff/GLOBEX-202611-0001`);
  assert.equal(detail?.status(), 403);
  await context.close();

  const ops = await newContext();
  const opsPage = await ops.newPage();
  await login(opsPage, t.url, 'ops');
  assert.deepEqual(await opsPage.getByLabel('租户').locator('option').allTextContents(), ['acme', 'globex', 'initech']);
  await opsPage.getByLabel('租户').selectOption('globex');
  await opsPage.getByRole('button', { name: '查询' }).click();
  assert.equal((await readRows(opsPage))[0]?.billNo, 'GLOBEX-202611-0001');
  await ops.close();
});

test('bill numbers in URLs must match the pattern exactly; anything else is a 404', async () => {
  const { context, page } = await loggedInPage(t.url, 'ops');
  for (const path of [
    "/diff/ACME-202611-0001'",
    '/diff/acme-202611-0001',
    '/diff/ACME-202611-00011',
    '/diff/%3Cscript%3E',
    '/diff/ACME-202611-9999',
  ]) {
    const response = await page.goto(`${t.url}${path}`);
    assert.equal(response?.status(), 404, path);
  }
  const post = await page.evaluate(async (u) => (await fetch(`${u}/diff/ACME-202611-0001x/mark`, { method: 'POST' })).status, t.url);
  assert.equal(post, 404);
  assert.deepEqual(await t.ctl.journal(), []);
  await context.close();
});

test('标记处理: modal, confirm, toast, 处理中 at once, one journal entry, 已处理 after settling', async () => {
  await t.ctl.reset({ asyncDelayMs: 1500 });
  const { context, page } = await loggedInPage(t.url, 'acme');
  await page.getByRole('button', { name: '查询' }).click();
  const target = row(page, 'ACME-202611-0003');
  await target.getByRole('button', { name: '标记处理' }).click();
  const dialog = page.getByRole('dialog', { name: '确认标记处理' });
  assert.equal(await dialog.getAttribute('aria-modal'), 'true');
  const text = await dialog.textContent();
  assert.match(text ?? '', /ACME-202611-0003/);
  assert.match(text ?? '', /¥[\d,]+\.\d{2}/);

  await dialog.getByRole('button', { name: '取消' }).click();
  assert.equal(await page.getByRole('dialog').count(), 0);
  assert.deepEqual(await t.ctl.journal(), [], 'cancel sends nothing');

  await target.getByRole('button', { name: '标记处理' }).click();
  await page.getByRole('dialog').getByRole('button', { name: '确认' }).click();
  assert.equal(await page.getByRole('status').textContent(), '操作成功');
  assert.equal(await page.getByRole('dialog').count(), 0);
  assert.equal(await target.locator('[data-field="status"]').textContent(), '处理中');

  const journal = await t.ctl.journal();
  assert.equal(journal.length, 1);
  assert.equal(journal[0]?.billNo, 'ACME-202611-0003');
  assert.equal(journal[0]?.action, 'mark');
  assert.equal(journal[0]?.identity, 'svc-recon-acme');
  assert.equal(journal[0]?.via, 'ui');
  assert.equal(journal[0]?.sessionId, (await context.cookies()).find((c) => c.name === 'sid')?.value);

  // An independent read: a fresh query shows 处理中 until the vendor settles, then 已处理.
  await page.reload();
  const processing = (await readRows(page)).find((r) => r.billNo === 'ACME-202611-0003');
  assert.equal(processing?.status, 'PROCESSING');
  const settled = await waitFor(
    async () => {
      await page.reload();
      return (await readRows(page)).find((r) => r.billNo === 'ACME-202611-0003');
    },
    (r) => r?.status === 'PROCESSED',
  );
  assert.equal(settled?.statusLabel, '已处理');
  await context.close();
});

test('the vendor is not idempotent: two confirmed clicks on the same bill make two journal entries', async () => {
  const { context, page } = await markedOnTheList(t.url, 'ACME-202611-0001');
  // The stale page still shows the button; the server accepts the second mark on a PROCESSING bill.
  await confirmRowAction(page, 'ACME-202611-0001', '标记处理');
  await page.getByRole('status').waitFor();
  const journal = await t.ctl.journal();
  assert.deepEqual(
    journal.map((e) => `${e.billNo}:${e.action}`),
    ['ACME-202611-0001:mark', 'ACME-202611-0001:mark'],
  );
  const bill = (await t.ctl.state()).bills.find((b) => b.billNo === 'ACME-202611-0001');
  assert.equal(bill?.records.length, 2);
  await context.close();
});
