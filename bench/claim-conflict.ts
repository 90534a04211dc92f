import { attestedTask } from '../src/app/requester.js';
import { WriteTask } from '../src/domain/task.js';
import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { closeSharedBrowser } from '../src/browser/chromium.js';
import type { EmbeddedPaperclip } from '../twin/runtime/embedded-paperclip.js';
import type { SimulatorControl } from '../backoffices/simulator/control-client.js';
import { idempotencyKey } from '../src/domain/task.js';
import { summarize, type Summary } from './stats.js';
import { chromiumPids } from './browser-memory.js';
import { readExecution } from './execution-history.js';
import { toRequests } from './vendor-wait.js';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A lost claim must be decided fast and must cost no browser. Measured two
 * ways: the bare conditional put on an existing key against local DynamoDB,
 * and whole guarded-write executions for keys a finished run already holds,
 * started while no browser is running and watched from /proc.
 */

export interface ClaimConflictReport {
  /** ClaimsStore.tryCreate on a key that exists: the conditional put DynamoDB refuses. */
  conditionalPutConflictMs: Summary;
  lostClaimRuns: {
    executions: number;
    outcomes: Record<string, number>;
    /** The Claim state as the history records it: conditional put refused, read the holder, decide. */
    claimStepMs: Summary;
    /** Whole execution: routing (one vendor API read of the bill's owner), claim, skip. */
    executionMs: Summary;
    statesVisited: string[];
    browserStepsEntered: number;
    sessionsOpened: number;
    chromiumProcessesBefore: number;
    chromiumProcessesPeak: number;
    vendorPageRequests: number;
    vendorApiRequests: number;
    mutations: number;
    noBrowserLaunched: boolean;
  };
}

/** States whose function is a browser function: a lost claim ends at ClaimDecision and enters none of them. */
const BROWSER_STATES = ['Snapshot', 'BrowserWrite', 'Readback'];

export async function measureClaimConflict(options: {
  paperclip: EmbeddedPaperclip;
  control: SimulatorControl;
  /** Tasks whose keys a finished run already holds. */
  tasks: Array<{ taskId: string; tenant: string; billNo: string; action: string }>;
  samples: number;
  prefix: string;
}): Promise<ClaimConflictReport> {
  const { paperclip, control, tasks } = options;
  const s = paperclip.services;
  const first = tasks[0];
  if (!first) throw new Error('the claim conflict measurement needs at least one finished task');
  const existing = await s.claims.get(idempotencyKey(first));
  if (!existing) throw new Error(`no claim for ${first.billNo}: run the guarded batch first`);

  const conflict: number[] = [];
  for (let i = 0; i < options.samples; i++) {
    const started = performance.now();
    const created = await s.claims.tryCreate({ ...existing, owner: `bench-second-runner-${i}` });
    conflict.push(performance.now() - started);
    if (created) throw new Error('a conditional put on an existing key succeeded: the idempotency registry is broken');
  }

  // No browser may run from here on: close the shared one and watch the process tree.
  await closeSharedBrowser();
  const chromiumBefore = chromiumPids().length;
  let chromiumPeak = chromiumBefore;
  const watcher = setInterval(() => {
    chromiumPeak = Math.max(chromiumPeak, chromiumPids().length);
  }, 50);
  let sessionsOpened = 0;
  const realOpen = s.sessions.open.bind(s.sessions);
  // Counting only: every call still goes to the real IdentitySessions.
  s.sessions.open = (...args: Parameters<typeof realOpen>) => {
    sessionsOpened += 1;
    return realOpen(...args);
  };
  const journalBefore = (await control.journal()).length;
  const timingsBefore = (await control.timings()).length;
  const stamp = Date.now().toString(36);
  const parsed = [];
  try {
    for (const [i, task] of tasks.entries()) {
      const name = `second-runner-${stamp}-${i}`;
      // A second runner is an entry point too: it attests the requester for its own execution.
      const attested = await attestedTask(s, WriteTask.parse({ ...task, requestedBy: 'schedule', params: {} }), name);
      const started = await s.clients.sfn.send(
        new StartExecutionCommand({ stateMachineArn: paperclip.arns.guardedWrite, name, input: JSON.stringify({ task: attested }) }),
      );
      while ((await s.clients.sfn.send(new DescribeExecutionCommand({ executionArn: started.executionArn! }))).status === 'RUNNING') {
        await sleep(20);
      }
      parsed.push(await readExecution(s.clients.sfn, started.executionArn!, options.prefix));
    }
  } finally {
    clearInterval(watcher);
    s.sessions.open = realOpen;
  }
  chromiumPeak = Math.max(chromiumPeak, chromiumPids().length);
  const requests = toRequests((await control.timings()).slice(timingsBefore));
  const mutations = (await control.journal()).length - journalBefore;
  const outcomes: Record<string, number> = {};
  const visited = new Set<string>();
  let browserStepsEntered = 0;
  for (const run of parsed) {
    const outcome = String((run.output as { outcome?: unknown } | undefined)?.outcome ?? run.status);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    for (const [state, n] of Object.entries(run.statesEntered)) {
      visited.add(state);
      if (BROWSER_STATES.includes(state)) browserStepsEntered += n;
    }
  }
  const vendorPageRequests = requests.filter((r) => !r.path.startsWith('/api/')).length;
  return {
    conditionalPutConflictMs: summarize(conflict),
    lostClaimRuns: {
      executions: parsed.length,
      outcomes,
      claimStepMs: summarize(parsed.flatMap((r) => r.steps.filter((st) => st.state === 'Claim').map((st) => st.durationMs))),
      executionMs: summarize(parsed.map((r) => r.durationMs)),
      statesVisited: [...visited],
      browserStepsEntered,
      sessionsOpened,
      chromiumProcessesBefore: chromiumBefore,
      chromiumProcessesPeak: chromiumPeak,
      vendorPageRequests,
      vendorApiRequests: requests.length - vendorPageRequests,
      mutations,
      noBrowserLaunched: chromiumPeak === 0 && sessionsOpened === 0 && browserStepsEntered === 0 && vendorPageRequests === 0,
    },
  };
}
