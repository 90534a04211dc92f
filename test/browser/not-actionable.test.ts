import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { useBrowserContext } from '../support/browser-back-office.js';
import { runSteps, type StepContext } from '../../src/browser/executor.js';
import { StructuredContractMissingError } from '../../src/domain/errors.js';
import type { Step } from '../../src/sitepack/action-language.js';

const browser = useBrowserContext();

/**
 * A styled dropdown as admin-framework component libraries draw one: a read-only input with role=combobox under a
 * placeholder element that sits on top of it and takes the pointer; clicking the placeholder opens the options (drawn
 * elsewhere in the page, not in a native <select>). A pack that aims at the combobox finds it visible, and Playwright
 * then waits the whole step for a click it can never make. That used to surface as a bare `TimeoutError`, which the
 * commands report as "a store or service did not answer" and a write as a timeout with no step named.
 */
const STYLED_SELECT = `<script>window.picked = [];</script>
<form>
  <label for="reason">退款原因</label>
  <div style="position:relative;width:220px;height:32px" onclick="document.getElementById('opts').hidden = false">
    <input id="reason" role="combobox" readonly aria-expanded="false" style="width:100%;height:100%">
    <div style="position:absolute;inset:0;background:#fff"><span>请选择退款原因</span></div>
  </div>
  <ul id="opts" role="listbox" hidden><li role="option" onclick="window.picked.push('duplicate')">重复收费</li></ul>
  <label for="amount">退款金额</label><input id="amount" readonly value="12.00">
  <button type="button" disabled>确认退款</button>
</form>`;

const ctx: StepContext = { baseUrl: 'http://fixture.invalid', params: {}, sessionLost: { texts: [] }, traced: false, timeoutMs: 1500 };

async function page(): Promise<Page> {
  const p = await browser.context.newPage();
  await p.setContent(STYLED_SELECT);
  return p;
}

async function failure(steps: Step[]): Promise<StructuredContractMissingError> {
  const p = await page();
  try {
    await runSteps(p, steps, ctx);
  } catch (error) {
    assert.ok(
      error instanceof StructuredContractMissingError,
      `expected a pack mismatch, got ${(error as Error).name}: ${(error as Error).message}`,
    );
    return error;
  } finally {
    await p.close();
  }
  assert.fail('the step should have failed');
}

test('a click on a target another element covers names the step and what covers it, as a pack mismatch', async () => {
  const error = await failure([{ action: 'click', target: { role: 'combobox' } }]);
  assert.match(error.message, /^step "click role=combobox" found its target on .* but could not click it: another element covers it/);
  assert.match(error.message, /请选择退款原因/);
  assert.match(error.message, /aim the step at what shows on top/);
});

test('aimed at what shows on top, the same dropdown opens and its option is clicked', async () => {
  const p = await page();
  await runSteps(
    p,
    [
      { action: 'click', target: { text: '请选择退款原因' } },
      { action: 'click', target: { role: 'option', name: '重复收费' } },
    ],
    ctx,
  );
  assert.deepEqual(await p.evaluate(() => (window as unknown as { picked: string[] }).picked), ['duplicate']);
  await p.close();
});

test('a fill on a read-only field and a click on a disabled button say so, naming the step', async () => {
  const readOnly = await failure([{ action: 'fill', target: { label: '退款金额' }, value: '12.00' }]);
  assert.match(readOnly.message, /^step "fill label="退款金额"" found its target .* but could not fill it: it is read-only/);
  const disabled = await failure([{ action: 'click', target: { role: 'button', name: '确认退款' } }]);
  assert.match(disabled.message, /could not click it: it stayed disabled/);
});

test('a select on a styled dropdown says it is not a native select and how to pick the option', async () => {
  const error = await failure([{ action: 'select', target: { role: 'combobox' }, value: '重复收费' }]);
  assert.match(error.message, /found its target .* but it is not a native <select>: a styled dropdown is two clicks/);
});
