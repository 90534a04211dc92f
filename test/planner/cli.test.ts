import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { closeSharedBrowser } from '../../src/browser/chromium.js';
import { runPlanCommand } from '../../src/planner/cli.js';
import { planArgs } from '../../src/cli/plan.js';
import { draftToSiteAction, loadDraft } from '../../src/planner/drafts.js';
import { memoryLogger } from '../../src/planner/log.js';
import { startWorld, type World } from './world.js';

let world: World;
let plannerConfigPath: string;
before(async () => {
  world = await startWorld();
  plannerConfigPath = join(world.dir, 'planner.yaml');
  await writeFile(
    plannerConfigPath,
    stringifyYaml({
      provider: 'openai',
      model: 'qwen2.5-14b-instruct',
      endpoint: world.fake.url,
      timeout_ms: 5000,
      drafts_dir: join(world.dir, 'drafts'),
      state_dir: join(world.dir, 'state'),
      evidence_dir: join(world.dir, 'evidence'),
    }),
  );
});
after(async () => {
  await world.close();
  await closeSharedBrowser();
});

const PLAN = JSON.stringify([
  { action: 'select', target: { label: '状态' }, value: '待处理' },
  { action: 'click', target: { role: 'button', name: '查询' } },
  { action: 'download', target: { role: 'link', name: '下载对账文件' }, as: 'settlement.csv' },
]);

function argv(...extra: string[]) {
  return planArgs([
    '把今天待处理的差异导出成CSV',
    '--site',
    'vendor-sim',
    '--tenant',
    'acme',
    '--base-url',
    world.sim.url,
    '--planner-config',
    plannerConfigPath,
    ...extra,
  ]);
}

test('plan drafts a reviewable file: instruction, page hash, model, steps; nothing runs', async () => {
  const lines: string[] = [];
  const journalBefore = (await world.control.journal()).length;
  world.fake.reply(`Sure! ${PLAN}`, PLAN);
  const result = await runPlanCommand(argv(), { out: (l) => lines.push(l), logger: memoryLogger() });
  assert.equal(result.exitCode, 0);
  assert.ok(result.draftPath?.startsWith(join(world.dir, 'drafts')));
  const draft = await loadDraft(result.draftPath!);
  assert.equal(draft.instruction, '把今天待处理的差异导出成CSV');
  assert.equal(draft.site, 'vendor-sim');
  assert.equal(draft.tenant, 'acme');
  assert.equal(draft.page.url, '/diff/list?tenant=acme&status=all&page=1&page_size=50');
  assert.match(draft.page.descriptionHash, /^[0-9a-f]{64}$/);
  assert.deepEqual(draft.model, { provider: 'openai', id: 'qwen2.5-14b-instruct' });
  assert.equal(draft.planKind, 'reversible');
  assert.equal(draft.steps.length, 3);
  assert.match(draft.attempts[0]!.reason!, /prose around the JSON/, 'the rejected first answer is on record');
  assert.match(await readFile(result.draftPath!, 'utf8'), /^# Paperclip plan draft: review the steps/);
  assert.match(lines[0]!, /Draft written: .*\.yaml \(reversible, 3 steps, 2 model call\(s\)\)/);
  assert.equal((await world.control.journal()).length, journalBefore);

  const action = draftToSiteAction(draft, world.pack, { description: '导出待处理差异', appliesTo: ['PENDING'] });
  assert.equal(action.reversibility, 'read_only');
  assert.equal(action.tiers.browser?.steps?.length, 3);
});

test('plan exits 2 and writes nothing when no acceptable plan comes back', async () => {
  const bad = JSON.stringify([{ action: 'click', selector: '.export-btn' }]);
  world.fake.reply(bad, bad, bad);
  const lines: string[] = [];
  const before = await readdir(join(world.dir, 'drafts'));
  const result = await runPlanCommand(argv(), { out: (l) => lines.push(l), logger: memoryLogger() });
  assert.equal(result.exitCode, 2);
  assert.match(lines.join('\n'), /No acceptable plan: no acceptable plan after 3 attempt\(s\):\n {2}1\. step 1 has a "selector" field/);
  assert.deepEqual(await readdir(join(world.dir, 'drafts')), before);
});

test('plan --run executes the task, persists it and prints one JSON summary line', async () => {
  world.fake.reply(PLAN, '[]');
  const lines: string[] = [];
  const result = await runPlanCommand(argv('--run'), { out: (l) => lines.push(l), logger: memoryLogger() });
  assert.equal(result.exitCode, 0);
  const summary = JSON.parse(lines.at(-1)!);
  assert.equal(summary.status, 'succeeded');
  assert.equal(summary.steps, 3);
  assert.ok(summary.outputs.some((k: string) => k.endsWith('-settlement.csv')));
  const stored = JSON.parse(await readFile(join(world.dir, 'state', `${summary.task}.json`), 'utf8'));
  assert.equal(stored.status, 'succeeded');
  await readFile(join(world.dir, 'evidence', 'planner', 'acme', summary.task, 'record.json'));
});

test('plan arguments are validated with the fix named', async () => {
  assert.throws(() => planArgs(['x', '--site']), /--site: it needs a value: --site <pack>/);
  assert.throws(() => planArgs(['x', '--sites', 'a']), /unknown flag --sites; did you mean --site\?/);
  await assert.rejects(runPlanCommand({ instruction: '', site: 'vendor-sim' }), /instruction: give the instruction in plain words/);
  await assert.rejects(runPlanCommand({ instruction: 'x', site: 'vendor-sim', tenant: 'ACME' }), /tenant: --tenant is a tenant id/);
  await assert.rejects(runPlanCommand({ instruction: 'x', site: 'vendor-sim', task: 'T-1' }), /--task resumes a task and needs --run/);
  await assert.rejects(
    runPlanCommand({ instruction: 'x', site: 'vendor-sim', tenant: 'umbrella', plannerConfig: plannerConfigPath }),
    /"umbrella" is not a tenant of the config; known: acme, globex, initech/,
  );
});
