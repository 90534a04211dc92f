import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { closeSharedBrowser } from '../../src/browser/chromium.js';
import { createTables, startLocalDynamoDb, type LocalDynamoDb } from '../../twin/aws/dynamodb.js';
import { FileEvidenceSink } from '../../planner/evidence.js';
import { memoryLogger, type PlannerLogger } from '../../planner/log.js';
import { LogNotifier } from '../../planner/notifier.js';
import { DynamoDbTaskStore } from '../../planner/stores/dynamodb-task-store.js';
import { FileTaskStore } from '../../planner/stores/file-task-store.js';
import { createTask, runTask, type RunnerDeps } from '../../planner/task-runner.js';
import type { TaskStore } from '../../planner/task-state.js';
import { startWorld, type World } from './world.js';

let world: World;
let dynamo: LocalDynamoDb;
const clients: DynamoDBClient[] = [];

before(async () => {
  world = await startWorld();
  dynamo = await startLocalDynamoDb();
  await createTables(dynamoClient(), 'planner-resume');
});
after(async () => {
  for (const c of clients) c.destroy();
  await dynamo.stop();
  await world.close();
  await closeSharedBrowser();
});

function dynamoClient(): DynamoDBClient {
  const client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  clients.push(client);
  return client;
}

const PLAN = JSON.stringify([
  { action: 'select', target: { label: '状态' }, value: '待处理' },
  { action: 'click', target: { role: 'button', name: '查询' } },
  { action: 'wait_for', target: { role: 'table', name: '差异清单' } },
  { action: 'extract', target: { role: 'table', name: '差异清单' }, as: 'pending_rows', mode: 'table' },
  { action: 'screenshot', as: 'pending-list' },
]);

/** Stops the run (between steps, as a crash after a persisted step would) once `n` steps completed. */
function crashAfter(n: number, controller: AbortController, inner: PlannerLogger): PlannerLogger {
  let done = 0;
  return {
    log(event, fields) {
      inner.log(event, fields);
      if (event === 'planner.step' && fields?.['ok'] === true && ++done === n) controller.abort();
    },
  };
}

for (const [kind, makeStore] of [
  ['file', () => new FileTaskStore(join(world.dir, 'resume-tasks'))],
  ['dynamodb', () => new DynamoDbTaskStore(dynamoClient(), 'planner-resume')],
] as Array<[string, () => TaskStore]>) {
  test(`a task interrupted after step 3 resumes from its persisted state (${kind} store)`, async () => {
    const config = world.plannerConfig(kind === 'file' ? 'openai' : 'bedrock');
    const evidence = new FileEvidenceSink(join(world.dir, `resume-${kind}-evidence`));
    const logger = memoryLogger();
    const base = (store: TaskStore, log: PlannerLogger): RunnerDeps => ({
      store,
      pack: world.pack,
      config,
      baseUrl: world.sim.url,
      model: world.model(config, logger),
      notifier: new LogNotifier(log),
      evidence,
      logger: log,
    });

    const firstStore = makeStore();
    const task = await createTask(
      firstStore,
      { instruction: '列出待处理的差异', site: 'vendor-sim', tenant: 'acme', startUrl: '/diff/list?tenant=acme' },
      { pack: world.pack, writeWords: config.write_words },
    );
    const requestsAtStart = world.fake.requests.length;
    world.fake.reply(PLAN);
    const controller = new AbortController();
    const first = await world.openPage();
    const interrupted = await runTask(task.taskId, first.page, {
      ...base(firstStore, crashAfter(3, controller, logger)),
      signal: controller.signal,
    });
    await first.close(); // the process and its browser context are gone
    assert.equal(interrupted.status, 'running');
    assert.equal(interrupted.cursor, 3);
    assert.equal(world.fake.requests.length - requestsAtStart, 1);

    // A new process: a new store client, a new logged-in page on about:blank.
    world.fake.reply('[]');
    const second = await world.openPage();
    try {
      const restartedStore = makeStore();
      const persisted = await restartedStore.get(task.taskId);
      assert.equal(persisted?.status, 'running');
      assert.equal(persisted?.lastUrl, '/diff/list?tenant=acme&status=PENDING', 'where the task was is persisted');
      const done = await runTask(task.taskId, second.page, base(restartedStore, logger));
      assert.equal(done.status, 'succeeded');
      assert.equal(done.stepsExecuted, 5);
      assert.deepEqual(
        done.history.recent.map((e) => e.seq),
        [1, 2, 3, 4, 5],
        'no step ran twice',
      );
      assert.equal(world.fake.requests.length - requestsAtStart, 2, 'the plan was not drafted again: one more call, the closing []');
      const [resumed] = logger.events('planner.task_resumed');
      assert.equal(resumed?.['cursor'], 3);
      const rows = done.outputs.find((o) => o.kind === 'extract')!;
      const table = JSON.parse(await readFile(evidence.pathOf(rows.key), 'utf8')) as { value: string[][] };
      const data = table.value.slice(1);
      assert.ok(data.length > 0);
      assert.ok(
        data.every((cells) => cells.includes('待处理')),
        'the resumed task read the filtered page it had reached',
      );
    } finally {
      await second.close();
    }
  });
}
