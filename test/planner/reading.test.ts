import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FileEvidenceSink } from '../../planner/evidence.js';
import { runJob } from '../../planner/jobs.js';
import { memoryLogger } from '../../planner/log.js';
import { LogNotifier } from '../../planner/notifier.js';
import { describePage } from '../../planner/page-description.js';
import { FileTaskStore } from '../../planner/stores/file-task-store.js';
import { visualReadFallback } from '../../planner/visual.js';
import { useWorld } from './world.js';

const world = useWorld();

function jobDeps(name: string) {
  const config = world.plannerConfig('openai');
  const logger = memoryLogger();
  const evidence = new FileEvidenceSink(join(world.dir, name, 'evidence'));
  return {
    evidence,
    logger,
    deps: {
      store: new FileTaskStore(join(world.dir, name, 'tasks')),
      pack: world.pack,
      config,
      baseUrl: world.sim.url,
      notifier: new LogNotifier(logger),
      evidence,
      logger,
    },
  };
}

test('the page description is semantic, compact and held to its budget', async () => {
  const { page, close } = await world.openPage();
  try {
    await page.goto(`${world.sim.url}/diff/list?tenant=acme&status=all`);
    const full = await describePage(page, { budgetChars: 4000, tableRowsShown: 3, rowKeyAttribute: 'data-bill' });
    assert.equal(full.url, '/diff/list?tenant=acme&status=all');
    assert.match(full.text, /combobox "状态" options: 全部 \(selected\), 待处理, 处理中, 已处理, 已退款/);
    assert.match(full.text, /button "查询"/);
    assert.match(full.text, /link "下载对账文件" -> \/settlement\.csv\?tenant=acme/);
    assert.match(full.text, /columns: 单号 \| 租户 \| 差异类型 \| 金额 \| 状态 \| 更新时间 \| 操作/);
    assert.match(full.text, /… 7 more rows/);
    assert.match(full.text, /data-field: bill_no, tenant, kind, amount, status/);
    assert.match(full.text, /rows keyed by data-bill: 10/);
    assert.doesNotMatch(full.text, /<[a-z]|class=|btn-primary/, 'no raw HTML, no class names');
    assert.ok(full.text.length < 2000, `${full.text.length} chars`);
    const small = await describePage(page, { budgetChars: 600, tableRowsShown: 3 });
    assert.ok(small.truncated);
    assert.ok(small.text.length <= 600);
    assert.match(small.text, /more lines cut to fit the budget/);
    assert.notEqual(small.hash, full.hash);

    await page.goto(`${world.sim.url}/diff/ACME-202611-0013/refund`);
    const refund = await describePage(page, { budgetChars: 4000, tableRowsShown: 3 });
    assert.match(refund.text, /iframe "退款表单" \(use within: \{"frameTitle": "退款表单"\}\):\n(.*\n)*\s+- button "提交退款"/);
  } finally {
    await close();
  }
});

test('job: download the settlement report into the evidence store (no model involved)', async () => {
  const { deps, evidence } = jobDeps('job-download');
  const requests = world.fake.requests.length;
  const { page, close } = await world.openPage();
  try {
    const done = await runJob(
      {
        kind: 'download_report',
        name: 'daily-settlement',
        tenant: 'acme',
        page: '/diff/list?tenant=acme',
        link: { role: 'link', name: '下载对账文件' },
        file: 'settlement-acme.csv',
      },
      page,
      deps,
    );
    assert.equal(done.status, 'succeeded');
    assert.equal(world.fake.requests.length, requests);
    const csv = done.outputs.find((o) => o.kind === 'download')!;
    assert.match(csv.key, /^planner\/acme\/T-[^/]+\/0004-settlement-acme\.csv$/);
    assert.equal(csv.contentType, 'text/csv; charset=utf-8');
    assert.match(await readFile(evidence.pathOf(csv.key), 'utf8'), /^\uFEFFbill_no,/);
    assert.ok(done.outputs.some((o) => o.as === 'before-download'));
    await readFile(evidence.pathOf(`planner/acme/${done.taskId}/record.json`));
  } finally {
    await close();
  }
});

test('job: a scheduled inspection screenshots pages, legibly in Chinese', async () => {
  const { deps, evidence } = jobDeps('job-inspection');
  const { page, close } = await world.openPage();
  try {
    const done = await runJob(
      {
        kind: 'inspection',
        name: 'morning-check',
        tenant: 'acme',
        pages: [
          { url: '/diff/list?tenant=acme&status=PENDING', as: 'pending' },
          { url: '/diff/ACME-202611-0001', as: 'detail-0001' },
        ],
      },
      page,
      deps,
    );
    assert.equal(done.status, 'succeeded');
    const shots = done.outputs.filter((o) => o.kind === 'screenshot');
    assert.deepEqual(
      shots.map((s) => s.as),
      ['pending', 'detail-0001'],
    );
    for (const shot of shots) assert.ok(shot.bytes > 10_000, `${shot.as} is a real page image`);
    if (process.env['PLANNER_KEEP_SCREENSHOT']) {
      await (await import('node:fs/promises')).copyFile(evidence.pathOf(shots[0]!.key), process.env['PLANNER_KEEP_SCREENSHOT']);
    }
  } finally {
    await close();
  }
});

test('job: extract the pending table to JSON', async () => {
  const { deps, evidence } = jobDeps('job-extract');
  const { page, close } = await world.openPage();
  try {
    const done = await runJob(
      {
        kind: 'extract_table',
        name: 'pending-rows',
        tenant: 'acme',
        page: '/diff/list?tenant=acme',
        before: [
          { action: 'select', target: { label: '状态' }, value: '待处理' },
          { action: 'click', target: { role: 'button', name: '查询' } },
        ],
        table: { role: 'table', name: '差异清单' },
        as: 'pending_rows',
      },
      page,
      deps,
    );
    assert.equal(done.status, 'succeeded');
    const out = done.outputs.find((o) => o.kind === 'extract')!;
    const json = JSON.parse(await readFile(evidence.pathOf(out.key), 'utf8')) as { url: string; value: string[][] };
    assert.equal(json.url, '/diff/list?tenant=acme&status=PENDING');
    assert.deepEqual(json.value[0]!.slice(0, 2), ['单号', '租户']);
    assert.equal(json.value.length, 11, 'header and the first page of ten');
    assert.ok(json.value.slice(1).every((row) => row[4] === '待处理'));
  } finally {
    await close();
  }
});

test('a job whose read keeps failing ends in waiting_confirm after two tries', async () => {
  const { deps, logger } = jobDeps('job-stuck');
  const { page, close } = await world.openPage();
  try {
    const done = await runJob(
      {
        kind: 'download_report',
        name: 'missing-link',
        tenant: 'acme',
        page: '/diff/list?tenant=acme',
        link: { role: 'link', name: '导出全部' },
        file: 'x.csv',
      },
      page,
      { ...deps, config: { ...deps.config, step_timeout_ms: 1000 } },
    );
    assert.equal(done.status, 'waiting_confirm');
    assert.equal(done.retryCount, 2);
    assert.equal(logger.events('planner.notify').length, 1);
  } finally {
    await close();
  }
});

test('visual tier: on a redesigned page it reads with a read-only plan, marks the data visual and never a verdict', async () => {
  const config = world.plannerConfig('bedrock');
  const logger = memoryLogger();
  const journalBefore = (await world.control.journal()).length;
  await world.control.setFaults([{ kind: 'redesign', tenant: 'acme' }]);
  const { page, close } = await world.openPage();
  try {
    await page.goto(`${world.sim.url}/diff/list?tenant=acme&status=PENDING`);
    const before = await describePage(page, { budgetChars: 4000, tableRowsShown: 3, rowKeyAttribute: 'data-bill' });
    assert.match(before.text, /no data-field attributes.*rows keyed by data-bill: 0/, 'the structured contract is gone');
    world.fake.reply(
      JSON.stringify([{ action: 'click', target: { role: 'button', name: '标为已处理' } }]),
      JSON.stringify([
        { action: 'wait_for', target: { role: 'table', name: '差异单列表' } },
        { action: 'extract', target: { role: 'table', name: '差异单列表' }, as: 'pending_rows', mode: 'table' },
        { action: 'screenshot', as: 'redesigned-list' },
      ]),
    );
    const result = await visualReadFallback({
      page,
      instruction: '读取待处理差异单列表',
      pack: world.pack,
      model: world.model(config, logger),
      config,
      baseUrl: world.sim.url,
      logger,
      tenant: 'acme',
    });
    assert.equal(result.tier, 'visual');
    assert.equal(result.verdictEligible, false);
    assert.ok(!('verdict' in result));
    assert.match(
      result.attempts[0]!.reason ?? '',
      /not read-only; a visual extraction may only open, wait_for, expect, extract, screenshot and click links or pagination/,
    );
    const rows = result.data['pending_rows'] as string[][];
    assert.deepEqual(rows[0]!.slice(0, 2), ['状态', '单号']);
    assert.ok(rows.slice(1).some((r) => r[1] === 'ACME-202611-0001' && r[0] === '待处理'));
    assert.equal(result.screenshots.length, 1);
    assert.match(world.fake.requests.at(-1)!.system, /READ-ONLY extraction/);
    assert.equal((await world.control.journal()).length, journalBefore, 'nothing was written');
  } finally {
    await world.control.setFaults([]);
    await close();
  }
});
