import { test } from 'node:test';
import assert from 'node:assert/strict';
import { plainYuan } from '../../../backoffices/simulator/format.js';
import { confirmRowAction, loggedInPage, markedOnTheList, readRows, row, settledValue, startTestSimulator } from './helpers.js';
import { login, submitRefund, useTestSimulator, waitFor } from './helpers.js';

const t = useTestSimulator();

async function billStatus(billNo: string, sim = t): Promise<string | undefined> {
  return (await sim.ctl.state()).bills.find((b) => b.billNo === billNo)?.status;
}

async function openList(who = 'acme', query = 'tenant=acme') {
  const { context, page } = await loggedInPage(t.url, who, `/diff/list?${query}`);
  return { context, page };
}

/** The fault set, then acme's list open with 标记处理 confirmed on `billNo`. */
async function markWithFault(fault: Parameters<typeof t.ctl.setFaults>[0][number], billNo: string) {
  await t.ctl.setFaults([fault]);
  return markedOnTheList(t.url, billNo);
}

test('half_success: the success toast appears, yet nothing is committed', async () => {
  const { context, page } = await markWithFault({ kind: 'half_success', bill: 'ACME-202611-0004' }, 'ACME-202611-0004');
  assert.equal(await page.getByRole('status').textContent(), '操作成功');
  assert.equal(await row(page, 'ACME-202611-0004').locator('[data-field="status"]').textContent(), '处理中', 'the page lies');
  assert.deepEqual(await t.ctl.journal(), []);
  await page.reload();
  assert.equal((await readRows(page)).find((r) => r.billNo === 'ACME-202611-0004')?.status, 'PENDING');
  assert.equal(await billStatus('ACME-202611-0004'), 'PENDING');
  await context.close();
});

test('commit_then_timeout with ms: the mutation is journaled while the client sees the timeout toast', async () => {
  const { context, page } = await markWithFault({ kind: 'commit_then_timeout', bill: 'ACME-202611-0006', ms: 200 }, 'ACME-202611-0006');
  assert.equal(await page.getByRole('alert').textContent(), '请求超时，请稍后查看结果');
  const journal = await t.ctl.journal();
  assert.deepEqual(
    journal.map((e) => `${e.billNo}:${e.action}`),
    ['ACME-202611-0006:mark'],
  );
  assert.equal(journal[0]?.detail?.fault, 'commit_then_timeout');
  assert.equal(await settledValue(() => billStatus('ACME-202611-0006'), 'PROCESSED'), 'PROCESSED');
  const timing = (await t.ctl.timings()).find((r) => r.path === '/diff/ACME-202611-0006/mark');
  assert.equal(timing?.status, 504);
  await context.close();
});

test('commit_then_timeout without ms: the request hangs until the page gives up, the commit stays', async () => {
  // A second simulator whose pages give up after 800 ms instead of 10 s.
  const quick = await startTestSimulator({ clientTimeoutMs: 800 });
  try {
    await quick.ctl.setFaults([{ kind: 'commit_then_timeout', tenant: 'acme' }]);
    const { context, page } = await markedOnTheList(quick.url, 'ACME-202611-0007');
    assert.equal(await page.getByRole('alert').textContent(), '请求超时，请稍后查看结果');
    assert.deepEqual(
      (await quick.ctl.journal()).map((e) => e.billNo),
      ['ACME-202611-0007'],
    );
    const timing = await waitFor(
      async () => (await quick.ctl.timings()).find((r) => r.path === '/diff/ACME-202611-0007/mark'),
      (r) => r !== undefined,
    );
    assert.equal(timing?.status, 499, 'the client went away before any answer');
    await context.close();
  } finally {
    await quick.server.close();
  }
});

test('error_500: the failure toast, nothing committed', async () => {
  const { context, page } = await markWithFault({ kind: 'error_500', identity: 'svc-recon-acme' }, 'ACME-202611-0001');
  assert.equal(await page.getByRole('alert').textContent(), '操作失败：系统繁忙，请稍后再试');
  assert.deepEqual(await t.ctl.journal(), []);
  assert.equal(await billStatus('ACME-202611-0001'), 'PENDING');
  await context.close();
});

test('times is honoured: a fault that fires once fails the first write only', async () => {
  const { context, page } = await markWithFault({ kind: 'error_500', bill: 'ACME-202611-0008', times: 1 }, 'ACME-202611-0008');
  assert.match((await page.getByRole('alert').textContent()) ?? '', /^操作失败/);
  assert.deepEqual(await t.ctl.journal(), []);
  await confirmRowAction(page, 'ACME-202611-0008', '标记处理');
  assert.equal(await page.getByRole('status').textContent(), '操作成功');
  assert.equal((await t.ctl.journal()).length, 1);
  const [fault] = (await t.ctl.state()).faults;
  assert.deepEqual([fault?.fired, fault?.remaining], [1, 0]);
  await context.close();
});

test('redesign: list and detail lose the data-* contract but keep the business meaning and URLs', async () => {
  await t.ctl.setFaults([{ kind: 'redesign', tenant: 'acme' }]);
  const { context, page } = await openList('acme', 'tenant=acme&page=2');
  assert.equal(await page.locator('table#diff').count(), 0);
  assert.equal(await page.locator('[data-bill], [data-status], [data-field]').count(), 0);
  assert.equal(await page.getByRole('button', { name: '标记处理' }).count(), 0);
  // Same statuses, read the way a person (or a lower tier) would: by column header.
  const grid = page.getByRole('table', { name: '差异单列表' });
  const headers = await grid.getByRole('columnheader').allTextContents();
  assert.deepEqual(headers.slice(0, 3), ['状态', '单号', '金额']);
  const rows = await grid
    .getByRole('row')
    .evaluateAll((rs) => rs.slice(1).map((r) => Array.from(r.querySelectorAll('[role="cell"]'), (c) => c.textContent?.trim() ?? '')));
  const state = await t.ctl.state();
  const labels: Record<string, string> = { PENDING: '待处理', PROCESSING: '处理中', PROCESSED: '已处理', REFUNDED: '已退款' };
  assert.equal(rows.length, 6);
  for (const [status, billNo] of rows) {
    assert.equal(status, labels[state.bills.find((b) => b.billNo === billNo)?.status ?? '']);
  }

  // The redesigned buttons still write through the same endpoint.
  await page.getByRole('row').filter({ hasText: 'ACME-202611-0011' }).getByRole('button', { name: '标为已处理' }).click();
  await page.getByRole('dialog').getByRole('button', { name: '确定' }).click();
  assert.equal(await page.getByRole('status').textContent(), '提交成功');
  assert.deepEqual(
    (await t.ctl.journal()).map((e) => e.billNo),
    ['ACME-202611-0011'],
  );

  await page.goto(`${t.url}/diff/ACME-202611-0011`);
  assert.equal(await page.locator('[data-field]').count(), 0);
  assert.equal(await page.locator('dl').count(), 0);
  assert.match((await page.getByRole('row', { name: /处理状态/ }).textContent()) ?? '', /处理中|已处理/);

  // Another tenant is not redesigned, and removing the fault restores v1.
  await t.ctl.setFaults([]);
  await page.goto(`${t.url}/diff/list?tenant=acme`);
  assert.equal(await page.locator('table#diff tr[data-bill]').count(), 10);
  await context.close();
});

test('session_revoked: the next page shows 权限已变更 over the list; writes get 401 and commit nothing', async () => {
  const { context, page } = await openList();
  const other = await openList('globex', 'tenant=globex');
  await t.ctl.setFaults([{ kind: 'session_revoked', identity: 'svc-recon-acme', times: 1 }]);

  // The write from the already open page is refused.
  await confirmRowAction(page, 'ACME-202611-0001', '标记处理');
  assert.equal(await page.getByRole('alert').textContent(), '操作失败：权限已变更，请重新登录');
  const raw = await page.evaluate(async () => {
    const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
    const response = await fetch('/diff/ACME-202611-0002/mark', { method: 'POST', headers: { 'x-csrf-token': csrf } });
    return [response.status, await response.text()];
  });
  assert.deepEqual(raw, [401, '{"error":"session_revoked"}']);
  assert.deepEqual(await t.ctl.journal(), []);

  await page.goto(`${t.url}/diff/ACME-202611-0001`);
  const dialog = page.getByRole('dialog');
  assert.match((await dialog.textContent()) ?? '', /权限已变更，请重新登录/);
  assert.equal(await page.title(), '差异清单 - 供应商对账后台');

  // Another identity is unaffected.
  await confirmRowAction(other.page, 'GLOBEX-202611-0001', '标记处理');
  assert.equal(await other.page.getByRole('status').textContent(), '操作成功');

  // 重新登录 leads to the login page; the fault fired once, so a new session works.
  await dialog.getByRole('button', { name: '重新登录' }).click();
  await page.waitForURL(/\/login$/);
  await login(page, t.url, 'acme');
  await page.goto(`${t.url}/diff/list?tenant=acme`);
  assert.equal(await page.getByRole('dialog').count(), 0);
  await confirmRowAction(page, 'ACME-202611-0001', '标记处理');
  assert.equal(await page.getByRole('status').textContent(), '操作成功');
  assert.deepEqual(
    (await t.ctl.journal()).map((e) => e.billNo),
    ['GLOBEX-202611-0001', 'ACME-202611-0001'],
  );
  await context.close();
  await other.context.close();
});

test('permission_denied: reads work, writes (mark and refund) get 403 无权限执行该操作', async () => {
  await t.ctl.setFaults([{ kind: 'permission_denied', identity: 'svc-recon-acme' }]);
  const { context, page } = await openList('acme', 'tenant=acme&page=2');
  assert.equal((await readRows(page)).length, 6, 'reads still work');
  await confirmRowAction(page, 'ACME-202611-0011', '标记处理');
  assert.equal(await page.getByRole('alert').textContent(), '操作失败：无权限执行该操作');

  const bill = (await t.ctl.state()).bills.find((b) => b.billNo === 'ACME-202611-0013');
  await page.goto(`${t.url}/diff/ACME-202611-0013/refund`);
  const { form, response } = await submitRefund(page, plainYuan(bill!.amountCents), '重复扣款');
  assert.equal(response.status(), 403);
  assert.equal(await form.getByRole('alert').textContent(), '无权限执行该操作');
  assert.deepEqual(await t.ctl.journal(), []);
  await context.close();
});

test('slow_ms delays matching responses; async_delay_ms keeps one bill PROCESSING longer', async () => {
  await t.ctl.setFaults([
    { kind: 'slow_ms', bill: 'ACME-202611-0009', ms: 400 },
    { kind: 'async_delay_ms', bill: 'ACME-202611-0010', ms: 60_000 },
  ]);
  const { context, page } = await openList();
  await confirmRowAction(page, 'ACME-202611-0009', '标记处理');
  await confirmRowAction(page, 'ACME-202611-0010', '标记处理');
  assert.equal(await settledValue(() => billStatus('ACME-202611-0009'), 'PROCESSED'), 'PROCESSED');
  assert.equal(await billStatus('ACME-202611-0010'), 'PROCESSING', 'its settle delay is a minute');
  const timings = await t.ctl.timings();
  const slow = timings.find((r) => r.path === '/diff/ACME-202611-0009/mark');
  const list = timings.find((r) => r.path === '/diff/list?tenant=acme');
  assert.ok(slow && slow.durationMs >= 400, `slow write took ${slow?.durationMs} ms`);
  assert.equal(slow?.identity, 'svc-recon-acme');
  assert.equal(list?.status, 200);
  await context.close();
});

test('applied_then_reverted: the writer is shown the bill settled, then the vendor undoes it; everyone else reads the state before', async () => {
  const billNo = 'ACME-202611-0007';
  await t.ctl.setFaults([{ kind: 'applied_then_reverted', bill: billNo, times: 1 }]);
  const { context, page } = await openList();
  await confirmRowAction(page, billNo, '标记处理');
  await waitFor(
    () => billStatus(billNo),
    (s) => s === 'PROCESSED',
  );
  // The writer's next page shows the change landed; right after it the vendor reverts it.
  await page.reload();
  assert.equal((await readRows(page)).find((r) => r.billNo === billNo)?.status, 'PROCESSED');
  assert.equal(await billStatus(billNo), 'PENDING');
  const journal = await t.ctl.journal();
  assert.deepEqual(
    journal.map((e) => `${e.billNo}:${e.action}`),
    [`${billNo}:mark`, `${billNo}:revert`],
  );
  assert.equal(journal[1]?.detail?.revertedTo, 'PENDING');
  const other = await openList();
  assert.equal((await readRows(other.page)).find((r) => r.billNo === billNo)?.status, 'PENDING', 'another session reads it reverted');
  await other.context.close();
  await context.close();
});
