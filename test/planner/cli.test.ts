import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { closeSharedBrowser } from '../../src/browser/chromium.js';
import { runPlanCommand } from '../../planner/cli.js';
import { planArgs } from '../../src/cli/plan.js';
import { runSitepackDraft } from '../../src/cli/sitepack-draft.js';
import { draftToSiteAction, loadDraft } from '../../planner/drafts.js';
import { memoryLogger } from '../../planner/log.js';
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

/** The flags every planner command here shares: tenant acme on this file's simulator, with the fake model's config. */
const onTheSimulator = (extra: string[]) => [
  '--tenant',
  'acme',
  '--base-url',
  world.sim.url,
  '--planner-config',
  plannerConfigPath,
  ...extra,
];

function argv(...extra: string[]) {
  return planArgs(['把今天待处理的差异导出成CSV', '--site', 'vendor-sim', ...onTheSimulator(extra)]);
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

/** `paperclip sitepack draft`: the planner's draft mode, pointed at one page of a config's back office. */
const draftArgv = (...extra: string[]) => [
  '--config',
  'config/paperclip.local.yaml',
  '--url',
  '/diff/list?tenant=acme&status=all&page=1&page_size=50',
  '--instruction',
  'show the pending mismatches and download the settlement file',
  ...onTheSimulator(extra),
];

test('sitepack draft proposes steps for one page from its aria snapshot, as site-pack fragments to review; the vendor is not written', async () => {
  const journalBefore = await world.control.journal();
  const asked = world.fake.requests.length;
  world.fake.reply(PLAN);
  const lines: string[] = [];
  const { exitCode, result } = await runSitepackDraft(draftArgv(), { out: (l) => lines.push(l), logger: memoryLogger() });
  assert.equal(exitCode, 0, lines.join('\n'));
  const draft = await loadDraft(result.draftPath!);
  assert.equal(draft.site, 'vendor-sim', 'judged against the pack the config names');
  assert.equal(draft.page.url, '/diff/list?tenant=acme&status=all&page=1&page_size=50');
  assert.equal(draft.instruction, 'show the pending mismatches and download the settlement file');
  assert.deepEqual(
    draft.steps.map((step) => step.action),
    ['select', 'click', 'download'],
  );
  const request = world.fake.requests[asked]!;
  assert.match(request.messages[0]!.content, /查询/, 'the model saw the page described from its aria snapshot');
  assert.match(request.system, /mark_processed/, "the pack's write actions are named as off limits");
  const printed = lines.join('\n');
  assert.match(printed, /Proposed for review \(not executed\)/);
  assert.match(printed, /^list:\n {2}steps:\n {4}- action: select\n/m);
  assert.match(printed, /^ {2}drafted_read:\n {4}reversibility: read_only/m);
  assert.deepEqual(await world.control.journal(), journalBefore, 'the journal is unchanged: nothing proposed ran as a write');
});

test('sitepack draft refuses a proposal that would click a write: no draft, nothing written; arguments name the fix', async () => {
  const journalBefore = await world.control.journal();
  const write = JSON.stringify([{ action: 'click', target: { role: 'button', name: '标记处理' } }]);
  world.fake.reply(write, write, write);
  const before = await readdir(join(world.dir, 'drafts'));
  const lines: string[] = [];
  const { exitCode } = await runSitepackDraft(draftArgv(), { out: (l) => lines.push(l), logger: memoryLogger() });
  assert.equal(exitCode, 2);
  assert.match(lines.join('\n'), /No acceptable plan/);
  assert.deepEqual(await readdir(join(world.dir, 'drafts')), before);
  assert.deepEqual(await world.control.journal(), journalBefore);

  await assert.rejects(runSitepackDraft(['--config', 'config/paperclip.local.yaml', '--instruction', 'x']), /--url/);
  await assert.rejects(
    runSitepackDraft(['--config', 'config/paperclip.local.yaml', '--url', 'diff/list', '--instruction', 'x']),
    /--url is a path on the site/,
  );
});
