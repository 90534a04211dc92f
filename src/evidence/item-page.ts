import { z } from 'zod';
import type { AuditEvent } from '../domain/audit-chain.js';
import { eventsOfType, evidenceOf, hasType, isEvent, isEventOf } from '../domain/audit-events.js';
import type { Claim } from '../domain/claim.js';
import { escapeHtml } from '../http/html.js';
import { badge, fieldsTable, formatBytes, outcomeTone, page, relativeHref } from './html.js';
import { PAGE_NAME, parseFolderJson, type HashedObject } from './folder.js';

/**
 * The evidence page of one write: a timeline built from the item's audit
 * chain with the screenshots inline, the recorded fields, and the sha256 of
 * every object in the folder. Links are relative so the folder can be synced
 * to disk and opened offline.
 */

/** record.json as complete()/takeover() write it; read loosely so an old or damaged record still renders. */
export const OutcomeRecord = z
  .object({
    outcome: z.string(),
    key: z.string(),
    identity: z.string(),
    tenant: z.string(),
    taskId: z.string(),
    billNo: z.string(),
    action: z.string(),
    tier: z.string().nullish(),
    executionArn: z.string().nullish(),
    approval: z
      .object({ approvalId: z.string().optional(), approver: z.string().optional(), decidedAt: z.string().optional() })
      .passthrough()
      .nullish(),
    preState: z.string().nullish(),
    verdict: z.string().nullish(),
    observedStatus: z.string().nullish(),
    readbackSource: z.string().nullish(),
    degraded: z.boolean().nullish(),
    evidence: z.array(z.object({ key: z.string(), sha256: z.string(), bytes: z.number().optional() }).passthrough()).default([]),
    recordedAt: z.string().nullish(),
    reason: z.string().nullish(),
    error: z.string().nullish(),
  })
  .passthrough();
export type OutcomeRecord = z.infer<typeof OutcomeRecord>;

export function parseRecord(body: Buffer | undefined): { record?: OutcomeRecord; problem?: string } {
  if (!body) return {};
  const parsed = parseFolderJson('record.json', body, OutcomeRecord);
  return parsed.ok ? { record: parsed.value } : { problem: parsed.problem };
}

export interface ItemPageInput {
  key: string;
  /** Objects in the item's folder now (the page itself excluded). */
  objects: ReadonlyMap<string, HashedObject>;
  record?: OutcomeRecord;
  recordProblem?: string;
  claim?: Claim;
  events: readonly AuditEvent[];
  /** Keys of sibling item folders that have a page, for compensation links. */
  siblingPages: ReadonlySet<string>;
  /** Whether the batch folder has (or is about to get) its own page. */
  batchPage: boolean;
}

type Phase = 'route' | 'claim' | 'approval' | 'before' | 'action' | 'after' | 'readback' | 'outcome' | 'compensation' | 'other';

const PHASES: Record<string, { phase: Phase; label: string }> = {
  routed: { phase: 'route', label: '路由校验 Routed' },
  claimed: { phase: 'claim', label: '幂等占位 Claimed' },
  claim_taken_over: { phase: 'claim', label: '接管占位 Claim taken over' },
  approval_requested: { phase: 'approval', label: '请求审批 Approval requested' },
  approved: { phase: 'approval', label: '已审批 Approved' },
  rejected: { phase: 'approval', label: '已拒绝 Rejected' },
  expired: { phase: 'approval', label: '审批过期 Expired' },
  pre_state_registered: { phase: 'before', label: '操作前快照与退路 Before: pre-state and way back registered' },
  stale: { phase: 'before', label: '状态已变 Stale: the vendor state no longer fits the action' },
  write_started: { phase: 'action', label: '执行写入 Action: commit' },
  stage_done_checked: { phase: 'action', label: '阶段完成检查 Stage done check' },
  write_failed: { phase: 'after', label: '写入失败 Action failed' },
  session_slot_lost: {
    phase: 'after',
    label:
      '会话槽丢失 Vendor session slot lost after the commit click (another holder took it; the write still finished and was read back)',
  },
  readback: { phase: 'readback', label: '独立回读 Readback' },
  completed: { phase: 'outcome', label: '完成 Done' },
  takeover: { phase: 'outcome', label: '人工接管 Human takeover' },
  compensation_started: { phase: 'compensation', label: '开始补偿 Compensation started' },
  compensated: { phase: 'compensation', label: '已补偿 Compensated (verified by readback)' },
  compensation_failed: { phase: 'compensation', label: '补偿失败 Compensation failed' },
};

/** Which event a screenshot belongs to: the last event of its phase. */
const SCREENSHOT_PHASE: Record<string, { types: string[]; caption: string }> = {
  'before.png': { types: ['pre_state_registered', 'stale'], caption: '操作前 Before (before anything was clicked)' },
  'before-commit.png': { types: ['write_started'], caption: '提交前 Just before the commit click' },
  'readback.png': { types: ['readback'], caption: '回读 Readback session (never the write session)' },
};

/**
 * Where a step's picture was not taken by policy (docs/evidence.md), the page says what records that moment
 * instead, so a missing figure never reads as missing evidence.
 */
function unpicturedNote(event: AuditEvent, index: number, input: ItemPageInput): string[] {
  const { events, objects } = input;
  const isLast = (type: string) => events.map((e) => e.type).lastIndexOf(type) === index;
  // A write whose stages had all landed already clicked nothing: there is no commit click to picture.
  if (
    isEvent(event, 'write_started') &&
    event.data.tier === 'browser' &&
    event.data.alreadyDone === undefined &&
    isLast('write_started') &&
    !objects.has('before-commit.png')
  ) {
    return objects.has('trace.zip')
      ? [
          `<p>提交前的页面记录在 <a href="${relativeHref('trace.zip')}">trace.zip</a> 中提交点击的 DOM 快照里。 ` +
            'The page just before the commit click is the DOM snapshot of that click in trace.zip.</p>',
        ]
      : [
          '<p class="note">提交前的页面没有记录：既无截图也无 trace。 Nothing records the page just before the commit click: no picture, no trace.</p>',
        ];
  }
  if (isEvent(event, 'readback') && event.data.verdict === 'confirmed' && !picturedBy(event, 'readback.png'))
    return [
      '<p>已确认的回读（写入已稳定）：上面的观察记录与 after.png 即证据。 ' +
        'A confirmed readback of a settled write: its observations above and after.png record it.</p>',
    ];
  return [];
}

/**
 * The names of the objects an event's own evidence lists. Steps record StoredObjects ({ key, sha256 }); the
 * takeover queue records plain keys.
 */
function evidenceNames(event: AuditEvent): string[] {
  return evidenceOf(event).map((e) => (typeof e === 'string' ? e : e.key).split('/').at(-1)!);
}

/** Whether an event's own evidence names the picture (steps record the objects they stored). */
function picturedBy(event: AuditEvent, name: string): boolean {
  return evidenceNames(event).includes(name);
}

function figure(name: string, caption: string): string {
  return `<figure><a href="${relativeHref(name)}"><img src="${relativeHref(name)}" alt="${escapeHtml(caption)}"></a><figcaption>${escapeHtml(caption)} — <code>${escapeHtml(name)}</code></figcaption></figure>`;
}

function shortValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  const json = JSON.stringify(value);
  return json.length > 300 ? `${json.slice(0, 300)}…` : json;
}

function eventDetails(event: AuditEvent, input: ItemPageInput): string {
  const rows: Array<[string, string]> = [];
  for (const [field, value] of Object.entries(event.data ?? {})) {
    if (field === 'item' && value && typeof value === 'object') {
      const item = value as Record<string, unknown>;
      for (const f of ['requestedBy', 'identity', 'tier', 'reversibility', 'needsApproval', 'compensates']) {
        if (item[f] !== undefined) rows.push([f, escapeHtml(shortValue(item[f]))]);
      }
      continue;
    }
    if (field === 'evidence' && Array.isArray(value)) {
      // A step that stored nothing (a confirmed readback of a settled write) gets no empty row.
      const names = evidenceNames(event);
      if (names.length > 0)
        rows.push([
          'evidence',
          names.map((n) => (input.objects.has(n) ? `<a href="${relativeHref(n)}">${escapeHtml(n)}</a>` : escapeHtml(n))).join(', '),
        ]);
      continue;
    }
    if (field === 'inverseKey' && typeof value === 'string') {
      rows.push(['inverseKey', siblingLink(value, input)]);
      continue;
    }
    rows.push([field, escapeHtml(shortValue(value))]);
  }
  if (rows.length === 0) return '';
  return `<dl class="details">${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

/** The other items this item's page links to: the write it compensates, and the inverse that compensated it. */
export function linkedItemKeys(events: readonly AuditEvent[]): string[] {
  const keys = new Set<string>();
  const compensates = compensatesOf(events);
  if (compensates) keys.add(compensates);
  for (const event of events) {
    const inverseKey = isEventOf(event, COMPENSATION_TYPES) ? event.data.inverseKey : undefined;
    if (inverseKey !== undefined) keys.add(inverseKey);
  }
  return [...keys];
}

/** The key this item undoes, as recorded when it was routed. */
export function compensatesOf(events: readonly AuditEvent[]): string | undefined {
  return eventsOfType(events, 'routed')[0]?.data.item?.compensates;
}

/** How an undo of this item went, from the last compensation event on its chain. */
function compensationRow(input: ItemPageInput): [string, string] | undefined {
  const last = input.events.findLast((e) => isEventOf(e, COMPENSATION_TYPES));
  if (!isEventOf(last, COMPENSATION_TYPES)) return undefined;
  const { label, tone } = COMPENSATION_STATES[last.type];
  const inverseKey = last.data.inverseKey;
  const by = inverseKey !== undefined ? ` by ${siblingLink(inverseKey, input)}` : '';
  return ['补偿 Compensation', `${badge(label, tone)}${by} · ${escapeHtml(last.actor)} at ${escapeHtml(last.at)}`];
}

const COMPENSATION_TYPES = ['compensation_started', 'compensated', 'compensation_failed'] as const;

const COMPENSATION_STATES: Record<(typeof COMPENSATION_TYPES)[number], { label: string; tone: Parameters<typeof badge>[1] }> = {
  compensation_started: { label: 'started', tone: 'warn' },
  compensated: { label: 'rolled back', tone: 'warn' },
  compensation_failed: { label: 'failed', tone: 'bad' },
};

function siblingLink(key: string, input: ItemPageInput): string {
  return input.siblingPages.has(key)
    ? `<a href="${relativeHref(`../${key}/${PAGE_NAME}`)}"><code>${escapeHtml(key)}</code></a>`
    : `<code>${escapeHtml(key)}</code>`;
}

/** A stage's done-check reading as the page states it: what it read, when, and whether the write went on. */
function doneCheckBadge(data: { when?: string; matched?: boolean; decision?: string }): string {
  const when = data.when === 'after_commit' ? 'after its commit' : 'before its click';
  const read = data.matched ? 'matched' : 'no match';
  const tone = data.decision === 'stop' ? 'bad' : 'ok';
  return `${badge(`${read} ${when}`, tone)}${data.decision === 'stop' ? ` ${badge('stopped: not clicked again', 'bad')}` : ''}`;
}

function verdictOf(events: readonly AuditEvent[]): string | undefined {
  const readback = eventsOfType(events, 'readback').at(-1);
  return readback ? String(readback.data.verdict ?? '') : undefined;
}

function timeline(input: ItemPageInput): string {
  const { events, objects } = input;
  const lastIndexOf = (types: string[]) => events.map((e) => e.type).findLastIndex((t) => types.includes(t));
  const shotsAt = new Map<number, string[]>();
  const placed = new Set<string>();
  for (const [name, where] of Object.entries(SCREENSHOT_PHASE)) {
    // The event that stored the picture, where events record it (a later readback may have taken none); else the phase's last.
    const storedBy = events.findLastIndex((e) => where.types.includes(e.type) && picturedBy(e, name));
    // A write whose stages had all landed clicked nothing: it took no picture of a commit click.
    const took = (e: AuditEvent) => where.types.includes(e.type) && !(isEvent(e, 'write_started') && e.data.alreadyDone !== undefined);
    const at = storedBy >= 0 ? storedBy : events.findLastIndex(took);
    if (!objects.has(name) || at < 0) continue;
    shotsAt.set(at, [...(shotsAt.get(at) ?? []), figure(name, where.caption)]);
    placed.add(name);
  }
  // after.png is taken right after the write's last step, or when it failed.
  const afterAt = lastIndexOf(['write_failed', 'write_started']);
  if (objects.has('after.png') && afterAt >= 0) placed.add('after.png');
  if (objects.has('api-exchange.json')) placed.add('api-exchange.json');

  const rows: string[] = [];
  events.forEach((event, index) => {
    const known = PHASES[event.type] ?? { phase: 'other' as Phase, label: event.type };
    const title = isEvent(event, 'readback')
      ? `${known.label}: ${badge(String(event.data.verdict ?? '?'), outcomeTone(String(event.data.verdict ?? '')))}`
      : isEvent(event, 'stage_done_checked')
        ? `${escapeHtml(known.label)} ${escapeHtml(event.data.stage ?? '?')}: ${doneCheckBadge(event.data)}`
        : escapeHtml(known.label);
    const extras: string[] = [...(shotsAt.get(index) ?? [])];
    if (event.type === 'write_started' && objects.has('api-exchange.json')) {
      extras.push(`<p>API exchange: <a href="api-exchange.json">api-exchange.json</a></p>`);
    }
    extras.push(...unpicturedNote(event, index, input));
    if (index === afterAt && event.type === 'write_failed' && objects.has('after.png'))
      extras.push(figure('after.png', '失败时的页面 Page when the write failed'));
    rows.push(
      `<li class="phase-${known.phase}" id="seq-${event.seq}"><div class="when">#${event.seq} · ${escapeHtml(event.at)} · ${escapeHtml(event.actor)} · hash <code>${escapeHtml(event.hash.slice(0, 16))}…</code></div><div><strong>${title}</strong> <code>${escapeHtml(event.type)}</code></div>${eventDetails(event, input)}${extras.join('')}</li>`,
    );
    if (index === afterAt && event.type === 'write_started' && objects.has('after.png')) {
      rows.push(
        `<li class="phase-after"><div><strong>操作后 After: the page at the end of the write steps</strong> (UI feedback: evidence, never the verdict)</div>${figure('after.png', '操作后 After')}</li>`,
      );
    }
  });
  const loose = [...objects.keys()].filter((n) => n.endsWith('.png') && !placed.has(n));
  const unplaced = loose.length ? `<h2>其他截图 Other screenshots</h2>${loose.map((n) => figure(n, n)).join('')}` : '';
  if (rows.length === 0) return `<p class="note">没有审计事件 No audit events were found for this key.</p>${unplaced}`;
  return `<ol class="timeline">${rows.join('')}</ol>${unplaced}`;
}

function recordFields(input: ItemPageInput): string {
  const r = input.record;
  const c = input.claim;
  const routed = eventsOfType(input.events, 'routed')[0]?.data.item;
  const value = (v: unknown) => (v === undefined || v === null || v === '' ? '—' : escapeHtml(v));
  const approval = r?.approval
    ? `${value(r.approval.approver)} at ${value(r.approval.decidedAt)} (id <code>${value(r.approval.approvalId)}</code>)`
    : input.events.some((e) => hasType(e, 'approval_requested'))
      ? 'requested, not decided in this record'
      : 'not required';
  const compensates = compensatesOf(input.events);
  const compensation = compensationRow(input);
  const rows: Array<[string, string]> = [
    [
      '结果 Outcome',
      badge(r?.outcome ?? c?.outcome ?? c?.status?.toLowerCase() ?? 'unknown', outcomeTone(r?.outcome ?? c?.outcome ?? c?.status)),
    ],
    ['身份 Identity', value(r?.identity ?? c?.identity)],
    ['租户 Tenant', value(r?.tenant ?? c?.tenant)],
    ['单号 Bill', value(r?.billNo ?? c?.billNo)],
    ['动作 Action', value(r?.action ?? c?.action)],
    ['幂等键 Idempotency key', `<code>${escapeHtml(input.key)}</code>`],
    ['任务 Task', value(r?.taskId ?? c?.taskId)],
    ['执行 Execution', `<code>${value(r?.executionArn ?? c?.owner)}</code>`],
    ['层级 Tier', value(r?.tier ?? routed?.tier)],
    ['审批 Approval', approval],
    ['操作前状态 Pre-state', value(r?.preState ?? c?.preState?.status)],
    [
      '回读结论 Readback verdict',
      r?.verdict || verdictOf(input.events)
        ? badge(String(r?.verdict ?? verdictOf(input.events)), outcomeTone(String(r?.verdict ?? verdictOf(input.events))))
        : '—',
    ],
    ['回读状态 Observed status', value(r?.observedStatus)],
    ['回读来源 Readback source', value(r?.readbackSource)],
    ['降级 Degraded', value(r?.degraded ?? false)],
    ['原因 Reason', value(r?.reason ?? c?.reason)],
    [
      '占位状态 Claim status',
      c ? `${escapeHtml(c.status)} (version ${c.version}, attempts ${c.attempts}, updated ${escapeHtml(c.updatedAt)})` : '—',
    ],
    ['记录时间 Recorded at', value(r?.recordedAt)],
  ];
  if (compensates) rows.splice(5, 0, ['补偿对象 Compensates', siblingLink(compensates, input)]);
  if (compensation) rows.splice(1, 0, compensation);
  return fieldsTable(rows);
}

/** The sha256 recorded when each object was stored (record.json, and the events that name it), latest first. */
function recordedHashes(input: ItemPageInput): Map<string, string> {
  const recorded = new Map<string, string>();
  const note = (entries: unknown) => {
    if (!Array.isArray(entries)) return;
    for (const entry of entries as Array<{ key?: unknown; sha256?: unknown } | string>) {
      if (typeof entry === 'object' && entry !== null && typeof entry.key === 'string' && typeof entry.sha256 === 'string')
        recorded.set(entry.key.split('/').at(-1)!, entry.sha256);
    }
  };
  for (const event of input.events) note(evidenceOf(event));
  note(input.record?.evidence);
  return recorded;
}

function evidenceTable(input: ItemPageInput): string {
  const recorded = recordedHashes(input);
  const rows = [...input.objects.values()].map((o) => {
    const atStore = recorded.get(o.name);
    const check =
      atStore === undefined ? '—' : atStore === o.sha256 ? badge('matches', 'ok') : badge(`differs: ${atStore.slice(0, 12)}…`, 'bad');
    return `<tr><td><a href="${relativeHref(o.name)}">${escapeHtml(o.name)}</a></td><td>${formatBytes(o.bytes)}</td><td><code>${o.sha256}</code></td><td>${check}</td></tr>`;
  });
  return `<table><tr><th>对象 Object</th><th>大小 Size</th><th>sha256 (now)</th><th>sha256 when stored</th></tr>${rows.join('')}</table>`;
}

export function renderItemPage(input: ItemPageInput): string {
  const r = input.record;
  const c = input.claim;
  const bill = r?.billNo ?? c?.billNo ?? '';
  const action = r?.action ?? c?.action ?? '';
  const outcome = r?.outcome ?? c?.outcome ?? c?.status?.toLowerCase() ?? 'in progress';
  const head = input.events.at(-1);
  const nav = input.batchPage ? `<p><a href="../${PAGE_NAME}">← 批次 Batch ${escapeHtml(r?.taskId ?? c?.taskId ?? '')}</a></p>` : '';
  const trace = input.objects.has('trace.zip')
    ? `<div class="note"><p>Playwright 跟踪 trace: <a href="trace.zip">trace.zip</a> (${formatBytes(input.objects.get('trace.zip')!.bytes)}). 离线打开 Open it offline from this folder:</p><pre class="cmd">npx playwright show-trace trace.zip</pre><p>It replays every step of the write session: DOM snapshots, network, console. Typed passwords are not recorded.</p></div>`
    : `<p class="note">No Playwright trace in this folder${r?.tier === 'api' ? ' (an API-tier write: see api-exchange.json)' : ''}.</p>`;
  const body = `${nav}
<h1>${escapeHtml(bill)} · ${escapeHtml(action)} ${badge(outcome, outcomeTone(outcome))}</h1>
<p class="sub">证据页 Evidence of one guarded write · key <code>${escapeHtml(input.key)}</code>${head ? ` · audit chain head #${head.seq} <code>${escapeHtml(head.hash.slice(0, 16))}…</code>` : ''}</p>
${input.recordProblem ? `<p class="note">${badge('record.json', 'bad')} ${escapeHtml(input.recordProblem)}</p>` : ''}
<h2>记录 Record</h2>
${recordFields(input)}
<h2>时间线 Timeline (audit chain)</h2>
${timeline(input)}
<h2>跟踪 Trace</h2>
${trace}
<h2>证据对象 Evidence objects</h2>
${evidenceTable(input)}
<footer>This page is a view of the evidence, rendered from the audit chain and the objects beside it. Whether anything was changed after sealing is decided by <code>paperclip audit verify --key ${escapeHtml(input.key)}</code>, which recomputes the chain and every sha256 against the batch seal${input.batchPage ? ' (<a href="../index.html">batch page</a>)' : ''}.</footer>`;
  return page(`${bill} ${action} — Paperclip evidence`, body);
}
