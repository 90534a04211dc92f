import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GENESIS_HASH, sealEvent, type AuditEvent, type AuditEventBody } from '../../src/domain/audit-chain.js';
import { renderItemPage } from '../../src/evidence/item-page.js';
import type { HashedObject } from '../../src/evidence/folder.js';

const KEY = 'k-acme_00000000000000000000000000000001';
const stored = (name: string) => ({ key: `evidence/acme/T-page/${KEY}/${name}`, sha256: 'a'.repeat(64) });

function chain(inputs: AuditEventBody[]): AuditEvent[] {
  const events: AuditEvent[] = [];
  for (const input of inputs) events.push(sealEvent(KEY, events.length + 1, events.at(-1)?.hash ?? GENESIS_HASH, input));
  return events;
}

function objects(...names: string[]): Map<string, HashedObject> {
  return new Map(names.map((name) => [name, { name, sha256: 'a'.repeat(64), bytes: 1 }]));
}

/** The item page of a chain, with these objects in its folder. */
function pageOf(events: AuditEvent[], ...names: string[]): string {
  return renderItemPage({ key: KEY, objects: objects(...names), events, siblingPages: new Set(), batchPage: false });
}

/** The timeline entry of the event with this seq. */
function entry(html: string, seq: number): string {
  const start = html.indexOf(`id="seq-${seq}"`);
  assert.ok(start >= 0, `event #${seq} is on the page`);
  return html.slice(start, html.indexOf('</li>', start));
}

const actor = 'svc-recon-acme';
const written = { type: 'write_started', actor, data: { tier: 'browser', stage: 'write', step: 3 } };
const readback = (verdict: string, evidence: unknown[]) => ({
  type: 'readback',
  actor,
  data: { verdict, source: 'list', next: 'x', evidence },
});

test('after a retry, the readback picture stays with the readback that took it; the confirmed one says what records it', () => {
  const events = chain([
    written,
    readback('not_applied', [stored('readback.png')]),
    written,
    readback('confirmed', []),
    { type: 'completed', actor, data: {} },
  ]);
  const html = pageOf(events, 'before.png', 'after.png', 'readback.png', 'trace.zip');
  assert.match(entry(html, 2), /<img[^>]*readback\.png/, 'pictured under the readback that stored it');
  assert.doesNotMatch(entry(html, 4), /<img[^>]*readback\.png/, 'not under the later confirmed verdict');
  assert.match(entry(html, 4), /A confirmed readback of a settled write: its observations above and after.png record it/);
  assert.doesNotMatch(entry(html, 2), /A confirmed readback of a settled write/);
});

test('an unpictured commit click points to the trace, or says that nothing records it; a write with nothing to click says neither', () => {
  const traced = pageOf(chain([written]), 'before.png', 'after.png', 'trace.zip');
  assert.match(entry(traced, 1), /DOM snapshot of that click in trace\.zip/);
  const bare = pageOf(chain([written]), 'before.png', 'after.png');
  assert.match(entry(bare, 1), /Nothing records the page just before the commit click: no picture, no trace/);
  const pictured = pageOf(chain([written]), 'before-commit.png', 'trace.zip');
  assert.match(entry(pictured, 1), /<img[^>]*before-commit\.png/);
  assert.doesNotMatch(entry(pictured, 1), /DOM snapshot of that click/);
  // A retry whose stages had all landed clicked nothing: the picture stays under the attempt that clicked.
  const retried = chain([
    written,
    readback('not_applied', [stored('readback.png')]),
    { type: 'write_started', actor, data: { tier: 'browser', alreadyDone: ['write'] } },
  ]);
  const twice = pageOf(retried, 'before-commit.png', 'trace.zip');
  assert.match(entry(twice, 1), /<img[^>]*before-commit\.png/);
  assert.doesNotMatch(entry(twice, 3), /<img[^>]*before-commit\.png/);
  const landed = chain([{ type: 'write_started', actor, data: { tier: 'browser', alreadyDone: ['write'] } }]);
  const nothingClicked = pageOf(landed, 'trace.zip');
  assert.doesNotMatch(entry(nothingClicked, 1), /commit click/);
});

test("each stage's done-check reading is on the timeline: what it read, when, the pack line, and a stop when the write stopped", () => {
  const line = 'actions.resolve.tiers.browser.stages[0].done';
  const check = (when: string, matched: boolean, decision: string) => ({
    type: 'stage_done_checked',
    actor,
    data: { stage: 'reason_saved', line, when, matched, earlier: null, decision },
  });
  const html = pageOf(chain([check('before_click', false, 'click'), written, check('after_commit', false, 'stop')]));
  assert.match(entry(html, 1), /Stage done check reason_saved: <span class="badge ok">no match before its click<\/span>/);
  assert.match(entry(html, 3), /no match after its commit<\/span> <span class="badge bad">stopped: not clicked again/);
  assert.ok(entry(html, 3).includes(line), 'the pack line is named');
});
