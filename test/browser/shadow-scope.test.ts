import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { useBrowserContext } from '../support/browser-back-office.js';
import { runSteps, type StepContext } from '../../src/browser/executor.js';
import type { Step } from '../../src/sitepack/action-language.js';

const browser = useBrowserContext();

/**
 * A dialog drawn the way web-component libraries draw one (Shoelace's <sl-dialog>, Ionic's <ion-modal>): the
 * element with role=dialog is a panel inside the component's open shadow root, and the page's own content (the
 * question, the buttons) stays in the light DOM, shown through slots. The page also has a 确认 button outside
 * the dialog, so a step scoped to the dialog that pressed that one would show.
 */
const SHADOW_DIALOG = `<script>
  window.pressed = [];
  customElements.define('x-dialog', class extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      this.attachShadow({ mode: 'open' }).innerHTML =
        '<div part="overlay" style="position:fixed;inset:0;background:#0004"></div>' +
        '<div part="panel" role="dialog" aria-modal="true" aria-label="' + this.getAttribute('label') + '"' +
        ' style="position:fixed;top:20%;left:20%;background:#fff;padding:12px">' +
        '<header><h2>' + this.getAttribute('label') + '</h2>' +
        '<button type="button" aria-label="关闭" onclick="window.pressed.push(\\'close\\')">×</button></header>' +
        '<slot></slot><footer><slot name="footer"></slot></footer></div>';
    }
  });
</script>
<button type="button" onclick="window.pressed.push('outside')">确认</button>
<x-dialog label="确认退款"><p>退款金额 ¥12.00</p><button slot="footer" type="button" onclick="window.pressed.push('ok')">确认</button></x-dialog>`;

const pressed = (page: Page) => page.evaluate(() => (window as unknown as { pressed: string[] }).pressed);
const ctx: StepContext = { baseUrl: 'http://fixture.invalid', params: {}, sessionLost: { texts: [] }, traced: false, timeoutMs: 2000 };

async function shadowPage(): Promise<Page> {
  const page = await browser.context.newPage();
  await page.setContent(SHADOW_DIALOG);
  return page;
}

for (const within of [{ dialog: true as const }, { dialog: { name: '确认退款' } }]) {
  test(`a step within a web component's dialog (${JSON.stringify(within)}) acts on the content it slots, not on the page`, async () => {
    const page = await shadowPage();
    const steps: Step[] = [{ action: 'click', within, target: { role: 'button', name: '确认', exact: true } }];
    await runSteps(page, steps, ctx);
    assert.deepEqual(await pressed(page), ['ok']);
    await page.close();
  });
}

test("a step within a web component's dialog still reaches the controls inside its shadow root", async () => {
  const page = await shadowPage();
  await runSteps(page, [{ action: 'click', within: { dialog: true }, target: { role: 'button', name: '关闭' } }], ctx);
  assert.deepEqual(await pressed(page), ['close']);
  await page.close();
});

test("a modal found by its text inside a web component's shadow root scopes to the whole component", async () => {
  const page = await shadowPage();
  await runSteps(
    page,
    [{ action: 'click', within: { modal: { text: '确认退款' } }, target: { role: 'button', name: '确认', exact: true } }],
    ctx,
  );
  assert.deepEqual(await pressed(page), ['ok']);
  await page.close();
});

test('a dialog an app draws wholly inside its own shadow root (no slots) stays the scope: the rest of the app is not in it', async () => {
  const page = await browser.context.newPage();
  await page.setContent(`<script>
    window.pressed = [];
    customElements.define('x-shell', class extends HTMLElement {
      connectedCallback() {
        if (this.shadowRoot) return;
        this.attachShadow({ mode: 'open' }).innerHTML =
          '<button type="button" onclick="window.pressed.push(\\'outside\\')">确认</button>' +
          '<div role="dialog" aria-label="确认退款"><p>退款金额 ¥12.00</p><button type="button" onclick="window.pressed.push(\\'ok\\')">确认</button></div>';
      }
    });
  </script><x-shell></x-shell>`);
  await runSteps(page, [{ action: 'click', within: { dialog: true }, target: { role: 'button', name: '确认', exact: true } }], ctx);
  assert.deepEqual(await pressed(page), ['ok']);
  await page.close();
});
