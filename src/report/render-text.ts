import { describeRateLimits, formatRate, type ReportData } from './metrics.js';

function table(headers: string[], rows: string[][], rightAligned: ReadonlySet<number> = new Set()): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const cell = (text: string, i: number) => (rightAligned.has(i) ? text.padStart(widths[i]!) : text.padEnd(widths[i]!));
  const line = (cells: string[]) => cells.map(cell).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

/** The report as a terminal table. */
export function renderReportText(report: ReportData): string {
  const r = report.rates;
  const window = `${report.since ? `since ${report.since}` : 'all time'}${report.tenant ? `, tenant ${report.tenant}` : ', all tenants'}`;
  const out = [
    `Paperclip report (${window})`,
    `${report.items} item(s); ${report.writeAttempts} reached a commit (${report.commits} commit(s)); ${report.compensationRuns} compensation run(s)`,
    '',
    ...table(
      ['metric', 'count', 'of', 'rate', 'definition'],
      [
        [
          'misoperation rate',
          String(r.misoperation.count),
          String(r.misoperation.of),
          formatRate(r.misoperation),
          'misoperated writes / write attempts',
        ],
        ['task completion rate', String(r.completion.count), String(r.completion.of), formatRate(r.completion), 'done / items'],
        ['human takeover rate', String(r.takeover.count), String(r.takeover.of), formatRate(r.takeover), 'takeover / items'],
        [
          'rollback success rate',
          String(r.rollbackSuccess.count),
          String(r.rollbackSuccess.of),
          formatRate(r.rollbackSuccess),
          'compensated / compensation attempts',
        ],
      ],
      new Set([1, 2, 3]),
    ),
    '',
    `outcomes: ${
      Object.entries(report.outcomes)
        .filter(([, n]) => n > 0)
        .map(([o, n]) => `${o} ${n}`)
        .join(', ') || 'none'
    }`,
    `misoperations: unintended state ${report.misoperations.unintendedState}, unproven re-commit ${report.misoperations.unprovenRecommit}, ` +
      `outcome contradicted ${report.misoperations.outcomeContradicted}, concurrent duplicate ${report.misoperations.concurrentDuplicate}`,
    `caught before counting as done: false success ${report.falseSuccessCaught}; session lost ${report.sessionLost}; degraded readback ${report.degraded}`,
  ];
  if (report.misoperations.keys.length > 0) out.push(`misoperated keys: ${report.misoperations.keys.join(', ')}`);
  if (report.byTenant.length > 1) {
    out.push(
      '',
      ...table(
        ['tenant', 'items', 'done', 'takeover', 'misop', 'writes'],
        report.byTenant.map((t) => [
          t.tenant,
          String(t.items),
          String(t.done),
          String(t.takeover),
          String(t.misoperations),
          String(t.writeAttempts),
        ]),
        new Set([1, 2, 3, 4, 5]),
      ),
    );
  }
  if (report.batches.length > 0) {
    out.push(
      '',
      ...table(
        ['batch', 'tenant', 'finished', 'read', 'items', 'outcomes'],
        report.batches.map((b) => [
          b.task,
          b.tenant,
          b.finishedAt ?? '—',
          String(b.read),
          String(b.items),
          `${Object.entries(b.counts)
            .filter(([, n]) => n > 0)
            .map(([o, n]) => `${o} ${n}`)
            .join(', ')}${describeRateLimits(b) ? `; ${describeRateLimits(b)}` : ''}${b.error ? ` (error: ${b.error})` : ''}`,
        ]),
        new Set([3, 4]),
      ),
    );
  }
  return out.join('\n');
}
