import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  type HistoryEvent,
  type SFNClient,
} from '@aws-sdk/client-sfn';

/**
 * Reads executions back through the Step Functions API (the local endpoint
 * speaks the same protocol as AWS) and turns their histories into what the
 * benchmark and the cost model need: state transitions (billed per state
 * entered, retries included), step windows, and Lambda invocations.
 */

export interface LambdaInvocation {
  /** Function name without the deployment prefix, e.g. "browser-write". */
  fn: string;
  state: string;
  startedAt: number;
  endedAt: number;
  durationMs: number;
  failed: boolean;
}

export interface StepWindow {
  state: string;
  type: string;
  enteredAt: number;
  exitedAt: number;
  durationMs: number;
}

export interface ParsedHistory {
  executionArn: string;
  startedAt: number;
  stoppedAt: number;
  durationMs: number;
  status: string;
  output: unknown;
  /** States entered; Step Functions Standard bills each one, including Pass, Choice and Succeed. */
  stateTransitions: number;
  /** Extra attempts of a Task inside one state entry (Retry); each is billed as a transition too. */
  retries: number;
  steps: StepWindow[];
  invocations: LambdaInvocation[];
  /** Map iterations seen (batch executions only). */
  mapIterations: number;
  statesEntered: Record<string, number>;
}

export async function fullHistory(sfn: SFNClient, executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken, includeExecutionData: true }));
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}

function functionFromResource(resource: string | undefined, prefix: string): string {
  const name = resource?.split(':function:')[1]?.split(':')[0] ?? resource ?? 'unknown';
  return name.startsWith(`${prefix}-`) ? name.slice(prefix.length + 1) : name;
}

export function parseHistory(
  executionArn: string,
  events: HistoryEvent[],
  prefix: string,
  describe: { startedAt: number; stoppedAt: number; status: string; output: unknown },
): ParsedHistory {
  let stateTransitions = 0;
  let retries = 0;
  let mapIterations = 0;
  const statesEntered: Record<string, number> = {};
  const steps: StepWindow[] = [];
  const invocations: LambdaInvocation[] = [];
  // Open state entries by name, first in first out: Map iterations of one state can overlap.
  const open = new Map<string, Array<{ type: string; at: number; attempts: number }>>();
  const openLambdas: Array<{ fn: string; state: string; startedAt: number }> = [];
  let currentTaskState = '';

  for (const event of events) {
    const type = event.type ?? '';
    const at = event.timestamp instanceof Date ? event.timestamp.getTime() : Number(event.timestamp);
    if (type.endsWith('StateEntered')) {
      const name = event.stateEnteredEventDetails?.name ?? '?';
      stateTransitions += 1;
      statesEntered[name] = (statesEntered[name] ?? 0) + 1;
      const list = open.get(name) ?? [];
      list.push({ type: type.slice(0, -'StateEntered'.length), at, attempts: 0 });
      open.set(name, list);
      currentTaskState = name;
    } else if (type.endsWith('StateExited')) {
      const name = event.stateExitedEventDetails?.name ?? '?';
      const entry = open.get(name)?.shift();
      if (entry) steps.push({ state: name, type: entry.type, enteredAt: entry.at, exitedAt: at, durationMs: at - entry.at });
    } else if (type === 'LambdaFunctionScheduled' || type === 'TaskScheduled') {
      const entry = open.get(currentTaskState)?.[0];
      if (entry) {
        entry.attempts += 1;
        if (entry.attempts > 1) retries += 1;
      }
      if (type === 'LambdaFunctionScheduled') {
        openLambdas.push({
          fn: functionFromResource(event.lambdaFunctionScheduledEventDetails?.resource, prefix),
          state: currentTaskState,
          startedAt: at,
        });
      }
    } else if (type === 'LambdaFunctionStarted') {
      const last = openLambdas[openLambdas.length - 1];
      if (last) last.startedAt = at;
    } else if (type === 'LambdaFunctionSucceeded' || type === 'LambdaFunctionFailed' || type === 'LambdaFunctionTimedOut') {
      const started = openLambdas.shift();
      if (started)
        invocations.push({ ...started, endedAt: at, durationMs: at - started.startedAt, failed: type !== 'LambdaFunctionSucceeded' });
    } else if (type === 'MapIterationStarted') {
      mapIterations += 1;
    }
  }
  return {
    executionArn,
    startedAt: describe.startedAt,
    stoppedAt: describe.stoppedAt,
    durationMs: describe.stoppedAt - describe.startedAt,
    status: describe.status,
    output: describe.output,
    stateTransitions: stateTransitions + retries,
    retries,
    steps,
    invocations,
    mapIterations,
    statesEntered,
  };
}

export async function readExecution(sfn: SFNClient, executionArn: string, prefix: string): Promise<ParsedHistory> {
  const described = await sfn.send(new DescribeExecutionCommand({ executionArn }));
  const events = await fullHistory(sfn, executionArn);
  return parseHistory(executionArn, events, prefix, {
    startedAt: described.startDate?.getTime() ?? 0,
    stoppedAt: described.stopDate?.getTime() ?? Date.now(),
    status: described.status ?? 'UNKNOWN',
    output: described.output ? (JSON.parse(described.output) as unknown) : undefined,
  });
}

/** Executions of a state machine that started inside [from, to]. */
export async function executionsBetween(sfn: SFNClient, stateMachineArn: string, from: number, to: number): Promise<string[]> {
  const arns: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(new ListExecutionsCommand({ stateMachineArn, maxResults: 1000, nextToken }));
    for (const e of page.executions ?? []) {
      const started = e.startDate?.getTime() ?? 0;
      if (started >= from && started <= to && e.executionArn) arns.push(e.executionArn);
    }
    nextToken = page.nextToken;
  } while (nextToken);
  return arns;
}

/**
 * A Distributed Map's iterations: one child execution per item, named `<first 8 of the map run id>-<index>` under
 * `<state machine>/<map label>`, each with its own history. Read until the first index that does not exist.
 */
export async function readMapIterations(sfn: SFNClient, batchExecutionArn: string, prefix: string): Promise<ParsedHistory[]> {
  const events = await fullHistory(sfn, batchExecutionArn);
  const out: ParsedHistory[] = [];
  for (const event of events) {
    const mapRunArn = event.mapRunStartedEventDetails?.mapRunArn;
    const m = mapRunArn ? /^arn:aws:states:([^:]+):([^:]+):mapRun:(.+):([0-9a-f-]+)$/.exec(mapRunArn) : null;
    if (!m) continue;
    const [, region, account, childMachine, runId] = m;
    for (let index = 0; ; index++) {
      const arn = `arn:aws:states:${region}:${account}:execution:${childMachine}:${runId!.slice(0, 8)}-${index}`;
      const parsed = await readExecution(sfn, arn, prefix).catch(() => undefined);
      if (!parsed) break;
      out.push(parsed);
    }
  }
  return out;
}
