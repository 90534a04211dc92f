import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detailValue, openDetail, saveReason, settledValue, signedInPage, useTestLedgerly } from './helpers.js';

// The app gives up on an unanswered write after 1.5 s here (10 s by default).
const t = useTestLedgerly({ clientTimeoutMs: 1500 });

async function stateOf(id: string): Promise<string | undefined> {
  return (await t.ctl.state()).discrepancies.find((d) => d.id === id)?.state;
}

async function journalLines(): Promise<string[]> {
  return (await t.ctl.journal()).map((e) => `${e.billNo}:${e.action}${e.detail?.fault ? `:${String(e.detail.fault)}` : ''}`);
}

/** Signed in as acme, on the detail page of `id`, with a resolution reason already saved when asked. */
async function onDetail(id: string, options: { reason?: string } = {}) {
  const { context, page } = await signedInPage(t.url, 'acme');
  await openDetail(page, t.url, id);
  if (options.reason) {
    await saveReason(page, options.reason);
    await page.getByText('Changes saved.').waitFor();
  }
  return { context, page };
}

/** On `id`'s detail page with `reason` saved, the fault set, then Resolve clicked; once the app shows `notice`. */
async function resolveUnderFault(id: string, reason: string, fault: Parameters<typeof t.ctl.setFaults>[0][number], notice: string) {
  const opened = await onDetail(id, { reason });
  await t.ctl.setFaults([fault]);
  await opened.page.getByRole('button', { name: 'Resolve' }).click();
  await opened.page.getByText(notice).waitFor();
  return opened;
}

async function refund(page: import('playwright-core').Page, id: string): Promise<void> {
  await page.getByRole('button', { name: 'More' }).click();
  await page.getByRole('menuitem', { name: 'Refund' }).click();
  const dialog = page.getByRole('alertdialog', { name: `Refund ${id}?` });
  const label = (await dialog.locator('label').textContent()) ?? '';
  const amount = /^Type (\S+) to confirm$/.exec(label)?.[1] ?? '';
  await dialog.getByLabel(label).fill(amount);
  await dialog.getByRole('button', { name: 'Confirm refund' }).click();
}

test('half_success: the success notification and the new status show, yet nothing changed', async () => {
  const { context, page } = await resolveUnderFault(
    'N-7003',
    'Duplicate invoice line',
    { kind: 'half_success', bill: 'N-7003' },
    'Discrepancy resolved. It is under review now.',
  );
  assert.equal(await detailValue(page, 'Status'), 'Under review', 'the page lies');
  assert.deepEqual(await journalLines(), ['N-7003:edit']);
  assert.equal(await stateOf('N-7003'), 'open');
  await page.reload();
  await page.getByRole('heading', { name: /^N-7003 · / }).waitFor();
  assert.equal(await detailValue(page, 'Status'), 'Open');
  await context.close();
});

test('commit_then_timeout with ms: the refund lands while the app reports a timeout', async () => {
  await t.ctl.setFaults([{ kind: 'commit_then_timeout', bill: 'N-7008', ms: 200 }]);
  const { context, page } = await onDetail('N-7008');
  await refund(page, 'N-7008');
  await page.getByText('The request timed out. Check the discrepancy again in a moment.').waitFor();
  assert.deepEqual(await journalLines(), ['N-7008:refund:commit_then_timeout']);
  assert.equal(await settledValue(() => stateOf('N-7008'), 'refunded'), 'refunded');
  assert.equal((await t.ctl.timings()).find((r) => r.path === '/api/discrepancies/N-7008/refund')?.status, 504);
  await context.close();
});

test('commit_then_timeout without ms: the resolve hangs until the app gives up; the commit stays', async () => {
  const timedOut = 'The request timed out. Check the discrepancy again in a moment.';
  const { context, page } = await resolveUnderFault('N-7004', 'Rounding error', { kind: 'commit_then_timeout', bill: 'N-7004' }, timedOut);
  assert.equal(await detailValue(page, 'Status'), 'Open', 'the page never heard back');
  assert.deepEqual(await journalLines(), ['N-7004:edit', 'N-7004:resolve:commit_then_timeout']);
  assert.notEqual(await stateOf('N-7004'), 'open');
  await context.close();
});

test('error_500 and permission_denied refuse the write before anything changes', async () => {
  await t.ctl.setFaults([
    { kind: 'error_500', bill: 'N-7005', times: 1 },
    { kind: 'permission_denied', bill: 'N-7005', times: 1 },
  ]);
  const { context, page } = await onDetail('N-7005');
  await page.getByRole('button', { name: 'More' }).click();
  await page.getByRole('menuitem', { name: 'Edit' }).click();
  await page.getByLabel('Resolution reason').fill('Tax applied twice');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('You don’t have permission to do this.').waitFor();
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Something went wrong on our side. Try again later.').waitFor();
  assert.deepEqual(await journalLines(), []);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Changes saved.').waitFor();
  assert.deepEqual(await journalLines(), ['N-7005:edit']);
  const faults = await t.ctl.state().then((s) => s.faults.map((f) => `${f.kind}:${f.fired}:${f.remaining}`));
  assert.deepEqual(faults, ['error_500:1:0', 'permission_denied:1:0']);
  await context.close();
});

test('session_revoked: the API answers 401 and the app goes to #/login saying the session ended', async () => {
  const { context, page } = await onDetail('N-7006');
  await t.ctl.setFaults([{ kind: 'session_revoked', identity: 'billing@acme.test', times: 1 }]);
  await page.getByRole('button', { name: 'More' }).click();
  await page.getByRole('menuitem', { name: 'Edit' }).click();
  await page.getByLabel('Resolution reason').fill('Never saved');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.waitForURL(/\/#\/login$/);
  await page.getByText('Your session has ended. Please sign in again.').waitFor();
  assert.deepEqual(await journalLines(), []);
  const api = await context.request.get(`${t.url}/api/discrepancies/N-7006`);
  assert.equal(api.status(), 401);
  assert.equal((await api.json()).error.code, 'session_revoked');

  // Signing in again gets a fresh session (the fault fired once) and returns to the record.
  await page.getByLabel('Email').fill('billing@acme.test');
  await page.getByLabel('Password').fill('Ledgerly-acme-2026');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/#\/discrepancies\/N-7006$/);
  await page.getByRole('heading', { name: /^N-7006 · / }).waitFor();
  await context.close();
});

test('an expired session is a 401 too, and the app returns to #/login', async () => {
  await t.ctl.reset({ sessionTtlSeconds: 1 });
  const { context, page } = await signedInPage(t.url, 'acme');
  await sleep(1300);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/\/#\/login$/);
  await page.getByText('Your session has ended. Please sign in again.').waitFor();
  await context.close();
});

test('async_delay_ms keeps a resolve under review; slow_ms delays every request without losing it', async () => {
  const { context, page } = await onDetail('N-7001', { reason: 'Wrong plan price' });
  await t.ctl.setFaults([
    { kind: 'async_delay_ms', bill: 'N-7001', ms: 60_000 },
    { kind: 'slow_ms', bill: 'N-7001', ms: 300 },
  ]);
  const since = new Date().toISOString();
  await page.getByRole('button', { name: 'Resolve' }).click();
  await page.getByText('Discrepancy resolved. It is under review now.').waitFor();
  await page.reload();
  await page.getByRole('heading', { name: /^N-7001 · / }).waitFor();
  assert.equal(await detailValue(page, 'Status'), 'Under review');
  assert.equal(await stateOf('N-7001'), 'under_review');
  // A lower bound only: the vendor held each request at least the fault's 300 ms and still answered it.
  const slow = (await t.ctl.timings()).filter((r) => r.path.startsWith('/api/discrepancies/N-7001') && r.startedAt >= since);
  assert.ok(slow.length >= 2 && slow.every((r) => r.status === 200 && r.durationMs >= 300), JSON.stringify(slow));
  assert.deepEqual(await journalLines(), ['N-7001:edit', 'N-7001:resolve']);
  await context.close();
});

test('redesign: one page load renders the new console (grid, other labels), the next the usual one', async () => {
  const { context, page } = await signedInPage(t.url, 'acme');
  await t.ctl.setFaults([{ kind: 'redesign', times: 1 }]);
  await page.reload();
  await page.getByRole('heading', { name: 'Cases' }).waitFor();
  assert.equal(await page.getByRole('listitem').count(), 0);
  const grid = page.getByRole('grid', { name: 'Cases' });
  assert.deepEqual(await grid.getByRole('columnheader').allTextContents(), [
    'Reference',
    'Client',
    'Category',
    'Total',
    'State',
    'Modified',
  ]);
  assert.equal(await grid.getByRole('row').count(), 6);
  assert.equal(await page.getByRole('searchbox', { name: 'Search discrepancies' }).count(), 0);
  await page.getByRole('searchbox', { name: 'Find cases' }).fill('N-7007');
  await page.getByRole('button', { name: 'Find' }).click();
  await grid.getByRole('row').nth(1).click();
  await page.getByRole('button', { name: 'Actions' }).click();
  assert.deepEqual(await page.getByRole('menuitem').allTextContents(), ['Edit case', 'Issue refund']);
  assert.match((await page.locator('main').textContent()) ?? '', /Current state: Open/);

  await page.reload();
  await page.getByRole('heading', { name: /^N-7007 · / }).waitFor();
  assert.equal(await detailValue(page, 'Status'), 'Open');
  assert.equal(await page.getByRole('button', { name: 'More' }).count(), 1);
  await context.close();
});
