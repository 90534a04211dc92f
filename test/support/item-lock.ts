import assert from 'node:assert/strict';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { PAGE_NAME } from '../../src/evidence/folder.js';
import { classifyItem } from '../../src/report/classify.js';
import { executeTakeover, parseTakeoverArgs, type Io } from '../../src/cli/takeover.js';
import type { SharedControl } from './back-offices.js';
import type { Harness } from './embedded.js';

/**
 * One open write per item, across tasks (docs/guarded-write.md, "One open write per item"), on a back office:
 * task 1's write of the only pending item is a false success and goes to takeover; task 2 finds the item held
 * and ends `blocked` without writing anything (the vendor's journal is unchanged); once an operator resolves the
 * takeover, task 3 writes the item. Each task runs as a batch, so the outcome is counted by the summary too.
 */
export async function twoTasksOnOneItem(h: Harness<SharedControl>, scenario: { tenant: string; billNo: string }): Promise<void> {
  const { tenant, billNo } = scenario;
  const s = h.paperclip.services;
  await h.control.setFaults([{ kind: 'half_success', bill: billNo, times: 2 }]);
  const first = await h.paperclip.runBatch({ taskId: 'T-lock-1', tenant });
  assert.equal(first.status, 'SUCCEEDED', first.error);
  assert.equal(first.summary?.counts.takeover, 1, JSON.stringify(first.summary));
  const [open] = await s.claims.byTask('T-lock-1');
  assert.equal(open?.status, 'TAKEOVER');
  await h.control.setFaults([]);
  const journalBefore = await h.control.journal();

  const second = await h.paperclip.runBatch({ taskId: 'T-lock-2', tenant });
  assert.equal(second.status, 'SUCCEEDED', second.error);
  assert.equal(second.summary?.counts.blocked, 1, JSON.stringify(second.summary));
  assert.equal(second.summary?.counts.done, 0);
  assert.deepEqual(await h.control.journal(), journalBefore, 'the second task wrote nothing: the journal is unchanged');
  const [blocked] = await s.claims.byTask('T-lock-2');
  assert.equal(blocked?.status, 'BLOCKED');
  assert.match(blocked.reason ?? '', new RegExp(`unresolved write ${open.key} .*in takeover`));
  const record = JSON.parse((await s.evidence.get(evidenceKey(blocked, 'record.json')))!.toString());
  assert.equal(record.outcome, 'blocked');
  assert.equal(record.openKey, open.key);
  const page = (await s.evidence.get(evidenceKey(blocked, PAGE_NAME)))?.toString() ?? '';
  assert.match(page, /blocked/i, 'the item page says blocked');
  assert.equal(classifyItem(blocked, await s.audit.events(blocked.key)).outcome, 'blocked', 'the report counts it blocked');

  const lines: string[] = [];
  const io: Io = { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) };
  const resolveArgs = ['resolve', open.key, '--as', 'abandon', '--note', 'the vendor never applied it', '--operator', 'alice@ops.example'];
  const code = await executeTakeover(s, parseTakeoverArgs(resolveArgs), io);
  assert.equal(code, 0, lines.join('\n'));

  const third = await h.paperclip.runBatch({ taskId: 'T-lock-3', tenant });
  assert.equal(third.status, 'SUCCEEDED', third.error);
  assert.equal(third.summary?.counts.done, 1, JSON.stringify(third.summary));
  const written = (await h.control.journal()).slice(journalBefore.length);
  assert.ok(written.length > 0 && written.every((e) => e.billNo === billNo), 'the third task wrote the item');
}
