import { readFileSync } from 'node:fs';
import { parseOrThrow } from '../src/config/errors.js';
import { startEmbeddedSession } from '../src/cli/data-folder.js';
import { recoverOrphanedClaims } from '../src/app/takeover/recover.js';
import { RunnerSpec } from './runner-spec.js';
import type { TaskFault } from '../twin/aws/stepfunctions/index.js';

/**
 * One soak runner process: the embedded Paperclip on the soak's data folder,
 * `runners` concurrent batch loops over the soak's tasks, and (after a
 * restart) first the recovery of claims the killed process left behind. The
 * parent may SIGKILL it at any moment; everything it needs afterwards is in
 * the data folder and the simulator's journal.
 *
 * Reports progress as JSON lines on stdout.
 */

function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), ...event })}\n`);
}

async function main(): Promise<void> {
  const specPath = process.argv[process.argv.indexOf('--spec') + 1];
  if (!specPath || !process.argv.includes('--spec')) throw new Error('usage: runner.ts --spec <file.json>');
  const spec = parseOrThrow(RunnerSpec, JSON.parse(readFileSync(specPath, 'utf8')), specPath);
  const session = await startEmbeddedSession({
    dataDir: spec.dataDir,
    configPath: spec.configPath,
    vendorBaseUrl: spec.vendorUrl,
    ...(spec.lambdaFaults.length > 0
      ? { faults: spec.lambdaFaults as unknown as TaskFault[], faultOptions: { seed: spec.lambdaFaultSeed } }
      : {}),
  });
  const lambdaFaultsFired = () => session.paperclip.stack.stepFunctions.faultsFired();
  const s = session.services;
  emit({ event: 'started', label: spec.label, pid: process.pid });
  try {
    if (spec.recoverFirst) {
      const recovered = await recoverOrphanedClaims(s, {
        taskIds: spec.tasks.map((t) => t.taskId),
        waitForLeases: true,
        requestedBy: `soak-${spec.label}`,
        log: (line) => emit({ event: 'log', line }),
      });
      emit({
        event: 'recovered',
        results: recovered.map((r) => ({
          key: r.key,
          billNo: r.billNo,
          from: r.from,
          status: r.status,
          outcome: r.execution?.outcome ?? null,
          reason: r.execution?.reason ?? null,
        })),
      });
    }
    // Runner r starts at task r: the runners race on the same keys from different ends of the list.
    await Promise.all(
      Array.from({ length: spec.runners }, async (_, r) => {
        for (let i = 0; i < spec.tasks.length; i++) {
          const task = spec.tasks[(r + i) % spec.tasks.length]!;
          for (let attempt = 1; attempt <= spec.readAttempts; attempt++) {
            const run = await session.paperclip.runBatch({
              taskId: task.taskId,
              tenant: task.tenant,
              requestedBy: `soak-${spec.label}-runner-${r}`,
            });
            emit({
              event: 'batch',
              runner: r,
              tenant: task.tenant,
              attempt,
              status: run.status,
              summary: run.summary ?? null,
              error: run.error ?? null,
              // So far in this process: a killed runner's last batch line still says what fired.
              lambdaFaultsFired: lambdaFaultsFired(),
            });
            if (run.status === 'SUCCEEDED' && !run.summary?.error) break;
          }
        }
      }),
    );
    emit({ event: 'finished', label: spec.label });
  } finally {
    await session.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    emit({ event: 'error', message: (error as Error).stack ?? String(error) });
    process.exit(1);
  },
);
