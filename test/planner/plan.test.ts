import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSitePack } from '../../src/sitepack/load.js';
import { parsePlannerConfig } from '../../planner/config.js';
import { memoryLogger } from '../../planner/log.js';
import { createPlannerModel } from '../../planner/providers/index.js';
import { draftPlan, PlanRejectedError, type DraftRequest } from '../../planner/plan.js';
import { extractJson, findLoop, judgeAnswer } from '../../planner/plan-validation.js';
import type { PageDescription } from '../../planner/page-description.js';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server.js';

const pack = loadSitePack('sitepacks/vendor-sim.yaml');
let fake: FakeModelServer;
before(async () => {
  fake = await startFakeModelServer();
});
after(() => fake.close());

const listPage: PageDescription = {
  url: '/diff/list?tenant=acme',
  title: '差异清单 - 供应商对账后台',
  text: [
    'URL: /diff/list?tenant=acme',
    'Page:',
    '- combobox "状态" options: 全部 (selected), 待处理, 处理中, 已处理, 已退款',
    '- button "查询"',
    '- link "下载对账文件" -> /settlement.csv?tenant=acme',
    '- table "差异清单":',
  ].join('\n'),
  hash: 'h',
  truncated: false,
  contract: { fields: ['bill_no', 'status'], testIds: ['current-user'] },
};

const GOOD = JSON.stringify([
  { action: 'select', target: { label: '状态' }, value: '待处理' },
  { action: 'click', target: { role: 'button', name: '查询' } },
  { action: 'wait_for', target: { role: 'table', name: '差异清单' } },
  { action: 'download', target: { role: 'link', name: '下载对账文件' }, as: 'settlement.csv' },
]);

const request: DraftRequest = { instruction: '把今天待处理的差异导出成CSV', tenant: 'acme', page: listPage, pack };

function modelFor(wire: 'bedrock' | 'openai', logger = memoryLogger()) {
  const config = parsePlannerConfig({
    provider: wire,
    model: wire === 'bedrock' ? 'anthropic.claude-3-5-sonnet-20240620-v1:0' : 'qwen2.5-14b-instruct',
    endpoint: wire === 'bedrock' ? fake.bedrockEndpoint : fake.url,
  });
  return { model: createPlannerModel(config, { logger, credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'x' } }), config, logger };
}

async function draft(wire: 'bedrock' | 'openai', answers: string[]) {
  const { model, config, logger } = modelFor(wire);
  const firstRequest = fake.requests.length;
  fake.reply(...answers);
  const settings = { maxAttempts: config.max_attempts, maxTokens: config.max_tokens, writeWords: config.write_words, logger };
  try {
    const outcome = await draftPlan(model, request, settings);
    return { outcome, error: undefined, requests: fake.requests.slice(firstRequest), logger };
  } catch (error) {
    return { outcome: undefined, error: error as PlanRejectedError, requests: fake.requests.slice(firstRequest), logger };
  } finally {
    assert.equal(fake.pending(), 0, 'every scripted answer was asked for');
  }
}

for (const wire of ['bedrock', 'openai'] as const) {
  describe(`drafting over the ${wire} wire format`, () => {
    test('a good plan is accepted at once', async () => {
      const { outcome, requests } = await draft(wire, [GOOD]);
      assert.equal(outcome?.plan.kind, 'reversible', 'it selects a filter and presses 查询: page state only');
      assert.equal(outcome?.plan.steps.length, 4);
      assert.equal(outcome?.attempts.length, 1);
      assert.equal(requests.length, 1);
      assert.equal(requests[0]!.wire, wire);
      assert.match(requests[0]!.system, /at most 10 steps/);
      assert.match(requests[0]!.system, /Never use CSS, XPath, class or id selectors/);
      assert.match(requests[0]!.system, /refund \(irreversible\)/);
      assert.match(requests[0]!.messages[0]!.content, /Goal: 把今天待处理的差异导出成CSV/);
      assert.match(requests[0]!.messages[0]!.content, /button "查询"/);
    });

    test('malformed JSON is re-asked with the parse error, then accepted', async () => {
      const { outcome, requests } = await draft(wire, ['[{"action": "click", "target": {"role": "button", "name": "查询"}', GOOD]);
      assert.equal(outcome?.attempts.length, 2);
      assert.match(outcome!.attempts[0]!.reason!, /not valid JSON/);
      const reask = requests[1]!.messages;
      assert.equal(reask.length, 3, 'user, the rejected answer, the re-ask');
      assert.equal(reask[1]!.role, 'assistant');
      assert.match(reask[2]!.content, /rejected: the answer is not valid JSON/);
    });

    test('prose around JSON is rejected (strict), re-asked, then accepted', async () => {
      const { outcome, requests } = await draft(wire, [`好的，以下是计划：\n${GOOD}\n希望有帮助。`, GOOD]);
      assert.equal(outcome?.attempts.length, 2);
      assert.match(outcome!.attempts[0]!.reason!, /prose around the JSON, before it \("好的，以下是计划："\) and after it/);
      assert.match(requests[1]!.messages[2]!.content, /no explanation and no text outside it/);
    });

    test('a model that keeps adding prose fails after the bounded attempts, with every reason recorded', async () => {
      const prose = `Here is the plan: ${GOOD}`;
      const { error, requests, logger } = await draft(wire, [prose, prose, prose]);
      assert.ok(error instanceof PlanRejectedError);
      assert.equal(error.attempts.length, 3);
      assert.ok(error.attempts.every((a) => /prose around the JSON/.test(a.reason ?? '')));
      assert.equal(requests.length, 3);
      assert.equal(logger.events('planner.model_call').length, 3, 'one log line per call');
    });

    test('a hallucinated action is refused every time and the draft fails', async () => {
      const evil = JSON.stringify([{ action: 'eval', value: 'document.querySelector(".export-btn").click()' }]);
      const { error } = await draft(wire, [evil, evil, evil]);
      assert.ok(error instanceof PlanRejectedError);
      assert.match(error.attempts[0]!.reason!, /action "eval", which is not allowed; the only actions are open, click/);
      assert.match(error.message, /no acceptable plan after 3 attempt/);
    });

    test('class selectors are refused with the reason until the model uses semantic locators', async () => {
      const cssPrefixed = JSON.stringify([{ action: 'click', value: 'css=.export-btn' }]);
      const cssClass = JSON.stringify([{ action: 'click', target: { text: '.btn-primary' } }]);
      const { outcome, requests } = await draft(wire, [cssPrefixed, cssClass, GOOD]);
      assert.equal(outcome?.attempts.length, 3);
      assert.match(outcome!.attempts[0]!.reason!, /selector string \("css=\.export-btn"\)/);
      assert.match(outcome!.attempts[1]!.reason!, /target\.text is a selector string \("\.btn-primary"\)/);
      assert.match(requests[2]!.messages.at(-1)!.content, /\.btn-primary/);
    });

    test('a looping plan is refused; after the bounded attempts the draft fails', async () => {
      const step = (name: string) => ({ action: 'click', target: { role: 'link', name } });
      const loop = JSON.stringify([
        step('下一页'),
        { action: 'extract', target: { role: 'table' }, as: 'rows', mode: 'table' },
        step('下一页'),
        { action: 'extract', target: { role: 'table' }, as: 'rows', mode: 'table' },
      ]);
      const { error } = await draft(wire, [loop, loop, loop]);
      assert.ok(error instanceof PlanRejectedError);
      assert.match(error.attempts[0]!.reason!, /steps 1-2 are repeated 2 times in a row; the plan loops/);
    });
  });
}

test('an irreversible commit is refused unless the plan names the site-pack action, which makes it a hand-off', async () => {
  const refundSteps = [
    { action: 'open', url: '/diff/ACME-202611-0013/refund' },
    { action: 'fill', within: { frameTitle: '退款表单' }, target: { label: '退款金额' }, value: '753.00' },
    { action: 'click', within: { frameTitle: '退款表单' }, target: { role: 'button', name: '提交退款' } },
  ];
  const handoff = JSON.stringify({
    sitePackAction: 'refund',
    params: { billNo: 'ACME-202611-0013', amount: '753.00' },
    steps: refundSteps,
  });
  const { outcome } = await draft('openai', [JSON.stringify(refundSteps), handoff]);
  assert.match(
    outcome!.attempts[0]!.reason!,
    /irreversible site-pack action "refund"; the planner never performs irreversible steps itself/,
  );
  assert.equal(outcome?.plan.kind, 'handoff');
  assert.equal(outcome?.plan.sitePackAction, 'refund');
  assert.deepEqual(outcome?.plan.params, { billNo: 'ACME-202611-0013', amount: '753.00' });
});

describe('the rules, one by one', () => {
  const ctx = {
    pack,
    writeWords: parsePlannerConfig({ provider: 'scripted', model: 's' }).write_words,
    policy: 'task' as const,
    allowDone: false,
  };

  test('the 退款 button in a list row is a refund trigger too, and a named but wrong action is refused', () => {
    const verdict = judgeAnswer(JSON.stringify([{ action: 'click', target: { role: 'button', name: '退款' } }]), ctx);
    assert.equal(verdict.ok, false);
    const wrong = judgeAnswer(
      JSON.stringify({ sitePackAction: 'mark_processed', steps: [{ action: 'click', target: { role: 'button', name: '提交退款' } }] }),
      ctx,
    );
    assert.ok(!wrong.ok && /belongs to "refund", not to the named sitePackAction "mark_processed"/.test(wrong.reason));
    const unknown = judgeAnswer(JSON.stringify({ sitePackAction: 'wire_money', steps: [] }), ctx);
    assert.ok(!unknown.ok && /not an action of site pack "vendor-sim"/.test(unknown.reason));
  });

  test('reversible site-pack writes are handed over too, and unknown write buttons are refused', () => {
    const mark = judgeAnswer(
      JSON.stringify([{ action: 'click', within: { dialog: true }, target: { role: 'button', name: '确认' } }]),
      ctx,
    );
    assert.ok(!mark.ok && /site-pack write "mark_processed"; vendor writes go through the guarded write path/.test(mark.reason));
    const del = judgeAnswer(JSON.stringify([{ action: 'click', target: { role: 'button', name: '删除差异单' } }]), ctx);
    assert.ok(!del.ok && /looks like a vendor write that no site-pack action describes/.test(del.reason));
    const logout = judgeAnswer(JSON.stringify([{ action: 'click', target: { role: 'link', name: '退出' } }]), ctx);
    assert.ok(!logout.ok && /end the vendor session/.test(logout.reason));
    const openLogout = judgeAnswer(JSON.stringify([{ action: 'open', url: '/logout' }]), ctx);
    assert.ok(!openLogout.ok && /login\/logout page/.test(openLogout.reason));
    const openLogin = judgeAnswer(JSON.stringify([{ action: 'open', url: '/login?next=/diff/list' }]), ctx);
    assert.ok(!openLogin.ok);
  });

  test('over-long plans, row scopes, empty plans and "done"', () => {
    const eleven = Array.from({ length: 11 }, (_, i) => ({ action: 'screenshot', as: `p${i}` }));
    const long = judgeAnswer(JSON.stringify(eleven), ctx);
    assert.ok(!long.ok && /11 steps; at most 10/.test(long.reason));
    const row = judgeAnswer(JSON.stringify([{ action: 'click', within: { row: true }, target: { role: 'link', name: '详情' } }]), ctx);
    assert.ok(!row.ok && /within \{"row": true\}/.test(row.reason));
    assert.equal(judgeAnswer('[]', ctx).ok, false);
    const done = judgeAnswer('[]', { ...ctx, allowDone: true });
    assert.ok(done.ok && done.plan.kind === 'done');
  });

  test('a fenced answer is accepted; a plan identical to the one just executed is a loop', () => {
    const fenced = judgeAnswer('```json\n[{"action":"screenshot","as":"page"}]\n```', ctx);
    assert.ok(fenced.ok);
    const again = judgeAnswer('[{"action":"screenshot","as":"page","note":"again"}]', {
      ...ctx,
      executedPlans: ['[{"action":"screenshot","as":"page"}]'],
    });
    assert.ok(!again.ok && /same plan that was just executed/.test(again.reason));
  });

  test('strict extraction and loop detection', () => {
    assert.deepEqual(extractJson(' [1] '), { ok: true, value: [1] });
    assert.equal(extractJson('[1] ok').ok, false);
    assert.equal(extractJson('no json here').ok, false);
    assert.equal(findLoop([{ a: 1 }, { a: 1 }]), undefined, 'two identical steps (e.g. 下一页 twice) are allowed');
    assert.match(findLoop([{ a: 1 }, { a: 1 }, { a: 1 }]) ?? '', /repeated 3 times/);
  });

  test('the visual policy allows reading and links only', () => {
    const visual = { ...ctx, policy: 'visual_read_only' as const };
    assert.ok(
      judgeAnswer(
        JSON.stringify([
          { action: 'click', target: { role: 'link', name: '下一页' } },
          { action: 'extract', target: { role: 'table' }, as: 'rows', mode: 'table' },
        ]),
        visual,
      ).ok,
    );
    const fill = judgeAnswer(JSON.stringify([{ action: 'fill', target: { label: '单号' }, value: 'x' }]), visual);
    assert.ok(!fill.ok && /not read-only/.test(fill.reason));
    const button = judgeAnswer(JSON.stringify([{ action: 'click', target: { role: 'button', name: '查询' } }]), visual);
    assert.ok(!button.ok);
    const download = judgeAnswer(
      JSON.stringify([{ action: 'download', target: { role: 'link', name: '下载对账文件' }, as: 'f.csv' }]),
      visual,
    );
    assert.ok(!download.ok);
  });
});
