import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { parseSitePack } from '../../src/sitepack/load.js';
import { Plan, Step, fillTemplate } from '../../src/sitepack/action-language.js';

const pack = () => parse(readFileSync('sitepacks/vendor-sim.yaml', 'utf8')) as Record<string, any>;

test('the simulator pack validates', () => {
  const loaded = parseSitePack(readFileSync('sitepacks/vendor-sim.yaml', 'utf8'));
  assert.equal(loaded.actions['refund']?.reversibility, 'irreversible');
  assert.equal(loaded.actions['mark_processed']?.inverse, 'unmark_processed');
});

test('CSS, XPath and id selectors are refused wherever a locator is given', () => {
  for (const text of ['css=.export-btn', '.btn-primary', '#submit', '//button', 'tr[data-bill="x"]', 'button >> nth=1']) {
    const result = Step.safeParse({ action: 'click', target: { text } });
    assert.equal(result.success, false, text);
    assert.match(JSON.stringify(result.error?.issues), /looks like a CSS\/XPath selector/);
  }
  assert.equal(Step.safeParse({ action: 'eval', value: 'alert(1)' }).success, false, 'non-whitelisted action');
  assert.equal(Step.safeParse({ action: 'click', target: { role: 'button', name: '标记处理' } }).success, true);
  assert.equal(Step.safeParse({ action: 'click', target: { role: 'button', label: 'x' } }).success, false, 'one strategy per locator');
  assert.equal(Step.safeParse({ action: 'open', url: 'https://evil.example/' }).success, false, 'opens only paths of the site');
});

test('plans are at most ten steps', () => {
  const step = { action: 'screenshot', as: 'x' };
  assert.equal(Plan.safeParse(Array(10).fill(step)).success, true);
  assert.match(JSON.stringify(Plan.safeParse(Array(11).fill(step)).error?.issues), /at most 10 steps/);
});

test('a reversible action without an inverse, or an inverse that does not exist, is refused by name', () => {
  const p = pack();
  delete p.actions.mark_processed.inverse;
  assert.throws(
    () => parseSitePack(stringify(p), 'pack.yaml'),
    /actions\.mark_processed\.inverse: a reversible action must name its inverse/,
  );
  const q = pack();
  q.actions.mark_processed.inverse = 'vanish';
  assert.throws(() => parseSitePack(stringify(q), 'pack.yaml'), /actions\.mark_processed\.inverse: names "vanish"/);
});

test('template values are data: URL values are percent-encoded, missing values are named', () => {
  assert.equal(fillTemplate('/diff/{{billNo}}', { billNo: '../../admin?x=1' }, 'url'), '/diff/..%2F..%2Fadmin%3Fx%3D1');
  assert.throws(() => fillTemplate('/diff/{{billNo}}', {}), /no value named "billNo"/);
});

test('a version 1 pack is refused with a pointer to the v2 format; a write without a commit mark is refused', () => {
  const v1 = pack();
  delete v1.version;
  assert.throws(() => parseSitePack(stringify(v1), 'pack.yaml'), /version: site packs are version 2; see docs\/sitepack\.md/);
  const unmarked = pack();
  for (const step of unmarked.actions.mark_processed.tiers.browser.steps) delete step.commit;
  assert.throws(
    () => parseSitePack(stringify(unmarked), 'pack.yaml'),
    /actions\.mark_processed\.tiers\.browser\.steps: mark every click that changes vendor state/,
  );
  const shadow = pack();
  shadow.actions.refund.tiers.browser.steps.splice(1, 0, { action: 'extract', target: { text: '金额' }, as: 'amount' });
  assert.throws(() => parseSitePack(stringify(shadow), 'pack.yaml'), /extract as "amount" would shadow a parameter/);
});

test('export.encoding, export.delimiter and list.decimal are closed lists; a wrong value is refused naming the field and the values', () => {
  const p = pack();
  p.export.encoding = 'big5';
  assert.throws(
    () => parseSitePack(stringify(p), 'pack.yaml'),
    /export\.encoding: export\.encoding must be one of utf-8, gbk, gb18030, utf-16le, utf-16be/,
  );
  p.export.encoding = 'gbk';
  p.export.delimiter = '|';
  assert.throws(() => parseSitePack(stringify(p), 'pack.yaml'), /export\.delimiter must be one of ",", ";", "\\t"/);
  p.export.delimiter = ';';
  p.list.decimal = 'comma';
  assert.throws(() => parseSitePack(stringify(p), 'pack.yaml'), /list\.decimal: list\.decimal must be one of "\.", ","/);
  p.list.decimal = ',';
  const loaded = parseSitePack(stringify(p), 'pack.yaml');
  assert.deepEqual([loaded.export?.encoding, loaded.export?.delimiter, loaded.list.decimal], ['gbk', ';', ',']);
  assert.equal(parseSitePack(readFileSync('sitepacks/vendor-sim.yaml', 'utf8')).list.decimal, '.', 'a decimal point by default');
});

test('frames, virtualising grids and stated totals: what a pack may say, and the fix named when it is wrong', () => {
  const p = pack();
  p.list.frame = { title: '工作区' };
  p.list.rows = { table: { name: '差异清单', virtual: true, filter: { label: '筛选单号' } } };
  p.list.total = { pattern: '共\\s*(\\d+)\\s*条' };
  p.detail.frame = { name: 'work' };
  p.actions.mark_processed.frame = { url: '^/work/' };
  p.actions.mark_processed.tiers.browser.steps[1].within = { top: true };
  const loaded = parseSitePack(stringify(p));
  assert.deepEqual(loaded.list.frame, { title: '工作区' });
  assert.equal(loaded.list.rows.table?.virtual, true);
  assert.equal(loaded.actions['mark_processed']?.frame?.url, '^/work/');

  const twoWays = pack();
  twoWays.list.frame = { name: 'work', title: '工作区' };
  assert.throws(() => parseSitePack(stringify(twoWays)), /exactly one of name, title or url/);
  const noGroup = pack();
  noGroup.list.total = { pattern: '共\\s*\\d+\\s*条' };
  assert.throws(() => parseSitePack(stringify(noGroup)), /captures the number in group 1/);
  const badUrl = pack();
  badUrl.detail.frame = { url: '(' };
  assert.throws(() => parseSitePack(stringify(badUrl)), /frame\.url is a regular expression/);
});

test('undoWindowSeconds: an action held in a vendor undo window; a wrong value is refused naming the field and the fix', () => {
  const p = pack();
  p.actions.mark_processed.undoWindowSeconds = 5;
  assert.equal(parseSitePack(stringify(p)).actions['mark_processed']?.undoWindowSeconds, 5);
  assert.equal(parseSitePack(stringify(pack())).actions['mark_processed']?.undoWindowSeconds, undefined, 'not held unless declared');
  for (const wrong of [-1, 2.5, 61, '5s']) {
    p.actions.mark_processed.undoWindowSeconds = wrong;
    assert.throws(
      () => parseSitePack(stringify(p), 'pack.yaml'),
      /actions\.mark_processed\.undoWindowSeconds: undoWindowSeconds is the vendor's undo window in whole seconds, 0 to 60 .*e\.g\. undoWindowSeconds: 5/,
      String(wrong),
    );
  }
  const apiOnly = pack();
  apiOnly.actions.mark_processed.undoWindowSeconds = 5;
  apiOnly.actions.mark_processed.tiers = { api: { method: 'POST', path: '/api/diff/{{billNo}}/mark' } };
  assert.throws(
    () => parseSitePack(stringify(apiOnly), 'pack.yaml'),
    /actions\.mark_processed\.undoWindowSeconds: undoWindowSeconds keeps the browser page open .*declare tiers\.browser/,
  );
  assert.equal(parseSitePack(readFileSync('sitepacks/settlo.yaml', 'utf8')).actions['settle']?.undoWindowSeconds, 5);
});
