import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BenchReport } from './report-schema.js';

/**
 * BENCHMARKS.md, rendered entirely from one report so a rerun replaces every number. The fixed text lives in
 * bench/BENCHMARKS.template.md; this module computes the values and tables its {{placeholders}} name.
 */

export const TEMPLATE_PATH = fileURLToPath(new URL('./BENCHMARKS.template.md', import.meta.url));

/** Fills every {{name}} in the template; a placeholder without a value, or a value no placeholder uses, is an error. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  const used = new Set<string>();
  const out = template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${TEMPLATE_PATH}: placeholder {{${name}}} has no value; add it to renderMarkdown`);
    used.add(name);
    return value;
  });
  const unused = Object.keys(values).filter((name) => !used.has(name));
  if (unused.length) throw new Error(`${TEMPLATE_PATH} has no placeholder for ${unused.map((n) => `{{${n}}}`).join(', ')}`);
  return out;
}

const f = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits));
const usd = (n: number) => (n >= 0.01 ? `$${n.toFixed(3)}` : `$${n.toFixed(5)}`);
const row = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
const table = (head: string[], rows: Array<Array<string | number>>) => [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');
const kinds = (k: Record<string, number>) =>
  Object.entries(k)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${n}× ${name}`)
    .join(', ') || '—';
const mark = (met: boolean | null) => (met === null ? 'not measured' : met ? 'met' : '**missed**');

const label = (x: { path: string; tracing: string | null }) =>
  `${x.path === 'raw-evidence' ? 'V1 as written' : x.path === 'raw' ? 'bare script' : x.path}${x.tracing ? `, tracing ${x.tracing}` : ''}`;

export function renderMarkdown(r: BenchReport, template = readFileSync(TEMPLATE_PATH, 'utf8')): string {
  const modes = Object.keys(r.latency.guarded) as Array<'on' | 'off'>;
  const head: 'on' | 'off' = modes.includes('on') ? 'on' : 'off';
  const m = r.machine;
  const v1 = r.vendorSplit.rawEvidence;
  const bare = r.vendorSplit.raw;
  const work = r.cost.work;
  const values: Record<string, string> = {};

  values['command'] = r.command;
  values['date'] = r.date;
  values['durationMin'] = f(r.durationMs / 60_000, 1);
  values['machine'] = `${m.cpuModel}, ${m.cores} cores, ${f(m.memoryGiB, 1)} GiB, Node ${m.node}, ${m.platform}`;
  values['loadStart'] = `${m.loadAverage.one} / ${m.loadAverage.five} / ${m.loadAverage.fifteen}`;
  values['loadEnd'] = `${r.loadAtEnd.one} / ${r.loadAtEnd.five} / ${r.loadAtEnd.fifteen}`;
  values['machineWarning'] = r.machineWarning ? `\n> **Warning — shared, loaded machine.** ${r.machineWarning}\n` : '';
  values['items'] = String(r.options.items);
  values['concurrency'] = r.options.concurrency.join(', ');
  values['repeat'] = String(r.options.repeat);
  values['tracing'] = r.options.tracing;
  values['settleMs'] = String(r.options.settleMs);

  // Headline: guarded against V1 as written, with the bare-script ratio beside it.
  values['headlineTable'] = table(
    ['per item, concurrency 1', 'V1 as written', ...modes.flatMap((mm) => [`guarded, tracing ${mm}`, '/V1', '/bare script'])],
    [
      [
        'median latency ms',
        f(r.latency.rawEvidence.median),
        ...modes.flatMap((mm) => [
          f(r.latency.guarded[mm]!.median),
          `${f(r.latency.vsV1[mm]!.median, 2)}x`,
          `${f(r.latency.ratioMedian[mm], 2)}x`,
        ]),
      ],
      [
        'p95 latency ms',
        f(r.latency.rawEvidence.p95),
        ...modes.flatMap((mm) => [f(r.latency.guarded[mm]!.p95), `${f(r.latency.vsV1[mm]!.p95, 2)}x`, `${f(r.latency.ratioP95[mm], 2)}x`]),
      ],
      [
        'CPU ms (Node + Chromium)',
        f(v1.cpuMs.totalMs),
        ...modes.flatMap((mm) => [
          f(r.vendorSplit.guarded[mm]!.cpuMs.totalMs),
          `${f(r.latency.vsV1[mm]!.cpu, 2)}x`,
          `${f(r.latency.cpuRatio[mm], 2)}x`,
        ]),
      ],
      ["AWS emulators' CPU per item (not Lambda's)", '—', ...modes.flatMap((mm) => [f(r.vendorSplit.guarded[mm]!.emulatorsCpuMs), '', ''])],
      ['first item ms', f(v1.firstItemMs), ...modes.flatMap((mm) => [f(r.vendorSplit.guarded[mm]!.firstItemMs), '', ''])],
      [
        'vendor requests (steady)',
        f(v1.steadyVendorRequestsPerItem, 1),
        ...modes.flatMap((mm) => [f(r.vendorSplit.guarded[mm]!.steadyVendorRequestsPerItem, 1), '', '']),
      ],
      [
        'browser sessions opened (steady)',
        f(v1.steadySessionsPerItem, 2),
        ...modes.flatMap((mm) => [f(r.vendorSplit.guarded[mm]!.steadySessionsPerItem, 2), '', '']),
      ],
      ['state transitions', '—', ...modes.flatMap((mm) => [f(work[mm]!.transitionsPerItem, 2), '', ''])],
      ['modelled AWS $ per 1000 writes', '—', ...modes.flatMap((mm) => [usd(r.cost.baseline[mm]!.total), '', ''])],
    ],
  );
  const g1 = r.throughput.find((t) => t.path === 'guarded' && t.tracing === head && t.concurrency === 1);
  const v1t = r.throughput.find((t) => t.path === 'raw-evidence' && t.concurrency === 1);
  values['headlineSummary'] =
    `Throughput at concurrency 1: guarded ${f(g1?.itemsPerMin, 1)} items/min, ${f(g1?.itemsPerCoreSecond, 3)} items per core-second; ` +
    `V1 ${f(v1t?.itemsPerMin, 1)} items/min, ${f(v1t?.itemsPerCoreSecond, 3)} items per core-second. ` +
    `Targets met: ${r.targets.filter((t) => t.met === true).length} of ${r.targets.length}.`;

  values['targetsTable'] = table(
    ['target', 'measured', 'verdict', 'note'],
    r.targets.map((t) => [t.target, t.measured, mark(t.met), t.note]),
  );
  values['findings'] = r.findings.map((x) => `- ${x}`).join('\n');

  const latencyRow = (name: string, lat: BenchReport['latency']['raw'], split: typeof bare, vsBare: string[], vsV1: string[]) => [
    name,
    lat.n,
    f(lat.median),
    f(lat.p95),
    f(lat.mean),
    f(split.firstItemMs),
    f(split.cpuMs.totalMs),
    ...vsV1,
    ...vsBare,
  ];
  values['latencyTable'] = table(
    [
      'path',
      'items',
      'median ms',
      'p95 ms',
      'mean ms',
      'first item ms',
      'CPU ms / item',
      '/V1 (median)',
      '/V1 (p95)',
      '/V1 (CPU)',
      '/bare (median)',
      '/bare (p95)',
      '/bare (CPU)',
    ],
    [
      latencyRow(
        'V1 as written (screenshots, trace)',
        r.latency.rawEvidence,
        v1,
        [
          f(r.latency.rawEvidence.median / r.latency.raw.median, 2),
          f(r.latency.rawEvidence.p95 / r.latency.raw.p95, 2),
          f(v1.cpuMs.totalMs / bare.cpuMs.totalMs, 2),
        ],
        ['1.00', '1.00', '1.00'],
      ),
      latencyRow(
        'bare script (no evidence)',
        r.latency.raw,
        bare,
        ['1.00', '1.00', '1.00'],
        [
          f(r.latency.raw.median / r.latency.rawEvidence.median, 2),
          f(r.latency.raw.p95 / r.latency.rawEvidence.p95, 2),
          f(bare.cpuMs.totalMs / v1.cpuMs.totalMs, 2),
        ],
      ),
      ...modes.map((mode) =>
        latencyRow(
          `guarded, tracing ${mode}`,
          r.latency.guarded[mode]!,
          r.vendorSplit.guarded[mode]!,
          [f(r.latency.ratioMedian[mode], 2), f(r.latency.ratioP95[mode], 2), f(r.latency.cpuRatio[mode], 2)],
          [f(r.latency.vsV1[mode]!.median, 2), f(r.latency.vsV1[mode]!.p95, 2), f(r.latency.vsV1[mode]!.cpu, 2)],
        ),
      ),
    ],
  );

  const splitRow = (name: string, x: typeof bare, sessions: string) => [
    name,
    f(x.itemMs.mean),
    f(x.vendorMs, 1),
    f(x.ownMs),
    `${f(x.cpuMs.chromiumMs)} / ${f(x.cpuMs.nodeMs)}`,
    sessions,
    f(x.loginsPerItem, 2),
    `${f(x.vendorRequestsPerItem, 1)} (${f(x.steadyVendorRequestsPerItem, 1)})`,
    kinds(x.requestKinds),
  ];
  values['splitTable'] = table(
    [
      'path',
      'item ms (mean)',
      'vendor ms',
      'own ms',
      'CPU ms (Chromium / Node)',
      'new contexts / sessions / steady sessions per item',
      'logins / item',
      'vendor requests / item (steady)',
      'requests',
    ],
    [
      splitRow('V1 as written', v1, `${f(v1.contextsPerItem, 2)} / ${f(v1.sessionsPerItem, 2)} / ${f(v1.steadySessionsPerItem, 2)}`),
      splitRow('bare script', bare, `${f(bare.contextsPerItem, 2)} / ${f(bare.sessionsPerItem, 2)} / ${f(bare.steadySessionsPerItem, 2)}`),
      ...modes.map((mode) => {
        const g = r.vendorSplit.guarded[mode]!;
        return splitRow(
          `guarded, tracing ${mode}`,
          g,
          `${f(g.contextsPerItem, 2)} / ${f(g.sessionsPerItem, 2)} / ${f(g.steadySessionsPerItem, 2)}`,
        );
      }),
    ],
  );
  values['stepTables'] = modes
    .map((mode) => {
      const g = r.vendorSplit.guarded[mode]!;
      return `
### Guarded steps, tracing ${mode} (Paperclip adds ${f(r.vendorSplit.addedByPaperclipMs[mode])} ms per item beyond the bare script's own time)

${table(
  [
    'step',
    'median ms',
    'mean ms',
    'vendor ms',
    'Paperclip ms',
    'CPU ms (Chromium / Node)',
    'share of item',
    'sessions / new contexts / logins per item',
    'vendor requests / item',
  ],
  g.steps.map((st) => [
    st.step,
    f(st.medianMs),
    f(st.meanMs),
    f(st.vendorMs, 1),
    f(st.paperclipMs),
    `${f(st.cpuMs.chromiumMs)} / ${f(st.cpuMs.nodeMs)}`,
    `${f(st.sharePercent)}%`,
    `${f(st.sessionsPerItem, 2)} / ${f(st.newContextsPerItem, 2)} / ${f(st.loginsPerItem, 2)}`,
    `${f(st.vendorRequestsPerItem, 1)}: ${kinds(st.requestKinds)}`,
  ]),
)}`;
    })
    .join('\n');

  values['runVendorTable'] = table(
    ['path', 'concurrency', 'wall ms', 'vendor sum ms', 'vendor busy ms', 'wall − busy ms', 'CPU ms (Chromium / Node)'],
    r.vendorSplit.runVendorShare.map((v, i) => [
      label(v),
      v.concurrency,
      f(v.wallMs),
      f(v.vendorSumMs),
      f(v.vendorBusyMs),
      f(v.ownMs),
      `${f(r.runs[i]!.cpu.chromiumMs)} / ${f(r.runs[i]!.cpu.nodeMs)}`,
    ]),
  );

  values['throughputTable'] = table(
    [
      'path',
      'concurrency',
      'items/min',
      'items per core-second',
      'speed-up vs concurrency 1',
      'cores busy (CPU ÷ wall)',
      'other processes (% of machine CPU)',
    ],
    r.throughput.map((t) => [
      label(t),
      t.concurrency,
      f(t.itemsPerMin, 1),
      f(t.itemsPerCoreSecond, 3),
      `${f(t.speedupVsC1, 2)}x`,
      f(t.coresBusy, 2),
      f(t.otherCpuPercent, 1),
    ]),
  );
  const g1Cores = g1?.coresBusy ?? Number.NaN;
  values['coresNote'] =
    `Cores busy is the benchmark's own CPU (Node and Chromium) over the run's wall time, on a ${r.machine.cores}-core machine. ${
      g1Cores > r.machine.cores * 0.6
        ? `The guarded path already keeps ${f(g1Cores, 2)} of ${r.machine.cores} cores busy at concurrency 1, so a second item in flight has little idle CPU to
use: on this machine concurrency buys throughput only where items wait on the vendor, and here the vendor answers in
milliseconds. On Lambda each concurrent item runs in its own environment with its own vCPU share, so this ceiling is
the machine's, not the design's.`
        : `At concurrency 1 the guarded path keeps ${f(g1Cores, 2)} of ${r.machine.cores} cores busy.`
    }`;
  values['runsTable'] = table(
    [
      'path',
      'concurrency',
      'repeat',
      'other CPU ms',
      'status',
      'items',
      'outcomes',
      'mutations',
      'one per item',
      'wall ms',
      'item median ms',
      'item p95 ms',
    ],
    r.runs.map((x) => [
      label(x),
      x.concurrency,
      x.repeat,
      f(x.otherCpuMs),
      x.status,
      x.items,
      Object.entries(x.outcomes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
      x.journal.mutations,
      x.journal.exactlyOnePerItem ? 'yes' : '**no**',
      f(x.wallMs),
      f(x.itemLatencyMs.median),
      f(x.itemLatencyMs.p95),
    ]),
  );

  const b = r.browser;
  const sm = (x: { median: number; p95: number; n: number }, digits = 0) => [f(x.median, digits), f(x.p95, digits), x.n];
  values['browserTable'] = table(
    ['measure', 'median ms', 'p95 ms', 'n'],
    [
      ['`executablePath()` (inflates Chromium to /tmp on a fresh machine; already there here)', b.coldLaunch.executablePathMs, '', 1],
      ['cold: launch', ...sm(b.coldLaunch.launchMs)],
      ['cold: first context + page on the new browser', ...sm(b.coldLaunch.firstPageMs)],
      ['cold: launch + first page', ...sm(b.coldLaunch.totalMs)],
      ['warm: new context + page', ...sm(b.warmReuse.newContextAndPageMs)],
      [
        'warm per-task setup: `IdentitySessions.open` on a kept context (trace start; the vendor is not probed)',
        ...sm(b.warmTaskSetup.openTracedMs),
      ],
      ['warm per-task setup, untraced', ...sm(b.warmTaskSetup.openUntracedMs)],
      ['of which vendor time (a kept context is reused without a probe, so none is expected)', ...sm(b.warmTaskSetup.vendorProbeMs, 1)],
      [
        'releasing a traced session (stop trace, read zip, keep the context; the page is blanked while it waits)',
        ...sm(b.warmTaskSetup.closeTracedMs),
      ],
      ['closing an untraced session', ...sm(b.warmTaskSetup.closeUntracedMs)],
      ['first open of an identity (logs in)', b.warmTaskSetup.firstOpenWithLoginMs, '', 1],
      ['warm page: load the list page', ...sm(b.pageOps.listPageLoadMs)],
      ['warm page: load a detail page', ...sm(b.pageOps.detailPageLoadMs)],
      ['warm page: full-page screenshot of the list (PNG, as V1 takes them)', ...sm(b.pageOps.fullPageScreenshotMs)],
      ['warm page: viewport screenshot (PNG, as the guarded path takes them)', ...sm(b.pageOps.viewportScreenshotMs)],
      ['warm page: full-page screenshot as JPEG (quality 80)', ...sm(b.pageOps.fullPageJpegScreenshotMs)],
    ],
  );

  values['memoryTable'] = table(
    ['state', 'processes', 'RSS MiB', 'PSS MiB'],
    [
      ['browser alone (no context)', b.memory.browserOnly.processes, f(b.memory.browserOnly.rssMiB), f(b.memory.browserOnly.pssMiB)],
      ...b.memory.withContexts.map((c) => [`${c.contexts} logged-in context(s), list page loaded`, c.processes, f(c.rssMiB), f(c.pssMiB)]),
    ],
  );
  values['perContextPss'] = f(r.memory.perExtraContextPssMiB, 1);
  values['perContextRss'] = f(r.memory.perExtraContextRssMiB, 1);
  values['newBrowserPss'] = f(r.memory.newBrowserPssMiB);
  values['newBrowserRss'] = f(r.memory.newBrowserRssMiB);
  values['peakTable'] = table(
    ['path', 'concurrency', 'peak RSS MiB', 'peak PSS MiB', 'processes'],
    r.memory.peakByRun.map((p) => [label(p), p.concurrency, f(p.rssMiB), f(p.pssMiB), p.processes]),
  );
  values['perExtraTask'] =
    Object.entries(r.memory.perExtraConcurrentTaskRssMiB)
      .filter(([, v]) => Number.isFinite(v))
      .map(([k, v]) => `${k} ${f(v, 1)} MiB`)
      .join('; ') || 'only one level was run';

  const c = r.claimConflict.lostClaimRuns;
  const put = r.claimConflict.conditionalPutConflictMs;
  values['claimConflict'] = [
    `- Bare conditional put on an existing key (\`ClaimsStore.tryCreate\`, dynalite): median ${f(put.median, 1)} ms, p95 ${f(put.p95, 1)} ms (n=${put.n}).`,
    `- ${c.executions} guarded-write executions started as a second runner for keys the last guarded run had completed,
  with the shared browser closed first: outcomes ${Object.entries(c.outcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')};
  Claim step median ${f(c.claimStepMs.median)} ms (p95 ${f(c.claimStepMs.p95)}), whole execution median ${f(c.executionMs.median)} ms.`,
    `- States visited: ${c.statesVisited.join(', ')}. Browser states entered: ${c.browserStepsEntered};
  sessions opened: ${c.sessionsOpened}; Chromium processes before ${c.chromiumProcessesBefore}, peak ${c.chromiumProcessesPeak} (sampled every 50 ms);
  vendor page requests ${c.vendorPageRequests}, vendor API requests ${c.vendorApiRequests} (routing reads the bill's owner); vendor mutations ${c.mutations}.
  **No browser launched: ${c.noBrowserLaunched ? 'proven' : 'NO'}**.`,
  ].join('\n');

  const z = r.summarizeScale;
  const perItem = `a DONE claim, ${z.auditEventsPerItem} audit events, ${z.objectsPerItem} objects in its folder`;
  values['summarizeScale'] = [
    `- ${z.items.toLocaleString('en-US')} settled items (each: ${perItem}, one line in the map run's results):`,
    `  summarised in ${f(z.wallMs)} ms wall, **${f(z.cpuMs)} ms CPU** of the process running Summarize alone`,
    `  (the forked emulators used ${f(z.emulatorCpuMs)} ms more, not counted).`,
    `- Per item: **${f(z.cpuMsPerItem, 2)} ms CPU**, ${f(z.wallMsPerItem, 2)} ms wall`,
    '  (fixed costs such as the batch page and the seal included).',
    `- Memory: RSS ${f(z.rssBeforeMiB, 1)} MiB before, peak ${f(z.peakRssMiB, 1)} MiB during;`,
    `  peak heap used ${f(z.peakHeapUsedMiB, 1)} MiB (sampled every 25 ms).`,
    `- Summary counted ${z.summaryItems} items; the seal covers ${z.sealedItems}.`,
  ].join('\n');

  const cost = r.cost;
  const base = cost.baseline[head]!;
  const s = base.scenario;
  values['pricesSource'] = cost.pricesSource;
  values['pricesRecordedOn'] = cost.pricesRecordedOn;
  values['sizingSource'] = cost.sizing.source;
  values['sizing'] =
    `browser functions (${cost.sizing.browserFunctions.join(', ')}) ${cost.sizing.browserMemoryMb} MB ${cost.sizing.browserArchitecture} with ${cost.sizing.browserEphemeralMb} MB /tmp; the others ${cost.sizing.defaultMemoryMb} MB ${cost.sizing.defaultArchitecture}${Object.entries(
      cost.sizing.memoryMbOf ?? {},
    )
      .map(([fn, mb]) => ` (${fn} ${mb} MB)`)
      .join(
        '',
      )}; evidence kept ${cost.sizing.evidenceRetentionDays} days (Standard for ${cost.sizing.glacierAfterDays}, then Glacier Instant Retrieval)`;
  values['workTable'] = table(
    ['', ...modes.map((mm) => `tracing ${mm}`)],
    [
      ['state transitions per item (child + Map iteration, retries included)', ...modes.map((mm) => f(work[mm]!.transitionsPerItem, 2))],
      ['state transitions per batch (ReadList, Map, Summarize)', ...modes.map((mm) => f(work[mm]!.transitionsPerBatch, 2))],
      [
        'DynamoDB write units per item, base tables (by table)',
        ...modes.map((mm) =>
          Object.entries(work[mm]!.dynamoWriteUnitsByTable)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        ),
      ],
      ['DynamoDB read units per item', ...modes.map((mm) => f(work[mm]!.dynamoReadUnitsPerItem, 2))],
      [
        'S3 PUT / GET / LIST per item',
        ...modes.map((mm) => `${work[mm]!.s3PutsPerItem} / ${work[mm]!.s3GetsPerItem} / ${work[mm]!.s3ListsPerItem}`),
      ],
      [
        'evidence bytes per write (bucket, batch share included)',
        ...modes.map((mm) => `${f(work[mm]!.evidenceBytesPerItem / 1024, 1)} KiB`),
      ],
      ['SES emails per item', ...modes.map((mm) => f(work[mm]!.emailsPerItem, 2))],
      ...work[head]!.functions.map((fn) => [
        `Lambda ${fn.fn} (${fn.per === 'item' ? 'per item' : 'per batch'}${fn.browser ? ', browser' : ''}): invocations × mean ms (vendor ms, CPU ms)`,
        ...modes.map((mm) => {
          const w = work[mm]!.functions.find((x) => x.fn === fn.fn);
          return w ? `${w.invocations} × ${f(w.meanMs)} ms (vendor ${f(w.vendorMs)}, CPU ${f(w.cpuMs)})` : '—';
        }),
      ]),
      [
        'evidence objects per item (count × mean size)',
        ...modes.map(() =>
          Object.entries(cost.evidencePerItem)
            .map(([name, e]) => `${e.perItem}× ${name} ${f(e.meanBytes / 1024, 0)} KiB`)
            .join(', '),
        ),
      ],
    ],
  );
  values['scenario'] =
    `${s.writes} writes in batches of ${s.batchSize} at Map concurrency ${s.concurrency}; every batch starts cold (batches hours
apart, so Lambda has recycled the environments), warm within a batch: ${f(base.coldShareBrowser * 100, 1)}% of browser invocations are cold,
each adding ${s.coldInitSecondsBrowser} s (the published upper bound for this Chromium; INIT is billed since August 2025) and ${s.coldInitSecondsOther} s for the
other functions`;
  const lineRows = base.lines.map((line, i) => [
    line.item,
    ...modes.flatMap((mm) => {
      const measured = cost.baseline[mm]!.lines[i]!;
      const cpu = cost.baselineCpu[mm]!.lines[i]!;
      const qty = (q: number) => `${f(q, line.unit === 'GB-s' ? 1 : 0)} ${line.unit}`;
      return [
        measured.quantity === cpu.quantity ? qty(measured.quantity) : `${qty(measured.quantity)} / ${qty(cpu.quantity)}`,
        usd(measured.cost),
        usd(cpu.cost),
      ];
    }),
  ]);
  values['costTable'] = table(
    ['line', ...modes.flatMap((mm) => [`quantity, tracing ${mm} (measured / CPU)`, `as measured, ${mm}`, `CPU basis, ${mm}`])],
    [
      ...lineRows,
      [
        '**total per 1000 guarded writes**',
        ...modes.flatMap((mm) => ['', `**${usd(cost.baseline[mm]!.total)}**`, `**${usd(cost.baselineCpu[mm]!.total)}**`]),
      ],
    ],
  );
  values['retention'] = modes
    .map((mm) => `${usd(cost.baseline[mm]!.evidenceRetention)} per 1000 writes for the whole retention period (tracing ${mm})`)
    .join('; ');
  values['approval'] = `${cost.approval.emails} emails (${usd(cost.approval.sesCost)} SES)`;
  values['head'] = head;
  values['sensitivityTable'] = table(
    ['scenario', 'as measured', 'CPU basis'],
    cost.sensitivity.map((x) => [x.label, usd(x.total), usd(x.totalCpu)]),
  );
  values['baselineTotal'] = usd(base.total);
  values['baselineCpuTotal'] = usd(cost.baselineCpu[head]!.total);
  const change = (d: number, pct: number) => `${d >= 0 ? '+' : ''}${usd(d)} (${pct >= 0 ? '+' : ''}${f(pct, 1)}%)`;
  values['leversTable'] = table(
    ['lever', 'setting', 'as measured', 'change', 'CPU basis', 'change'],
    cost.levers.map((l) => [
      l.lever,
      l.setting,
      usd(l.total),
      change(l.delta, l.deltaPercent),
      usd(l.totalCpu),
      change(l.deltaCpu, l.deltaPercentCpu),
    ]),
  );
  values['viewportShotMs'] = f(b.pageOps.viewportScreenshotMs.median);
  values['fullShotMs'] = f(b.pageOps.fullPageScreenshotMs.median);
  values['guaranteeCosts'] = guaranteeCosts(r, head);
  return fillTemplate(template, values);
}

/** What each guarantee costs per item in this run, so a missed target says which guarantee it would take to meet it. */
function guaranteeCosts(r: BenchReport, head: 'on' | 'off'): string {
  const g = r.vendorSplit.guarded[head]!;
  const step = (name: string) => g.steps.find((st) => st.step === name);
  const shots = Object.entries(r.cost.evidencePerItem).filter(([name]) => name.endsWith('.png'));
  const shotCount = shots.reduce((n, [, e]) => n + e.perItem, 0);
  const capture = r.browser.pageOps.viewportScreenshotMs.median;
  const off = r.vendorSplit.guarded.off;
  const on = r.vendorSplit.guarded.on;
  const traceCost =
    on && off
      ? `${f((on.steps.find((st) => st.step === 'BrowserWrite')?.meanMs ?? 0) - (off.steps.find((st) => st.step === 'BrowserWrite')?.meanMs ?? 0))} ms of BrowserWrite (tracing on against off, this run)`
      : 'run with `--tracing both` to price it';
  return [
    'What each guarantee costs per item in this run (the price of meeting a missed target by dropping it):',
    '',
    '- **Independent readback** (a session and login of its own, polled until settled; the page pictured when the verdict is not ' +
      `confirmed): Readback ${f(step('Readback')?.meanMs)} ms mean, ${f(step('Readback')?.vendorRequestsPerItem, 1)} vendor requests, ` +
      `${f(step('Readback')?.sessionsPerItem, 2)} sessions per item.`,
    `- **Legible before/after pictures**: ${f(shotCount, 0)} viewport screenshots per item (${shots.map(([name]) => name).join(', ')}) at ${f(capture)} ms each: ~${f(shotCount * capture)} ms.`,
    `- **The write's trace**: ${traceCost}.`,
    '- **Pictures beyond the guarantees** (not taken here by default, docs/evidence.md): with `evidence.before_commit_picture: always` ' +
      'and `evidence.readback_picture: always` every item takes two more viewport captures (the confirmation just before the commit ' +
      "click, which the trace's snapshot of that click already shows, and the confirmed readback's page, which shows the after " +
      `picture's settled row): ~${f(2 * capture)} ms at ${f(capture)} ms each, plus their uploads.`,
    `- **Hashed and sealed evidence**: Complete ${f(step('Complete')?.meanMs)} ms mean per item (record, pages, audit chain); the batch's seal is in its Summarize step.`,
    '',
    medianBudget(r, head),
  ].join('\n');
}

/**
 * The median target as arithmetic: what 1.25x V1 leaves the guard, against what the steps V1 has no counterpart for
 * take (routing, the claim, the independent readback, closing the item). Step means, since means add up.
 */
function medianBudget(r: BenchReport, head: 'on' | 'off'): string {
  const v1 = r.latency.rawEvidence.median;
  const steps = r.vendorSplit.guarded[head]!.steps;
  const mean = (name: string) => {
    const found = steps.find((st) => st.step === name);
    if (!found) throw new Error(`the guarded runs have no ${name} step`);
    return found.meanMs;
  };
  const own = ['ValidateRoute', 'Claim', 'Readback', 'Complete'];
  const ownMs = own.reduce((sum, name) => sum + mean(name), 0);
  return (
    `The median target leaves the guard ${f(0.25 * v1)} ms over V1's median of ${f(v1)} ms. The steps V1 has no counterpart for ` +
    `take ${f(ownMs)} ms of a guarded item on average (${own.map((name) => `${name} ${f(mean(name))}`).join(', ')}), the ` +
    `independent readback ${f(mean('Readback'))} ms alone (${f(mean('Readback') / v1, 2)}x V1's median). BrowserWrite, which does ` +
    `what V1's item does plus the claim's move to WRITING (and a before-commit picture for irreversible, approved or untraced writes), takes ${f(mean('BrowserWrite'))} ms ` +
    `on average (${f(mean('BrowserWrite') / v1, 2)}x); the guarded item ${f(r.vendorSplit.guarded[head]!.itemMs.mean)} ms.`
  );
}
