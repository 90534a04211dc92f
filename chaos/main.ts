import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { parseCommand, type CommandSpec } from '../src/cli/args.js';
import { ValidationError } from '../src/config/errors.js';
import { FAULT_KINDS, type FaultKind } from '../backoffices/simulator/schemas.js';
import { SOAK_BACK_OFFICES, soakBackOffice } from './back-office.js';
import { MAX_ITEMS_PER_TENANT } from './faults.js';
import { runSoak, type SoakReport } from './soak.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

const USAGE = `Usage: npm run chaos -- [--back-office simulator|ledgerly|settlo] [--items 200] [--runners 3]
                      [--fault-rate 0.2] [--faults kind,kind,...] [--seed 7]
                      [--kill-after 0.35] [--lease-seconds 20] [--readback-deadline-ms 6000]
                      [--concurrency 2] [--redesign-renders 2] [--no-restart] [--no-operator-retry]
                      [--lambda-throttles 0.2]
                      [--time-limit-min 90] [--config <file>] [--data-dir <folder to keep>]
                      [--report-file <json>] [--json]

Seeds the back office (the bundled simulator, Ledgerly with
config/ledgerly.local.yaml, or Settlo with config/settlo.local.yaml), assigns seeded faults to a share of the bills
(drawn from every kind, or only the --faults kinds, each in turn), runs the
batches with concurrent runners in a process that is SIGKILLed mid-batch and
restarted on the same data folder, retries every open takeover item as an
operator, then checks: at most one vendor mutation per key, no false success,
no lost item. Prints the four rates. Exit code 1 when an invariant breaks.
--lambda-throttles P refuses each invocation of every Lambda task state with
Lambda.TooManyRequestsException with probability P (the local runner's fault
switch), as an account at its concurrency quota does.`;

const FaultKinds = z
  .string()
  .transform((list) => list.split(',').map((k) => k.trim()))
  .pipe(z.array(z.enum(FAULT_KINDS, { message: `fault kinds are ${FAULT_KINDS.join(', ')}` })).min(1));

const Flags = z
  .object({
    'back-office': z.enum(SOAK_BACK_OFFICES).default('simulator'),
    faults: FaultKinds.optional(),
    items: z.coerce.number().int().min(1).max(600).default(200),
    runners: z.coerce.number().int().min(1).max(8).default(3),
    'fault-rate': z.coerce.number().min(0).max(1).default(0.2),
    seed: z.coerce
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .default(7),
    'kill-after': z.coerce.number().min(0).max(1).default(0.35),
    'lease-seconds': z.coerce.number().int().min(10).max(3600).default(20),
    'readback-deadline-ms': z.coerce.number().int().min(1000).max(120_000).default(6000),
    concurrency: z.coerce.number().int().min(1).max(8).default(2),
    'redesign-renders': z.coerce.number().int().min(0).max(100).default(2),
    'no-restart': z.boolean().default(false),
    'no-operator-retry': z.boolean().default(false),
    'lambda-throttles': z.coerce.number().min(0).max(0.9).default(0),
    'time-limit-min': z.coerce
      .number()
      .min(1)
      .max(24 * 60)
      .default(90),
    'data-dir': z.string().min(1).optional(),
    config: z.string().min(1).optional(),
    json: z.boolean().default(false),
    'report-file': z.string().min(1).optional(),
  })
  .strict()
  .refine((f) => f.items <= soakBackOffice(f['back-office']).maxTenants * MAX_ITEMS_PER_TENANT, {
    message: `at most ${MAX_ITEMS_PER_TENANT} items per tenant, and Ledgerly holds at most 9 orgs (450 items)`,
    path: ['items'],
  })
  .refine((f) => Math.round(f.items * f['fault-rate']) <= 100, {
    message: 'at most 100 bill faults (items × fault-rate)',
    path: ['fault-rate'],
  });

const CHAOS_SPEC: CommandSpec<typeof Flags> = {
  name: 'chaos',
  invocation: 'npm run chaos --',
  summary: 'the chaos soak: seeded faults, killed runners, invariants checked',
  description: USAGE,
  flags: Flags,
};

const pct = (x: number | null) => (x === null ? 'n/a (nothing to roll back)' : `${(x * 100).toFixed(1)}%`);

export function printReport(report: SoakReport, out: (line: string) => void): void {
  const v = report.verdict;
  out('');
  out(
    `soak on ${report.options.backOffice} ${report.ok ? 'PASSED' : 'FAILED'} in ${(report.durationMs / 1000).toFixed(0)} s: ${v.counts.items} items, ${v.counts.vendorMutations} vendor mutations`,
  );
  for (const p of report.phases) {
    out(
      `  ${p.label}: ${p.killed ? 'killed (SIGKILL)' : `exit ${p.exitCode}`} after ${(p.durationMs / 1000).toFixed(0)} s, ${p.batches} batch run(s), ${p.mutationsAtEnd} mutations by then${p.recovered ? `, ${p.recovered.length} orphaned claim(s) resumed` : ''}${p.error ? `; ERROR ${p.error}` : ''}`,
    );
  }
  if (report.operator) out(`  operator retries: ${report.operator.retried} ${JSON.stringify(report.operator.outcomes)}`);
  out(`  faults planned ${JSON.stringify(report.faults.planned)}, fired ${JSON.stringify(report.faults.fired)}`);
  if (report.lambdaFaults.throttleProbability > 0) {
    const fired = Object.values(report.lambdaFaults.fired).reduce((a, b) => a + b, 0);
    out(`  Lambda throttles (p ${report.lambdaFaults.throttleProbability}): ${fired} fired ${JSON.stringify(report.lambdaFaults.fired)}`);
  }
  out(
    `  claims ${JSON.stringify(v.counts.claimStatus)}; executions ${JSON.stringify(report.executions.byStatus)}${report.executions.failed.length ? `; ${report.executions.failed.length} failed for other reasons than the kill` : ''}`,
  );
  out('invariants');
  out(
    `  mutations per key (max)      ${v.invariants.maxMutationsPerKey}   must be <= 1   ${v.invariants.keysWithMoreThanOneMutation.length ? JSON.stringify(v.invariants.keysWithMoreThanOneMutation) : 'ok'}`,
  );
  out(
    `  false successes              ${v.invariants.falseSuccesses.length}   must be 0   ${v.invariants.falseSuccesses.length ? JSON.stringify(v.invariants.falseSuccesses) : 'ok'}`,
  );
  out(
    `  lost items                   ${v.invariants.lostItems.length}   must be 0   ${v.invariants.lostItems.length ? JSON.stringify(v.invariants.lostItems) : 'ok'}`,
  );
  out(`  unattributed mutations       ${v.invariants.unattributedMutations.length}   must be 0`);
  out('metrics');
  out(`  misoperation rate            ${pct(v.metrics.misoperationRate)}  (${v.counts.misoperations}/${v.counts.items})`);
  out(
    `  task completion rate         ${pct(v.metrics.completionRate)}  (${v.counts.done}/${v.counts.items} done; ${v.counts.doneWithoutOperator} without a person)`,
  );
  out(
    `  human takeover rate          ${pct(v.metrics.takeoverRate)}  (${v.counts.wentToTakeover}/${v.counts.items} went to the queue; ${v.counts.openInTakeover} still open)`,
  );
  out(
    `  rollback success rate        ${pct(v.metrics.rollbackSuccessRate)}  (${v.counts.rollbackSucceeded}/${v.counts.rollbackAttempted})`,
  );
  if (report.unsettledBills.length) out(`  note: ${report.unsettledBills.length} bill(s) still settling at the end`);
  for (const f of report.executions.failed.slice(0, 10)) out(`  failed execution ${f.name}: ${f.error}`);
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let flags: z.output<typeof Flags>;
  try {
    ({ flags } = parseCommand(CHAOS_SPEC, argv));
  } catch (error) {
    if (error instanceof ValidationError) {
      process.stderr.write(`${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
  const faultKinds: FaultKind[] | undefined = flags.faults;
  const report = await runSoak({
    backOffice: flags['back-office'],
    ...(faultKinds ? { faultKinds } : {}),
    items: flags.items,
    runners: flags.runners,
    faultRate: flags['fault-rate'],
    seed: flags.seed,
    killAfter: flags['kill-after'],
    claimLeaseSeconds: flags['lease-seconds'],
    readbackDeadlineMs: flags['readback-deadline-ms'],
    maxConcurrency: flags.concurrency,
    redesignRenders: flags['redesign-renders'],
    restart: !flags['no-restart'],
    operatorRetry: !flags['no-operator-retry'],
    lambdaThrottles: flags['lambda-throttles'],
    settleMs: 200,
    timeLimitMs: flags['time-limit-min'] * 60_000,
    ...(flags.config ? { baseConfigPath: flags.config } : {}),
    ...(flags['data-dir'] ? { dataDir: flags['data-dir'] } : {}),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  printReport(report, (line) => process.stdout.write(`${line}\n`));
  if (flags['report-file']) writeFileSync(flags['report-file'], `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(
    `${JSON.stringify(flags.json ? report : { ok: report.ok, ...report.verdict.metrics, maxMutationsPerKey: report.verdict.invariants.maxMutationsPerKey, falseSuccesses: report.verdict.invariants.falseSuccesses.length, lostItems: report.verdict.invariants.lostItems.length })}\n`,
  );
  return report.ok ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
