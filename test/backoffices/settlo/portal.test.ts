import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Frame, Page } from 'playwright-core';
import { closeSharedBrowser } from '../../../src/browser/chromium.js';
import { newBrowserContext } from '../../support/browser-back-office.js';
import { codeFor, startTestSettlo, type TestSettlo } from './helpers.js';

/**
 * Settlo in real Chromium: the portal's layout (top bar, menu, the work area in a frame), the password and
 * TOTP pages, AG Grid drawing only the rows in view, a Shoelace dialog, and the undo window as a person
 * meets it (the write lands only if the page stays open past the window and nobody pressed 撤销).
 */
describe('Settlo in the browser', () => {
  let t: TestSettlo;
  before(async () => {
    t = await startTestSettlo({ undoWindowSeconds: 2 });
  });
  after(async () => {
    await closeSharedBrowser();
    await t?.close();
  });

  async function signedIn(total = 30): Promise<{ page: Page; work: Frame; close(): Promise<void> }> {
    const context = await newBrowserContext('zh-CN');
    const page = await context.newPage();
    await page.goto(`${t.url}/portal`);
    await page.getByLabel('用户名').fill('js-acme');
    await page.getByLabel('密码').fill('Settlo-acme-2026');
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByLabel('动态口令').fill('000000' === codeFor('acme') ? '111111' : '000000');
    await page.getByRole('button', { name: '验证' }).click();
    await page.getByRole('alert').filter({ hasText: '动态口令错误，请重新输入' }).waitFor();
    await page.getByLabel('动态口令').fill(codeFor('acme'));
    await page.getByRole('button', { name: '验证' }).click();
    await page.getByRole('link', { name: '退出' }).waitFor();
    // The frame exists once its element is in the page, which may come after the top bar's 退出.
    const work = await (await page.waitForSelector('iframe[name="work"]')).contentFrame();
    assert.ok(work, 'the work area is a frame named work');
    await work.getByText(`共 ${total} 条`).waitFor();
    return { page, work, close: () => context.close() };
  }

  test('portal layout; the grid draws only the rows in view while the page says 共 30 条; the 处理 dialog is a web component', async () => {
    const { page, work, close } = await signedIn();
    assert.equal(await page.getByRole('navigation', { name: '功能菜单' }).getByRole('link').count(), 3);
    assert.equal(await page.locator('iframe[title="工作区"]').count(), 1);
    const grid = work.getByRole('grid');
    await grid.getByRole('gridcell', { name: 'JS-10001', exact: true }).waitFor();
    assert.deepEqual(
      (await grid.getByRole('columnheader').allTextContents()).map((s) => s.trim()),
      ['单号', '对方单位', '类型', '金额', '状态', '更新时间', '操作'],
    );
    const drawn = await grid.locator('[role=row][row-index]').count();
    assert.ok(drawn > 5 && drawn < 30, `the grid virtualises: ${drawn} of 30 rows drawn`);
    assert.equal(await grid.getAttribute('aria-rowcount'), '31', 'the grid tells assistive technology the whole count');

    await grid.getByRole('row').filter({ hasText: 'JS-10002' }).getByRole('button', { name: '处理' }).click();
    const dialog = work.getByRole('dialog', { name: '处理差异单 JS-10002' });
    await dialog.waitFor();
    assert.equal(
      await work.locator('sl-dialog#settle-dialog').evaluate((el) => el.shadowRoot?.querySelector('[role=dialog]') !== null),
      true,
    );
    await work.getByLabel('处理说明').fill('已与对方核对，差额已调整');
    const shot = join(tmpdir(), 'settlo-portal.png');
    await page.screenshot({ path: shot });
    process.stdout.write(`# screenshot: ${shot}\n`);
    await work.getByRole('button', { name: '确认处理' }).click();
    await work.getByRole('status').filter({ hasText: '已提交：JS-10002' }).waitFor();
    assert.equal((await t.ctl.journal()).length, 0, 'held in the undo window');
    await work.getByRole('status').filter({ hasText: '处理已生效：JS-10002' }).waitFor({ timeout: 8000 });
    const journal = await t.ctl.journal();
    assert.deepEqual(
      journal.map((e) => [e.billNo, e.action, e.identity, e.detail?.['after']]),
      [['JS-10002', 'settle', 'js-acme', { status: 'PROCESSING', note: '已与对方核对，差额已调整' }]],
    );
    await close();
  });

  test('撤销 inside the window, or leaving the page inside it, writes nothing', async () => {
    await t.ctl.reset({ undoWindowSeconds: 2 });
    const { page, work, close } = await signedIn();
    const grid = work.getByRole('grid');
    await grid.getByRole('row').filter({ hasText: 'JS-10003' }).getByRole('button', { name: '处理' }).click();
    await work.getByLabel('处理说明').fill('撤销');
    await work.getByRole('button', { name: '确认处理' }).click();
    await work.getByRole('button', { name: '撤销' }).click();
    await work.getByRole('status').filter({ hasText: '已撤销：JS-10003' }).waitFor();

    await grid.getByRole('row').filter({ hasText: 'JS-10004' }).getByRole('button', { name: '处理' }).click();
    await work.getByLabel('处理说明').fill('离开页面');
    await work.getByRole('button', { name: '确认处理' }).click();
    await work.getByRole('status').filter({ hasText: '已提交：JS-10004' }).waitFor();
    await page.goto(`${t.url}/portal`);
    await sleep(2500);
    assert.deepEqual(await t.ctl.journal(), []);
    await close();
  });

  test('the 处理 and 退款 dialogs: an empty note and a wrong amount are refused inside them, 取消 closes them, each opens empty', async () => {
    await t.ctl.reset({ undoWindowSeconds: 0, tenants: [{ id: 'acme', pending: 1, overcharge: 1, processed: 0 }] });
    const { work, close } = await signedIn(2);
    const grid = work.getByRole('grid');
    await grid.getByRole('row').filter({ hasText: 'JS-10001' }).getByRole('button', { name: '处理' }).click();
    const settle = work.getByRole('dialog', { name: '处理差异单 JS-10001' });
    await settle.waitFor();
    await work.getByRole('button', { name: '确认处理' }).click();
    await work.getByRole('alert').filter({ hasText: '请填写处理说明' }).waitFor();
    await work.getByLabel('处理说明').fill('不提交');
    await work.locator('#settle-cancel').click();
    await settle.waitFor({ state: 'hidden' });

    await grid.getByRole('row').filter({ hasText: 'JS-10002' }).getByRole('button', { name: '退款' }).click();
    const refund = work.getByRole('dialog', { name: '退款确认 JS-10002' });
    await refund.waitFor();
    await work.getByLabel('退款金额').fill('0.01');
    await work.getByRole('button', { name: '确认退款' }).click();
    await work.getByRole('alert').filter({ hasText: '输入的金额与单据金额不一致' }).waitFor();
    await work.locator('#refund-cancel').click();
    await refund.waitFor({ state: 'hidden' });
    await grid.getByRole('row').filter({ hasText: 'JS-10002' }).getByRole('button', { name: '退款' }).click();
    await refund.waitFor();
    assert.equal(await work.getByLabel('退款金额').inputValue(), '', 'the amount field opens empty');
    assert.equal(await work.locator('#refund-error').isHidden(), true, 'the last refusal is not shown again');
    await work.locator('#refund-cancel').click();

    await grid.getByRole('row').filter({ hasText: 'JS-10001' }).getByRole('button', { name: '处理' }).click();
    await settle.waitFor();
    assert.equal(await work.getByLabel('处理说明').inputValue(), '', 'the note field opens empty');
    assert.equal(await work.locator('#settle-error').isHidden(), true);
    assert.deepEqual(await t.ctl.journal(), [], 'nothing was written');
    await close();
  });
});
