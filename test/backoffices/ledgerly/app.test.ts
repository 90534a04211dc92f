import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detailValue, newContext, openDetail, saveReason, settledValue, signedInPage, signIn, useTestLedgerly } from './helpers.js';

const t = useTestLedgerly();

async function stateOf(id: string): Promise<string | undefined> {
  return (await t.ctl.state()).discrepancies.find((d) => d.id === id)?.state;
}

test('hash-route login; the list is cards without data-* attributes, paged by "Load more", one org only, with a card menu', async () => {
  const context = await newContext();
  const page = await context.newPage();
  await page.goto(`${t.url}/#/discrepancies`);
  await page.waitForURL(/#\/login$/);
  await page.getByLabel('Email').fill('billing@acme.test');
  await page.getByLabel('Password').fill('wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Incorrect email or password.').waitFor();
  await signIn(page, t.url, 'acme');

  const cards = page.getByRole('list', { name: 'Discrepancies' }).getByRole('listitem');
  assert.equal(await cards.count(), 5);
  assert.equal(await page.locator('table').count(), 0);
  await page.getByRole('button', { name: 'Load more' }).click();
  await page.getByText('Showing 10 of 11').waitFor();
  await page.getByRole('button', { name: 'Load more' }).click();
  await page.getByText('That’s everything.').waitFor();
  const texts = await cards.allTextContents();
  assert.equal(texts.length, 11);
  assert.match(texts[0] ?? '', /^N-7001Open.+Billing error · \$\d/);
  assert.ok(
    texts.every((text) => /^N-70\d\d/.test(text)),
    'only acme records',
  );
  assert.match(texts[6] ?? '', /^N-7007Open.+Duplicate charge/);
  assert.match(texts[8] ?? '', /^N-7009Resolved/);
  assert.match(texts[10] ?? '', /^N-7011Refunded/);

  const markup = await page.evaluate(() => ({
    dataAttributes: Array.from(document.querySelectorAll('*')).flatMap((el) => el.getAttributeNames().filter((n) => n.startsWith('data-'))),
    classes: [...new Set(Array.from(document.querySelectorAll('[class]')).flatMap((el) => Array.from(el.classList)))],
  }));
  assert.deepEqual(markup.dataAttributes, []);
  assert.ok(markup.classes.length > 5 && markup.classes.every((c) => /^css-[0-9a-z]{1,6}$/.test(c)), markup.classes.join(' '));

  // A card's own "⋯" menu: Reopen from the list, without opening the card.
  const resolvedCard = cards.filter({ hasText: 'N-7009' });
  await resolvedCard.getByRole('button', { name: 'More actions' }).click();
  assert.deepEqual(await page.getByRole('menuitem').allTextContents(), ['View details', 'Reopen']);
  await page.getByRole('menuitem', { name: 'Reopen' }).click();
  await page.getByText('Discrepancy reopened.').waitFor();
  assert.match((await resolvedCard.textContent()) ?? '', /^N-7009Open/);
  assert.match(page.url(), /#\/discrepancies$/);
  assert.deepEqual(
    (await t.ctl.journal()).map((e) => `${e.billNo}:${e.action}`),
    ['N-7009:reopen'],
  );
  await context.close();
});

test('search, then a click on the card opens the detail route; another org’s record is not found', async () => {
  const { context, page } = await signedInPage(t.url, 'acme');
  await page.getByRole('searchbox', { name: 'Search discrepancies' }).fill('n-7003');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('Showing 1 of 1').waitFor();
  await page.getByRole('listitem').click();
  await page.waitForURL(/#\/discrepancies\/N-7003$/);
  await page.getByRole('heading', { name: /^N-7003 · / }).waitFor();
  assert.equal(await detailValue(page, 'Status'), 'Open');
  assert.equal(await detailValue(page, 'Organization'), 'Acme Corp');
  assert.equal(await detailValue(page, 'Type'), 'Billing error');
  assert.match(await detailValue(page, 'Amount'), /^\$[\d,]+\.\d\d$/);
  assert.equal(await detailValue(page, 'Resolution reason'), '—');

  await page.goto(`${t.url}/#/discrepancies`);
  await page.getByRole('searchbox', { name: 'Search discrepancies' }).fill('nothing-like-this');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('No discrepancies match “nothing-like-this”.').waitFor();

  await page.goto(`${t.url}/#/discrepancies/N-8001`);
  await page.getByRole('heading', { name: 'Discrepancy not found' }).waitFor();
  const api = await context.request.get(`${t.url}/api/discrepancies/N-8001`);
  assert.equal(api.status(), 404);
  assert.deepEqual(await api.json(), { error: { code: 'not_found', message: 'Discrepancy N-8001 not found.' } });
  await context.close();
});

test('resolve is two writes: a reason saved in a role-less modal (empty refused by the vendor), then Resolve; Under review, then Resolved; Reopen undoes it', async () => {
  const { context, page } = await signedInPage(t.url, 'acme');
  await openDetail(page, t.url, 'N-7002');

  await page.getByRole('button', { name: 'Resolve' }).click();
  await page.getByText('Add a resolution reason before resolving (More → Edit).').waitFor();
  assert.deepEqual(await t.ctl.journal(), [], 'resolve without a reason is refused');

  await page.getByRole('button', { name: 'More' }).click();
  assert.deepEqual(await page.getByRole('menuitem').allTextContents(), ['Edit']);
  await page.getByRole('menuitem', { name: 'Edit' }).click();
  const modal = page.locator('form', { has: page.getByRole('heading', { name: 'Edit N-7002' }) });
  await modal.waitFor();
  assert.equal(await page.getByRole('dialog').count(), 0, 'the modal has no ARIA role');
  assert.equal(await modal.evaluate((el) => el.closest('[role]')), null);
  await modal.getByLabel('Resolution reason').fill('   ');
  await modal.getByRole('button', { name: 'Save' }).click();
  await modal.getByText('Resolution reason is required.').waitFor();
  assert.deepEqual(await t.ctl.journal(), [], 'an empty reason is refused by the vendor');
  await modal.getByRole('button', { name: 'Cancel' }).click();

  await saveReason(page, 'Credit note CN-88 issued');
  await page.getByText('Changes saved.').waitFor();
  assert.equal(await detailValue(page, 'Resolution reason'), 'Credit note CN-88 issued');
  assert.equal(await detailValue(page, 'Status'), 'Open', 'the intermediate state: reason saved, status unchanged');

  await page.getByRole('button', { name: 'Resolve' }).click();
  await page.getByText('Discrepancy resolved. It is under review now.').waitFor();
  assert.equal(await detailValue(page, 'Status'), 'Under review');
  assert.equal(await stateOf('N-7002'), 'under_review');
  assert.equal(await settledValue(() => stateOf('N-7002'), 'resolved'), 'resolved');
  await page.reload();
  await page.getByRole('heading', { name: /^N-7002 · / }).waitFor();
  assert.equal(await detailValue(page, 'Status'), 'Resolved');

  await page.getByRole('button', { name: 'More' }).click();
  await page.getByRole('menuitem', { name: 'Reopen' }).click();
  await page.getByText('Discrepancy reopened.').waitFor();
  assert.equal(await detailValue(page, 'Status'), 'Open');

  const journal = await t.ctl.journal();
  assert.deepEqual(
    journal.map((e) => [e.billNo, e.tenant, e.action, e.identity]),
    [
      ['N-7002', 'acme', 'edit', 'billing@acme.test'],
      ['N-7002', 'acme', 'resolve', 'billing@acme.test'],
      ['N-7002', 'acme', 'reopen', 'billing@acme.test'],
    ],
  );
  assert.deepEqual(journal[0]?.detail, {
    before: { state: 'open', resolution_reason: null },
    after: { state: 'open', resolution_reason: 'Credit note CN-88 issued' },
  });
  assert.deepEqual(journal[2]?.detail, {
    before: { state: 'resolved', resolution_reason: 'Credit note CN-88 issued' },
    after: { state: 'open', resolution_reason: 'Credit note CN-88 issued' },
  });
  await context.close();
});

test('refund: an alertdialog shows the amount and enables the confirm button only when it is typed exactly', async () => {
  const { context, page } = await signedInPage(t.url, 'acme');
  await openDetail(page, t.url, 'N-7007');
  const amount = (await t.ctl.state()).discrepancies.find((d) => d.id === 'N-7007')?.amountCents ?? 0;
  const plain = `${Math.floor(amount / 100)}.${String(amount % 100).padStart(2, '0')}`;

  await page.getByRole('button', { name: 'More' }).click();
  assert.deepEqual(await page.getByRole('menuitem').allTextContents(), ['Edit', 'Refund']);
  await page.getByRole('menuitem', { name: 'Refund' }).click();
  const dialog = page.getByRole('alertdialog', { name: 'Refund N-7007?' });
  await dialog.waitFor();
  assert.match(
    (await dialog.textContent()) ?? '',
    new RegExp(`This refunds \\$[\\d,]+\\.\\d\\d to .+\\. Refunds can’t be undone\\.Type ${plain} to confirm`),
  );
  const confirm = dialog.getByRole('button', { name: 'Confirm refund' });
  assert.equal(await confirm.isDisabled(), true);
  await dialog.getByLabel(`Type ${plain} to confirm`).fill(`${plain}1`);
  assert.equal(await confirm.isDisabled(), true);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  assert.deepEqual(await t.ctl.journal(), []);

  await page.getByRole('button', { name: 'More' }).click();
  await page.getByRole('menuitem', { name: 'Refund' }).click();
  await dialog.getByLabel(`Type ${plain} to confirm`).fill(plain);
  await confirm.click();
  await page.getByText('Refund submitted.').waitFor();
  assert.equal(await detailValue(page, 'Status'), 'Refund pending');
  const journal = await t.ctl.journal();
  assert.deepEqual(
    journal.map((e) => [e.billNo, e.action, e.detail?.amountCents]),
    [['N-7007', 'refund', amount]],
  );
  assert.equal(await settledValue(() => stateOf('N-7007'), 'refunded'), 'refunded');

  // The vendor itself checks the typed amount.
  const wrong = await context.request.post(`${t.url}/api/discrepancies/N-7008/refund`, { data: { confirm_amount: '1.00' } });
  assert.equal(wrong.status(), 422);
  assert.equal((await t.ctl.journal()).length, 1);
  await context.close();
});

test('the JSON API authenticates with the session cookie, scopes to the selected org and answers 401 without it', async () => {
  const { context, page } = await signedInPage(t.url, 'ops');
  const list = await context.request.get(`${t.url}/api/discrepancies?q=&page=2`);
  assert.equal(list.status(), 200);
  const body = await list.json();
  assert.deepEqual(body.meta, { page: 2, per_page: 5, total: 11, has_more: true });
  assert.deepEqual(Object.keys(body.data[0]), [
    'id',
    'organization',
    'customer',
    'invoice',
    'type',
    'amount',
    'currency',
    'state',
    'resolution_reason',
    'updated_at',
  ]);
  assert.deepEqual(body.data[0].organization, { slug: 'acme', name: 'Acme Corp' });

  await page.getByLabel('Organization').selectOption('globex');
  await page.getByRole('listitem').filter({ hasText: 'N-8001' }).waitFor();
  const globex = await (await context.request.get(`${t.url}/api/discrepancies/N-8001`)).json();
  assert.equal(globex.data.organization.slug, 'globex');
  assert.equal((await context.request.get(`${t.url}/api/discrepancies/N-7001`)).status(), 404);

  const csv = await context.request.get(`${t.url}/api/exports/discrepancies.csv?q=N-8007`);
  assert.equal(csv.headers()['content-disposition'], 'attachment; filename="discrepancies-globex.csv"');
  const text = (await csv.body()).toString('utf8');
  assert.ok(text.startsWith('\uFEFF"ID","Organization","Customer","Invoice","Type","Amount","Currency","Status"'));
  assert.match(text, /\r\n"N-8007","Globex Corp","[^"]+","INV-\d+-\d+","Duplicate charge","\d+\.\d\d","USD","Open","",/);

  const anonymous = await fetch(`${t.url}/api/discrepancies`);
  assert.equal(anonymous.status, 401);
  assert.deepEqual(await anonymous.json(), { error: { code: 'unauthenticated', message: 'Sign in to continue.' } });
  const forged = await fetch(`${t.url}/api/discrepancies`, { headers: { authorization: 'Bearer anything' } });
  assert.equal(forged.status, 401, 'no bearer tokens: the cookie is the only credential');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/#\/login$/);
  assert.equal((await context.request.get(`${t.url}/api/me`)).status(), 401);
  await context.close();
});

test('control API: validated bodies, reset restores the seed', async () => {
  await assert.rejects(t.ctl.addFault({ kind: 'half_success', bill: 'ACME-202611-0001' }), /discrepancy ids look like N-7001/);
  const raw = await fetch(`${t.url}/__sim/faults`, {
    method: 'POST',
    headers: { 'x-sim-token': 'test-control-token', 'content-type': 'application/json' },
    body: JSON.stringify({ faults: [{ kind: 'slow_ms' }] }),
  });
  assert.equal(raw.status, 400);
  assert.match((await raw.json()).message, /body\.faults\.0\.ms: ms is required for a slow_ms fault/);
  assert.equal((await fetch(`${t.url}/__sim/journal`)).status, 401);

  const result = await t.ctl.reset({ orgs: [{ id: 'hooli', billingErrors: 2, duplicateCharges: 1, resolved: 0, refunded: 0 }] });
  assert.equal(result.bills, 3);
  assert.deepEqual(
    (await t.ctl.state()).discrepancies.map((d) => `${d.id}:${d.org}:${d.type}:${d.state}`),
    ['N-7001:hooli:billing_error:open', 'N-7002:hooli:billing_error:open', 'N-7003:hooli:duplicate_charge:open'],
  );
  await t.ctl.reset();
  assert.equal((await t.ctl.state()).discrepancies.length, 22);
});
