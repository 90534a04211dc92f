import { z } from 'zod';
import type { Claim } from '../domain/claim.js';
import { html, raw, type Html } from '../http/html.js';
import { badge, fieldsTable, formatBytes, outcomeTone, page, relativeHref } from './html.js';
import { PAGE_NAME, resultKey, SEAL_NAME, type BatchRef, type HashedObject } from './folder.js';
import type { OutcomeRecord } from './item-page.js';
import { describeRateLimits } from '../report/metrics.js';

/** batch.json as summarizeBatch writes it; read loosely. */
export const BatchFile = z
  .object({
    task: z.string(),
    tenant: z.string(),
    read: z.number().default(0),
    items: z.number().default(0),
    counts: z.record(z.string(), z.number()).default({}),
    rateLimited: z.number().optional(),
    rateLimitWaitMs: z.number().optional(),
    paceWaitMs: z.number().optional(),
    error: z.string().optional(),
    results: z
      .array(
        z
          .object({
            outcome: z.string().optional(),
            key: z.string().optional(),
            billNo: z.string().optional(),
            reason: z.string().optional(),
            executionArn: z.string().optional(),
          })
          .passthrough(),
      )
      .default([]),
    finishedAt: z.string().optional(),
  })
  .passthrough();
export type BatchFile = z.infer<typeof BatchFile>;

export function parseBatchFile(body: Buffer | undefined): BatchFile | undefined {
  if (!body) return undefined;
  try {
    const parsed = BatchFile.safeParse(JSON.parse(body.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export interface BatchPageItem {
  key: string;
  claim?: Claim;
  record?: OutcomeRecord;
  hasPage: boolean;
  /** The key this item undoes, when it is a compensation. */
  compensates?: string;
}

export interface BatchPageInput {
  batch: BatchRef;
  summary?: BatchFile;
  items: readonly BatchPageItem[];
  top: ReadonlyMap<string, HashedObject>;
  /** The seal is written right after the page, so the page may link it before it exists. */
  sealed: boolean;
}

function outcomeOf(item: BatchPageItem): string {
  return item.record?.outcome ?? item.claim?.outcome ?? item.claim?.status.toLowerCase() ?? 'unknown';
}

/** Where a row sits: by bill (the key when there is none), then by key. */
function sortKeyOf(item: BatchPageItem): string {
  return item.claim?.billNo ?? item.key;
}

const bySortKey = (a: { sort: string; key: string }, b: { sort: string; key: string }) =>
  a.sort.localeCompare(b.sort) || a.key.localeCompare(b.key);

/**
 * One item's row. It carries its key, sort key and the key it undoes as attributes, so that a later close can
 * replace its own row (and its linked item's) in the stored page without reading every other item again
 * (patchBatchPage).
 */
function batchRow(item: BatchPageItem, undoneBy: string | undefined): Html {
  const keyLink = (key: string) => html`<a href="${relativeHref(`${key}/${PAGE_NAME}`)}"><code>${key.slice(0, 14)}…</code></a>`;
  const outcome = outcomeOf(item);
  const bill = item.record?.billNo ?? item.claim?.billNo ?? '—';
  const link = item.hasPage ? html`<a href="${relativeHref(`${item.key}/${PAGE_NAME}`)}">${bill}</a>` : html`${bill}`;
  const verdict = item.record?.verdict ?? null;
  const reason = item.record?.reason ?? item.claim?.reason ?? '';
  const compensates = [
    item.compensates ? html`<br><span class="when">补偿 undoes ${keyLink(item.compensates)}</span>` : '',
    undoneBy ? html`<br><span class="when">已被撤销 undone by ${keyLink(undoneBy)}</span>` : '',
  ];
  const action = item.record?.action ?? item.claim?.action ?? '';
  const identity = item.claim?.identity ?? item.record?.identity ?? '';
  const checked = verdict ? raw(badge(verdict, outcomeTone(verdict))) : '—';
  const undoes = item.compensates ? html` data-compensates="${item.compensates}"` : '';
  const row = html`<tr id="${item.key}" data-sort="${sortKeyOf(item)}"${undoes}><td class="nowrap">${link}${compensates}</td><td>${action}</td><td>${raw(badge(outcome, outcomeTone(outcome)))}</td><td>${checked}</td><td>${identity}</td><td><code>${item.key}</code></td><td>${reason}</td></tr>`;
  // One row per line (a reason may span lines): a character reference reads the same in text and attributes.
  return raw(`${row.value.replace(/\r?\n|\r/g, '&#10;')}\n`);
}

/** The item rows sit between these two comments, one row per line. */
const ROWS_START = '<!-- item rows -->\n';
const ROWS_END = '<!-- /item rows -->';
const ROW = /^<tr id="([^"]*)" data-sort="([^"]*)"(?: data-compensates="([^"]*)")?>.*<\/tr>$/;

const HTML_ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescapeHtml = (value: string) => value.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => HTML_ENTITIES[e] ?? e);

/**
 * The stored batch page with the rows of `items` replaced (or added, in their place in the order), and the
 * "undone by" marks of those rows from every row's key it undoes. The other rows are kept as stored: this is
 * how an item that closes after the seal updates the page of a batch of 10,000 without reading the other
 * items. Undefined when the page is not one this renderer wrote with row markers (a page rendered before
 * rows carried them, or edited): the caller renders the page in full instead.
 */
export function patchBatchPage(page: string, items: readonly BatchPageItem[]): string | undefined {
  const start = page.indexOf(ROWS_START);
  const end = page.indexOf(ROWS_END);
  if (start < 0 || end < start) return undefined;
  const rows = new Map<string, { key: string; sort: string; compensates?: string; html: string }>();
  const region = page.slice(start + ROWS_START.length, end);
  for (const line of region.split('\n')) {
    if (line === '') continue;
    const match = ROW.exec(line);
    if (!match) return undefined;
    const key = unescapeHtml(match[1]!);
    const compensates = match[3] === undefined ? undefined : unescapeHtml(match[3]);
    rows.set(key, { key, sort: unescapeHtml(match[2]!), ...(compensates ? { compensates } : {}), html: `${line}\n` });
  }
  for (const item of items) {
    rows.set(item.key, { key: item.key, sort: sortKeyOf(item), ...(item.compensates ? { compensates: item.compensates } : {}), html: '' });
  }
  const undoneBy = new Map([...rows.values()].filter((r) => r.compensates).map((r) => [r.compensates!, r.key]));
  for (const item of items) rows.get(item.key)!.html = batchRow(item, undoneBy.get(item.key)).value;
  const body = [...rows.values()]
    .sort(bySortKey)
    .map((r) => r.html)
    .join('');
  return page.slice(0, start + ROWS_START.length) + body + page.slice(end);
}

export function renderBatchPage(input: BatchPageInput): string {
  const { batch, summary } = input;
  const items = [...input.items].sort((a, b) => bySortKey({ sort: sortKeyOf(a), key: a.key }, { sort: sortKeyOf(b), key: b.key }));
  const undoneBy = new Map(items.filter((i) => i.compensates).map((i) => [i.compensates!, i.key]));
  const rows = items.map((item) => batchRow(item, undoneBy.get(item.key)));
  // A set, not a search per result: the batch page of 10,000 items would compare 10^8 pairs.
  const listed = new Set(items.map((i) => i.key));
  const withoutFolder = (summary?.results ?? []).filter((r) => {
    const key = resultKey(r);
    return !key || !listed.has(key);
  });
  const counts = summary
    ? Object.entries(summary.counts)
        .filter(([, n]) => n > 0)
        .map(([outcome, n]) => `${badge(`${outcome} ${n}`, outcomeTone(outcome))}`)
        .join(' ')
    : '';
  const fields: Array<[string, string]> = [
    ['租户 Tenant', html`${batch.tenant}`.value],
    ['任务 Task', html`${batch.taskId}`.value],
    ['列表行数 Rows read', html`${summary?.read ?? '—'}`.value],
    ['条目 Items', html`${summary?.items ?? items.length}`.value],
    ['结果 Outcomes', counts || '—'],
    ['完成时间 Finished at', html`${summary?.finishedAt ?? '—'}`.value],
  ];
  const rateLimits = summary ? describeRateLimits(summary) : '';
  if (rateLimits) fields.push(['限流 Rate limits', html`${rateLimits}`.value]);
  if (summary?.error) fields.push(['错误 Error', badge(summary.error, 'bad')]);
  const objects = [...input.top.values()]
    .filter((o) => o.name !== PAGE_NAME)
    .map(
      (o) =>
        html`<tr><td><a href="${relativeHref(o.name)}">${o.name}</a></td><td>${formatBytes(o.bytes)}</td><td><code>${o.sha256}</code></td></tr>`,
    );
  if (input.sealed && !input.top.has(SEAL_NAME))
    objects.push(html`<tr><td><a href="${SEAL_NAME}">${SEAL_NAME}</a></td><td colspan="2">written with this page</td></tr>`);
  const list = input.top.has('list.png')
    ? html`<h2>读取的清单 The list as read</h2><figure><a href="list.png"><img src="list.png" alt="差异清单 discrepancy list"></a><figcaption>读取时的差异清单 The discrepancy list when the batch read it — <a href="list.json">list.json</a></figcaption></figure>`
    : '';
  const body = html`<h1>批次 Batch ${batch.taskId} ${summary?.error ? raw(badge('error', 'bad')) : ''}</h1>
<p class="sub">租户 tenant ${batch.tenant} · evidence/${batch.tenant}/${batch.taskId}/</p>
${raw(fieldsTable(fields))}
<h2>条目 Items</h2>
${rows.length ? html`<table><tr><th>单号 Bill</th><th>动作 Action</th><th>结果 Outcome</th><th>回读 Verdict</th><th>身份 Identity</th><th>幂等键 Key</th><th>原因 Reason</th></tr>\n${raw(ROWS_START)}${rows}${raw(ROWS_END)}</table>` : html`<p class="note">No item of this batch reached a claim.</p>`}
${withoutFolder.length ? html`<h2>无证据目录的结果 Results without an evidence folder</h2><table><tr><th>单号 Bill</th><th>结果 Outcome</th><th>原因 Reason</th></tr>${withoutFolder.map((r) => html`<tr><td>${r.billNo ?? '—'}</td><td>${raw(badge(r.outcome ?? 'error', outcomeTone(r.outcome)))}</td><td>${r.reason ?? ''}</td></tr>`)}</table>` : ''}
${list}
<h2>批次对象 Batch objects</h2>
<table><tr><th>对象 Object</th><th>大小 Size</th><th>sha256</th></tr>${objects}</table>
<footer>The seal (${SEAL_NAME}) records every item's audit chain head and the sha256 of every object in this folder; its own hash is in the audit chain <code>batch:${batch.tenant}:${batch.taskId}</code>. Check it with <code>paperclip audit verify --batch ${batch.tenant}/${batch.taskId}</code>.</footer>`;
  return page(`Batch ${batch.taskId} (${batch.tenant}) — Paperclip evidence`, body.value);
}
