import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createTables, startLocalDynamoDb, type LocalDynamoDb } from '../../twin/aws/dynamodb.js';
import { loadSitePack } from '../../src/sitepack/load.js';
import { DynamoDbTaskStore } from '../../planner/stores/dynamodb-task-store.js';
import { FileTaskStore } from '../../planner/stores/file-task-store.js';
import { createTask } from '../../planner/task-runner.js';
import { TaskExistsError, TaskVersionConflictError, type TaskStore } from '../../planner/task-state.js';
import { appendHistory, EMPTY_HISTORY, renderHistory, type HistoryEntry } from '../../planner/history.js';
import { DEFAULT_WRITE_WORDS } from '../../planner/config.js';

const pack = loadSitePack('sitepacks/vendor-sim.yaml');
const rules = { pack, writeWords: DEFAULT_WRITE_WORDS };
let dir: string;
let dynamo: LocalDynamoDb;
let client: DynamoDBClient;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planner-store-'));
  dynamo = await startLocalDynamoDb();
  client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await createTables(client, 'planner-test');
});
after(async () => {
  client.destroy();
  await dynamo.stop();
  await rm(dir, { recursive: true, force: true });
});

const stores: Array<[string, () => TaskStore]> = [
  ['file', () => new FileTaskStore(join(dir, 'tasks'))],
  ['dynamodb', () => new DynamoDbTaskStore(client, 'planner-test')],
];

for (const [name, make] of stores) {
  describe(`${name} task store`, () => {
    test('creates, reads back, refuses duplicates', async () => {
      const store = make();
      const task = await createTask(
        store,
        { instruction: '导出对账文件', site: 'vendor-sim', tenant: 'acme', taskId: `${name}-create` },
        rules,
      );
      assert.equal(task.status, 'pending');
      assert.deepEqual(await make().get(task.taskId), JSON.parse(JSON.stringify(task)), 'a second instance reads the same record');
      await assert.rejects(createTask(store, { instruction: 'x', site: 'vendor-sim', taskId: `${name}-create` }, rules), TaskExistsError);
      assert.equal(await store.get('no-such-task'), undefined);
    });

    test('updates are conditional on the version: of two writers with the same view, one loses', async () => {
      const store = make();
      const task = await createTask(store, { instruction: '巡检', site: 'vendor-sim', taskId: `${name}-race` }, rules);
      const running = await store.update({ ...task, status: 'running' }, task.version);
      assert.equal(running.version, 2);
      const results = await Promise.allSettled([
        store.update({ ...running, cursor: 1 }, running.version),
        make().update({ ...running, cursor: 7 }, running.version),
      ]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.ok(lost.reason instanceof TaskVersionConflictError);
      const stored = await store.get(task.taskId);
      assert.equal(stored?.version, 3);
      assert.ok(stored?.cursor === 1 || stored?.cursor === 7);
    });

    test('lists by status', async () => {
      const store = make();
      const a = await createTask(store, { instruction: 'a', site: 'vendor-sim', taskId: `${name}-list-a` }, rules);
      await store.update({ ...a, status: 'waiting_confirm' }, a.version);
      const waiting = await store.list({ status: 'waiting_confirm' });
      assert.ok(waiting.some((t) => t.taskId === a.taskId));
      assert.ok(waiting.every((t) => t.status === 'waiting_confirm'));
    });
  });
}

test('bad input changes nothing and names the field', async () => {
  const store = new FileTaskStore(join(dir, 'bad'));
  await assert.rejects(createTask(store, { instruction: '', site: 'vendor-sim' }, rules), /instruction: give the instruction/);
  await assert.rejects(createTask(store, { instruction: 'x', site: 'vendor-sim', taskId: '../etc/passwd' }, rules), /taskId/);
  await assert.rejects(
    createTask(
      store,
      { instruction: 'x', site: 'vendor-sim', fixedPlan: [{ action: 'click', target: { role: 'button', name: '提交退款' } }] },
      rules,
    ),
    /the job's plan is refused: .*irreversible site-pack action "refund"/,
  );
  assert.deepEqual(await store.list(), []);
});

test('a tampered task file is refused with the field named', async () => {
  const store = new FileTaskStore(join(dir, 'tampered'));
  const task = await createTask(store, { instruction: 'x', site: 'vendor-sim', taskId: 'tampered' }, rules);
  await writeFile(join(dir, 'tampered', 'tampered.json'), JSON.stringify({ ...task, status: 'done' }));
  await assert.rejects(store.get('tampered'), /status/);
});

test('history keeps the last steps verbatim, summarises older ones every 5 steps, and rolls up the oldest', () => {
  const settings = { verbatim: 10, summariseEvery: 5, maxSummaries: 6 };
  let history = EMPTY_HISTORY;
  for (let seq = 1; seq <= 120; seq++) {
    const entry: HistoryEntry = {
      seq,
      round: Math.ceil(seq / 10),
      step:
        seq % 7 === 0
          ? { action: 'click', target: { role: 'link', name: '下一页' } }
          : { action: 'extract', target: { role: 'table' }, as: `t${seq}`, mode: 'table' },
      ok: seq % 13 !== 0,
      at: new Date(0).toISOString(),
    };
    history = appendHistory(history, entry, settings);
    assert.ok(history.recent.length >= Math.min(seq, 10) && history.recent.length <= 14);
    assert.ok(history.summaries.length <= 6);
  }
  assert.deepEqual(
    history.recent.map((e) => e.seq),
    [106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120].slice(-history.recent.length),
  );
  assert.equal(history.summaries[0]!.toSeq - history.summaries[0]!.fromSeq, 4, 'a summary covers 5 steps');
  assert.equal(history.rollup?.fromSeq, 1);
  assert.equal(history.rollup!.toSeq + 1, history.summaries[0]!.fromSeq, 'nothing is lost between roll-up and summaries');
  const total = history.rollup!.steps + history.summaries.reduce((n, s) => n + s.steps, 0) + history.recent.length;
  assert.equal(total, 120);
  const failed = history.rollup!.failed + history.summaries.reduce((n, s) => n + s.failed, 0) + history.recent.filter((e) => !e.ok).length;
  assert.equal(failed, 9, 'every failure is still counted');
  const text = renderHistory(history);
  assert.ok(text.split('\n').length <= 1 + 6 + 14);
  assert.match(text, /^steps 1-\d+: \d+ steps, \d+ failed \(extract×\d+, click×\d+\)$/m);
});
