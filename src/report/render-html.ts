import { html, joinHtml, raw, type Html } from '../http/html.js';
import { FONT_STACK, page } from '../evidence/html.js';
import { describeRateLimits, formatRate, type Ratio, type ReportData } from './metrics.js';

/**
 * The report as one self-contained HTML page: tables plus inline SVG charts,
 * no script and nothing fetched, so it can be mailed or archived as is.
 */

const OUTCOME_COLOURS: Record<string, string> = {
  done: '#1f9d55',
  takeover: '#c53030',
  stale: '#d1a322',
  rejected: '#8a5cd0',
  expired: '#9aa6b8',
  blocked: '#b7791f',
  awaiting_approval: '#2f7dd1',
  in_progress: '#6b7c93',
  failed: '#7a1f1f',
};

function rateChart(rows: Array<{ label: string; ratio: Ratio; colour: string }>): Html {
  const width = 720;
  const labelWidth = 190;
  const barWidth = width - labelWidth - 130;
  const rowHeight = 34;
  const height = rows.length * rowHeight + 30;
  const bars = rows.map((row, i) => {
    const y = 10 + i * rowHeight;
    const w = !row.ratio.rate ? 0 : Math.max(1, row.ratio.rate * barWidth);
    return html`<text x="0" y="${y + 17}" font-size="13">${row.label}</text>
<rect x="${labelWidth}" y="${y + 3}" width="${barWidth}" height="20" fill="#eef1f5"/>
<rect x="${labelWidth}" y="${y + 3}" width="${w.toFixed(1)}" height="20" fill="${row.colour}"><title>${`${row.label}: ${row.ratio.count} / ${row.ratio.of}`}</title></rect>
<text x="${labelWidth + barWidth + 8}" y="${y + 17}" font-size="13">${`${formatRate(row.ratio)} (${row.ratio.count}/${row.ratio.of})`}</text>`;
  });
  const axis = [0, 25, 50, 75, 100].map((p) => {
    const x = labelWidth + (p / 100) * barWidth;
    return html`<line x1="${x}" y1="8" x2="${x}" y2="${height - 18}" stroke="#cfd6e0" stroke-dasharray="2,3"/><text x="${x}" y="${height - 4}" font-size="11" text-anchor="middle" fill="#5a6575">${p}%</text>`;
  });
  return html`<svg role="img" aria-label="四项指标 The four rates" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family='${raw(FONT_STACK)}'>${axis}${joinHtml(bars, raw('\n'))}</svg>`;
}

function outcomeChart(outcomes: Record<string, number>): Html {
  const entries = Object.entries(outcomes).filter(([, n]) => n > 0);
  const total = entries.reduce((n, [, v]) => n + v, 0);
  const width = 720;
  if (total === 0) return html`<p class="note">No items in this window.</p>`;
  let x = 0;
  const segments = entries.map(([outcome, n]) => {
    const w = (n / total) * width;
    const segment = html`<rect x="${x.toFixed(1)}" y="0" width="${w.toFixed(1)}" height="28" fill="${OUTCOME_COLOURS[outcome] ?? '#6b7c93'}"><title>${`${outcome}: ${n}`}</title></rect>`;
    x += w;
    return segment;
  });
  const legend = entries.map(([outcome, n], i) => {
    const lx = (i % 4) * 180;
    const ly = 44 + Math.floor(i / 4) * 20;
    return html`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${OUTCOME_COLOURS[outcome] ?? '#6b7c93'}"/><text x="${lx + 18}" y="${ly}" font-size="12">${`${outcome} ${n}`}</text>`;
  });
  const height = 44 + Math.ceil(entries.length / 4) * 20;
  return html`<svg role="img" aria-label="结果分布 Outcome breakdown" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family='${raw(FONT_STACK)}'>${segments}${legend}</svg>`;
}

export function renderReportHtml(report: ReportData): string {
  const r = report.rates;
  const window = `${report.since ? `自 since ${report.since}` : '全部 all time'} · ${report.tenant ? `租户 tenant ${report.tenant}` : '全部租户 all tenants'}`;
  const metricRows: Array<[string, string, Ratio, string]> = [
    ['误操作率', 'Misoperation rate', r.misoperation, 'misoperated writes / write attempts'],
    ['任务完成率', 'Task completion rate', r.completion, 'done / items'],
    ['人工接管率', 'Human takeover rate', r.takeover, 'takeover / items'],
    ['回滚成功率', 'Rollback success rate', r.rollbackSuccess, 'compensated / compensation attempts'],
  ];
  const m = report.misoperations;
  const body = html`<h1>Paperclip 指标报告 Metrics report</h1>
<p class="sub">${window} · generated ${report.generatedAt}</p>
<p>${report.items} 条目 item(s); ${report.writeAttempts} 次写入尝试 reached a commit (${report.commits} commit(s)); ${report.compensationRuns} 次补偿 compensation run(s).</p>
<h2>四项指标 The four metrics</h2>
${rateChart([
  { label: '误操作率 Misoperation', ratio: r.misoperation, colour: '#c53030' },
  { label: '完成率 Completion', ratio: r.completion, colour: '#1f9d55' },
  { label: '接管率 Takeover', ratio: r.takeover, colour: '#d17a22' },
  { label: '回滚成功率 Rollback', ratio: r.rollbackSuccess, colour: '#2f7dd1' },
])}
<table><tr><th>指标 Metric</th><th>计数 Count</th><th>分母 Of</th><th>比率 Rate</th><th>定义 Definition</th></tr>
${metricRows.map(
  ([zh, en, ratio, def]) =>
    html`<tr><td>${zh} ${en}</td><td>${ratio.count}</td><td>${ratio.of}</td><td>${formatRate(ratio)}</td><td>${def}</td></tr>`,
)}
</table>
<h2>结果分布 Outcome breakdown</h2>
${outcomeChart(report.outcomes)}
<table><tr><th>误操作构成 Misoperations by kind</th><th>计数 Count</th></tr>
<tr><td>写入后状态既非操作前也非目标 Unintended state after the write</td><td>${m.unintendedState}</td></tr>
<tr><td>无否定回读的再次提交 Re-commit without a settled negative readback</td><td>${m.unprovenRecommit}</td></tr>
<tr><td>记录结果与回读矛盾 Recorded outcome contradicts the readback</td><td>${m.outcomeContradicted}</td></tr>
<tr><td>同单并发重复写入 Concurrent duplicate on one bill</td><td>${m.concurrentDuplicate}</td></tr>
<tr><td>已拦截的假成功 False success caught (not a misoperation)</td><td>${report.falseSuccessCaught}</td></tr>
<tr><td>会话丢失 Session lost</td><td>${report.sessionLost}</td></tr>
<tr><td>降级回读 Degraded readback</td><td>${report.degraded}</td></tr></table>
${
  m.keys.length
    ? html`<p>误操作幂等键 Misoperated keys: ${joinHtml(
        m.keys.map((k) => html`<code>${k}</code>`),
        raw(', '),
      )}</p>`
    : ''
}
${report.byTenant.length ? html`<h2>按租户 By tenant</h2><table><tr><th>租户 Tenant</th><th>条目 Items</th><th>完成 Done</th><th>接管 Takeover</th><th>误操作 Misoperations</th><th>写入尝试 Write attempts</th></tr>${report.byTenant.map((t) => html`<tr><td>${t.tenant}</td><td>${t.items}</td><td>${t.done}</td><td>${t.takeover}</td><td>${t.misoperations}</td><td>${t.writeAttempts}</td></tr>`)}</table>` : ''}
${
  report.batches.length
    ? html`<h2>批次 Batches</h2><table><tr><th>任务 Task</th><th>租户 Tenant</th><th>完成时间 Finished</th><th>读取 Read</th><th>条目 Items</th><th>结果 Outcomes</th></tr>${report.batches.map(
        (b) =>
          html`<tr><td>${b.task}</td><td>${b.tenant}</td><td>${b.finishedAt ?? '—'}</td><td>${b.read}</td><td>${b.items}</td><td>${Object.entries(
            b.counts,
          )
            .filter(([, n]) => n > 0)
            .map(([o, n]) => `${o} ${n}`)
            .join(
              ', ',
            )}${describeRateLimits(b) ? `; ${describeRateLimits(b)}` : ''}${b.error ? html` <span class="badge bad">${b.error}</span>` : ''}</td></tr>`,
      )}</table>`
    : ''
}
<footer>Definitions: docs/report.md. Items are claims (one per idempotency key) whose updatedAt falls in the window; compensation runs are counted under rollback.</footer>`;
  return page('Paperclip metrics report', body.value);
}
