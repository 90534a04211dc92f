import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FileEvidenceSink, sha256 } from '../../planner/evidence.js';
import { memoryLogger } from '../../planner/log.js';
import { LogNotifier } from '../../planner/notifier.js';
import { FileTaskStore } from '../../planner/stores/file-task-store.js';
import { createTask, runTask, type RunnerDeps } from '../../planner/task-runner.js';
import type { PlannerConfig } from '../../planner/config.js';
import { useWorld } from './world.js';

const world = useWorld();

const EXPORT_PENDING = JSON.stringify([
  { action: 'select', target: { label: '状态' }, value: '待处理' },
  { action: 'click', target: { role: 'button', name: '查询' } },
  { action: 'wait_for', target: { role: 'table', name: '差异清单' } },
  { action: 'screenshot', as: 'pending-list' },
  { action: 'download', target: { role: 'link', name: '下载对账文件' }, as: 'settlement.csv' },
]);

function depsFor(name: string, config: PlannerConfig) {
  const logger = memoryLogger();
  const evidence = new FileEvidenceSink(join(world.dir, name, 'evidence'));
  const deps: RunnerDeps = {
    store: new FileTaskStore(join(world.dir, name, 'tasks')),
    pack: world.pack,
    config,
    baseUrl: world.sim.url,
    model: world.model(config, logger),
    notifier: new LogNotifier(logger),
    evidence,
    logger,
  };
  return { deps, logger, evidence };
}

async function newTask(deps: RunnerDeps, instruction: string) {
  return createTask(
    deps.store,
    { instruction, site: 'vendor-sim', tenant: 'acme', startUrl: '/diff/list?tenant=acme' },
    { pack: deps.pack, writeWords: deps.config.write_words },
  );
}

test('"把今天待处理的差异导出成CSV": the drafted read-only plan runs and stores the CSV, a screenshot and a JSON record', async () => {
  const config = world.plannerConfig('openai');
  const { deps, evidence } = depsFor('export', config);
  const journalBefore = (await world.control.journal()).length;
  world.fake.reply(EXPORT_PENDING, '[]');
  const { page, close } = await world.openPage();
  try {
    const task = await newTask(deps, '把今天待处理的差异导出成CSV');
    const done = await runTask(task.taskId, page, deps);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.result?.outcome, 'completed');
    assert.equal(done.stepsExecuted, 5);
    assert.equal(done.plan?.kind, 'reversible');

    const csv = done.outputs.find((o) => o.kind === 'download');
    const shot = done.outputs.find((o) => o.kind === 'screenshot');
    assert.ok(csv && shot, 'a download and a screenshot were stored');
    const csvBody = await readFile(evidence.pathOf(csv.key));
    assert.equal(sha256(csvBody), csv.sha256, 'the recorded hash is the stored file');
    const text = csvBody.toString('utf8');
    assert.match(text, /^\uFEFFbill_no,tenant,kind,amount_cents,status,updated_at\r\n/);
    assert.match(text, /ACME-202611-0001,acme,mismatch,\d+,PENDING,/);
    assert.doesNotMatch(text, /GLOBEX/, "only the tenant's own bills");
    const png = await readFile(evidence.pathOf(shot.key));
    assert.deepEqual([...png.subarray(1, 4)], [...Buffer.from('PNG')]);

    const record = JSON.parse(await readFile(evidence.pathOf(`planner/acme/${task.taskId}/record.json`), 'utf8'));
    assert.equal(record.status, 'succeeded');
    assert.equal(record.instruction, '把今天待处理的差异导出成CSV');
    assert.deepEqual(
      record.outputs.map((o: { sha256: string }) => o.sha256),
      done.outputs.map((o) => o.sha256),
    );

    const [first, second] = world.fake.requests.slice(-2);
    assert.match(first!.messages[0]!.content, /combobox "状态" options: 全部 \(selected\)/, 'the model saw the page');
    assert.match(second!.messages[0]!.content, /The previous plan finished/);
    assert.match(second!.messages[0]!.content, /#5 .*download.*file settlement\.csv/, 'the history shows what was done');
    assert.equal((await world.control.journal()).length, journalBefore, 'no vendor-side write happened');
  } finally {
    await close();
  }
});

test('a failing step is re-decided with the failure reason, and the new plan finishes the task', async () => {
  const config = world.plannerConfig('bedrock', { step_timeout_ms: 1000 });
  const { deps, logger } = depsFor('redecide', config);
  const missingButton = JSON.stringify([{ action: 'click', target: { role: 'button', name: '导出Excel' } }]);
  const viaLink = JSON.stringify([{ action: 'download', target: { role: 'link', name: '下载对账文件' }, as: 'settlement.csv' }]);
  world.fake.reply(missingButton, viaLink, '[]');
  const { page, close } = await world.openPage();
  try {
    const task = await newTask(deps, '导出对账文件');
    await page.goto(`${world.sim.url}/diff/list?tenant=acme`); // already on the page: only the planned steps race the timeout
    const first = world.fake.requests.length;
    const done = await runTask(task.taskId, page, deps);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.retryCount, 1);
    assert.equal(done.consecutiveFailures, 0);
    const reask = world.fake.requests[first + 1]!;
    assert.equal(reask.wire, 'bedrock');
    assert.match(
      reask.messages[0]!.content,
      /The last step failed: click button "导出Excel" — step "click role=button name="导出Excel"" found nothing on \/diff\/list/,
    );
    assert.match(reask.messages[0]!.content, /Plan the remaining work from this page/);
    const failed = done.history.recent.find((e) => !e.ok);
    assert.match(failed?.error ?? '', /found nothing on \/diff\/list/);
    assert.equal(logger.events('planner.notify').length, 0, 'one failure alone does not call a person');
  } finally {
    await close();
  }
});

test('two consecutive failures stop the task in waiting_confirm and notify a person', async () => {
  const config = world.plannerConfig('openai', { step_timeout_ms: 1000 });
  const { deps, logger, evidence } = depsFor('stuck', config);
  world.fake.reply(
    JSON.stringify([{ action: 'click', target: { role: 'button', name: '导出Excel' } }]),
    JSON.stringify([{ action: 'click', target: { role: 'link', name: '导出报表' } }]),
  );
  const { page, close } = await world.openPage();
  try {
    const task = await newTask(deps, '导出Excel');
    await page.goto(`${world.sim.url}/diff/list?tenant=acme`);
    const done = await runTask(task.taskId, page, deps);
    assert.equal(done.status, 'waiting_confirm');
    assert.equal(done.consecutiveFailures, 2);
    assert.match(done.result?.reason ?? '', /2 consecutive steps failed; last: click link "导出报表"/);
    const [notice] = logger.events('planner.notify');
    assert.equal(notice?.['taskId'], task.taskId);
    assert.equal(notice?.['status'], 'waiting_confirm');
    const shot = done.outputs.find((o) => o.as === 'waiting_confirm-page');
    assert.ok(shot, 'the page the task got stuck on is kept as evidence');
    await readFile(evidence.pathOf(shot.key));
    assert.equal((await deps.store.get(task.taskId))?.status, 'waiting_confirm', 'the state is persisted');
  } finally {
    await close();
  }
});

test('over more than 100 steps the prompt stays bounded (history compressed)', async () => {
  const config = world.plannerConfig('bedrock', { max_task_steps: 400 });
  const { deps } = depsFor('long', config);
  const first = world.fake.requests.length;
  // Each round: ten cheap read steps, different per round so no plan repeats; done after 11 rounds.
  world.fake.respondWith((_request, index) => {
    const round = index - first + 1;
    if (round > 11) return '[]';
    const steps = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0
        ? { action: 'expect', target: { role: 'heading', name: '差异清单' } }
        : { action: 'extract', target: { role: 'heading', name: '差异清单' }, as: `title_r${round}_${i}` },
    );
    return JSON.stringify(steps);
  });
  const { page, close } = await world.openPage();
  try {
    const task = await newTask(deps, '反复读取页面标题（压力测试）');
    const done = await runTask(task.taskId, page, deps);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.stepsExecuted, 110);
    const sizes = world.fake.requests.slice(first).map((r) => r.bodyBytes);
    assert.equal(sizes.length, 12);
    const historyLines = (r: (typeof world.fake.requests)[number]) =>
      (/Done so far \(oldest first\):\n([\s\S]*?)\n\n/.exec(r.messages[0]!.content)?.[1] ?? '').split('\n').length;
    const last = world.fake.requests.at(-1)!;
    assert.ok(historyLines(last) <= 1 + 6 + 14, `history has ${historyLines(last)} lines`);
    assert.match(last.messages[0]!.content, /^steps 1-\d+: \d+ steps, 0 failed \(expect×\d+, extract×\d+\)$/m, 'old steps are rolled up');
    // Once the summaries are full (round 5 on), the prompt no longer grows with the step count.
    const steady = sizes.slice(5);
    assert.ok(Math.max(...steady) - Math.min(...steady) < 600, `prompt sizes after 50 steps: ${steady.join(', ')}`);
    assert.ok(Math.max(...sizes) < 12_000, `largest prompt ${Math.max(...sizes)} bytes`);
    assert.ok(JSON.stringify(done).length < 40_000, 'the stored task stays small too');
  } finally {
    world.fake.respondWith(() => ({ status: 500, body: '{"message":"unexpected call"}' }));
    await close();
  }
});

test('a plan that needs an irreversible site-pack action is handed off, never clicked', async () => {
  const config = world.plannerConfig('openai');
  const { deps } = depsFor('handoff', config);
  const journalBefore = (await world.control.journal()).length;
  world.fake.reply(
    JSON.stringify([
      { action: 'open', url: '/diff/ACME-202611-0013/refund' },
      { action: 'click', within: { frameTitle: '退款表单' }, target: { role: 'button', name: '提交退款' } },
    ]),
    JSON.stringify({ sitePackAction: 'refund', params: { billNo: 'ACME-202611-0013' }, steps: [] }),
  );
  const { page, close } = await world.openPage();
  try {
    const task = await newTask(deps, '给 ACME-202611-0013 退款');
    const done = await runTask(task.taskId, page, deps);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.result?.outcome, 'handoff');
    assert.equal(done.result?.handoff?.sitePackAction, 'refund');
    assert.equal(done.result?.handoff?.reversibility, 'irreversible');
    assert.equal(done.stepsExecuted, 0, 'nothing ran in the browser');
    assert.match(done.draftAttempts[0]?.reason ?? '', /irreversible site-pack action "refund"/);
    assert.equal((await world.control.journal()).length, journalBefore, 'the vendor saw no write');
  } finally {
    await close();
  }
});

test('a lost vendor session fails the task loudly, without re-deciding', async () => {
  const config = world.plannerConfig('openai');
  const { deps, logger } = depsFor('session', config);
  world.fake.reply(JSON.stringify([{ action: 'click', target: { role: 'button', name: '查询' } }]));
  const { page, close } = await world.openPage();
  try {
    const task = await newTask(deps, '查询差异');
    await page.goto(`${world.sim.url}/diff/list?tenant=acme`);
    // Revoked while the task is on the page: the next request the plan makes meets the 权限已变更 dialog.
    await world.control.addFault({ kind: 'session_revoked', identity: 'svc-recon-acme', times: 1 });
    const requestsBefore = world.fake.requests.length;
    const done = await runTask(task.taskId, page, deps);
    assert.equal(done.status, 'failed');
    assert.match(done.result?.reason ?? '', /the vendor session is gone: the vendor says "权限已变更，请重新登录"/);
    assert.equal(world.fake.requests.length - requestsBefore, 1, 'no re-planning after a session loss');
    assert.equal(logger.events('planner.notify')[0]?.['status'], 'failed');
  } finally {
    await world.control.setFaults([]);
    await close();
  }
});
