/**
 * A small structured logger: one JSON object per line, so a model call, a
 * step or a notification can be found and counted with grep/jq or CloudWatch
 * Logs Insights without parsing prose.
 */

export type LogFields = Record<string, unknown>;

export interface PlannerLogger {
  log(event: string, fields?: LogFields): void;
}

export type LineWriter = (line: string) => void;

const writeToStderr: LineWriter = (line) => {
  process.stderr.write(`${line}\n`);
};

export function jsonLineLogger(write: LineWriter = writeToStderr, base: LogFields = {}): PlannerLogger {
  return {
    log(event, fields = {}) {
      write(JSON.stringify({ ts: new Date().toISOString(), event, ...base, ...fields }));
    },
  };
}

/** Keeps every line in memory; used where a caller wants to show or assert what was logged. */
export function memoryLogger(): PlannerLogger & { lines: string[]; events(name?: string): LogFields[] } {
  const lines: string[] = [];
  const logger = jsonLineLogger((line) => lines.push(line));
  return {
    ...logger,
    lines,
    events(name) {
      return lines.map((l) => JSON.parse(l) as LogFields).filter((e) => name === undefined || e['event'] === name);
    },
  };
}

export const silentLogger: PlannerLogger = { log() {} };
