import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { plainYuan } from '../../../backoffices/simulator/format.js';
import { confirmRowAction, loggedInPage, login, markedOnTheList, newContext, readRows, row, settledValue } from './helpers.js';
import { submitRefund, useTestSimulator } from './helpers.js';
import { setTimeout as sleep } from 'node:timers/promises';

const t = useTestSimulator();

async function billStatus(billNo: string): Promise<string | undefined> {
  return (await t.ctl.state()).bills.find((b) => b.billNo === billNo)?.status;
}

test('撤销处理 goes back to PENDING through PROCESSING; a stale page gets a 409 explained in the toast', async () => {
  await t.ctl.reset({ asyncDelayMs: 1500 });
  const context = await newContext();
  const stale = await context.newPage();
  await login(stale, t.url, 'acme');
  await stale.goto(`${t.url}/diff/list?tenant=acme&page=2`);
  const fresh = await context.newPage();
  await fresh.goto(`${t.url}/diff/list?tenant=acme&page=2`);

  await row(fresh, 'ACME-202611-0014').getByRole('button', { name: '撤销处理' }).click();
  assert.equal(await fresh.getByRole('dialog', { name: '确认撤销处理' }).count(), 1);
  await fresh.getByRole('dialog').getByRole('button', { name: '确认' }).click();
  assert.equal(await fresh.getByRole('status').textContent(), '操作成功');
  assert.equal(await billStatus('ACME-202611-0014'), 'PROCESSING');
  assert.equal(await settledValue(() => billStatus('ACME-202611-0014'), 'PENDING'), 'PENDING');

  // The stale page still offers 撤销处理; the vendor refuses it now that the bill is PENDING.
  await confirmRowAction(stale, 'ACME-202611-0014', '撤销处理');
  assert.equal(await stale.getByRole('alert').textContent(), '操作失败：该差异单尚未处理，无法撤销');
  const journal = await t.ctl.journal();
  assert.deepEqual(
    journal.map((e) => `${e.billNo}:${e.action}`),
    ['ACME-202611-0014:unmark'],
  );
  await context.close();
});

test('writes without the page CSRF token, or outside the identity scope, are refused and commit nothing', async () => {
  const { context, page } = await loggedInPage(t.url, 'acme');
  // (A plain loop: tsx would wrap a named helper in __name, which the page does not have.)
  const statuses = await page.evaluate(
    async (requests) => {
      const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
      const out: unknown[] = [];
      for (const [path, token] of requests) {
        const headers: Record<string, string> = token === null ? {} : { 'x-csrf-token': token === 'page' ? csrf : token };
        const response = await fetch(path, { method: 'POST', headers });
        out.push([response.status, await response.json()]);
      }
      return out;
    },
    [
      ['/diff/ACME-202611-0001/mark', null],
      ['/diff/ACME-202611-0001/mark', 'forged'],
      ['/diff/GLOBEX-202611-0001/mark', 'page'],
      ['/diff/ACME-202611-0001/unmark', 'page'],
    ] as [string, string | null][],
  );
  assert.deepEqual(statuses, [
    [403, { error: 'csrf_invalid', message: '页面已过期，请刷新后重试' }],
    [403, { error: 'csrf_invalid', message: '页面已过期，请刷新后重试' }],
    [403, { error: 'forbidden', message: '无权访问该租户' }],
    [409, { error: 'conflict', message: '该差异单尚未处理，无法撤销' }],
  ]);
  assert.deepEqual(await t.ctl.journal(), []);
  assert.equal(await billStatus('ACME-202611-0001'), 'PENDING');
  await context.close();
});

test('详情 opens the detail page in a new tab with the dl contract and the 处理记录', async () => {
  const { context, page } = await markedOnTheList(t.url, 'ACME-202611-0005');
  const [tab] = await Promise.all([
    context.waitForEvent('page'),
    row(page, 'ACME-202611-0005').getByRole('link', { name: '详情' }).click(),
  ]);
  await tab.waitForLoadState();
  assert.equal(await tab.title(), '差异详情 ACME-202611-0005 - 供应商对账后台');
  const field = (name: string) => tab.locator(`dd[data-field="${name}"]`).textContent();
  assert.equal(await field('bill_no'), 'ACME-202611-0005');
  assert.equal(await field('tenant'), 'acme');
  assert.equal(await field('kind'), '金额不符');
  assert.match((await field('amount')) ?? '', /^¥[\d,]+\.\d{2}$/);
  assert.match((await field('status')) ?? '', /^(处理中|已处理)$/);
  assert.match((await field('updated_at')) ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  const records = tab.getByRole('table', { name: '处理记录' }).locator('tbody tr');
  assert.equal(await records.count(), 1);
  const cells = await records.first().locator('td').allTextContents();
  assert.equal(cells[1], '标记处理');
  assert.equal(cells[2], 'svc-recon-acme');
  await context.close();
});

test('refund: the iframe form and its native confirm; dismissed sends nothing, accepted commits one refund', async () => {
  const { context, page } = await loggedInPage(t.url, 'acme', '/diff/list?tenant=acme&page=2');
  const bill = (await t.ctl.state()).bills.find((b) => b.billNo === 'ACME-202611-0013');
  assert.equal(bill?.kind, 'overcharge');
  await row(page, 'ACME-202611-0013').getByRole('button', { name: '退款' }).click();
  await page.waitForURL(`${t.url}/diff/ACME-202611-0013/refund`);
  assert.equal(await page.title(), '退款申请 - 供应商对账后台');
  const form = page.frameLocator('iframe[title="退款表单"]');
  const amount = plainYuan(bill!.amountCents);
  await form.getByLabel('退款金额').fill(amount);
  await form.getByLabel('退款原因').fill('重复扣款，原路退回');

  const messages: string[] = [];
  page.once('dialog', (d) => {
    messages.push(d.message());
    void d.dismiss();
  });
  await form.getByRole('button', { name: '提交退款' }).click();
  await sleep(300);
  assert.deepEqual(messages, [`确认向 ACME-202611-0013 退款 ¥${amount}？此操作不可撤销`]);
  assert.deepEqual(await t.ctl.journal(), [], 'a dismissed confirm sends nothing');

  page.once('dialog', (d) => void d.accept());
  await form.getByRole('button', { name: '提交退款' }).click();
  await form.getByRole('status').waitFor();
  assert.equal(await form.getByRole('status').textContent(), '退款申请已提交');
  const journal = await t.ctl.journal();
  assert.equal(journal.length, 1);
  assert.equal(journal[0]?.action, 'refund');
  assert.equal(journal[0]?.detail?.amountCents, bill!.amountCents);
  assert.equal(await settledValue(() => billStatus('ACME-202611-0013'), 'REFUNDED'), 'REFUNDED');

  await page.goto(`${t.url}/diff/list?tenant=acme&page=2`);
  assert.equal((await readRows(page)).find((r) => r.billNo === 'ACME-202611-0013')?.statusLabel, '已退款');
  assert.equal(await row(page, 'ACME-202611-0013').getByRole('button', { name: '退款' }).count(), 0);
  await context.close();
});

test('a refund for another amount is refused with 422 and commits nothing', async () => {
  const { context, page } = await loggedInPage(t.url, 'acme', '/diff/ACME-202611-0013/refund');
  const { form, response } = await submitRefund(page, '0.01', '试一下');
  assert.equal(response.status(), 422);
  assert.equal(await form.getByRole('alert').textContent(), '退款金额与差异金额不符');
  assert.deepEqual(await t.ctl.journal(), []);
  assert.equal(await billStatus('ACME-202611-0013'), 'PENDING');
  await context.close();
});

test('下载对账文件 downloads the tenant settlement CSV with BOM, header and live statuses', async () => {
  const { context, page } = await markedOnTheList(t.url, 'ACME-202611-0002');
  await settledValue(() => billStatus('ACME-202611-0002'), 'PROCESSED');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: '下载对账文件' }).click()]);
  assert.equal(download.suggestedFilename(), 'settlement-acme.csv');
  const bytes = await readFile((await download.path())!);
  assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 BOM');
  const lines = bytes.toString('utf8').slice(1).trim().split(/\r\n/);
  assert.equal(lines[0], 'bill_no,tenant,kind,amount_cents,status,updated_at');
  assert.equal(lines.length, 17);
  const state = await t.ctl.state();
  for (const line of lines.slice(1)) {
    const [billNo, tenant, kind, cents, status, updatedAt] = line.split(',');
    const bill = state.bills.find((b) => b.billNo === billNo);
    assert.deepEqual(
      [tenant, kind, Number(cents), status, updatedAt],
      [bill?.tenant, bill?.kind, bill?.amountCents, bill?.status, bill?.updatedAt],
    );
  }
  assert.match(lines.find((l) => l.startsWith('ACME-202611-0002,')) ?? '', /,PROCESSED,/);

  const denied = await page.goto(`${t.url}/settlement.csv?tenant=globex`);
  assert.equal(denied?.status(), 403);
  await context.close();
});
