import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { executionRecordSchema, stateMachineRecordSchema, type ExecutionRecord, type StateMachineRecord } from './records.js';

/** Where state machines and executions live between runs. */
export interface SfnStore {
  loadStateMachines(): StateMachineRecord[];
  loadExecutions(): ExecutionRecord[];
  saveStateMachine(record: StateMachineRecord): void;
  /** `soon` batches frequent history updates; status changes are written at once. */
  saveExecution(record: ExecutionRecord, when?: 'now' | 'soon'): void;
  flush(): void;
}

export class MemoryStore implements SfnStore {
  loadStateMachines(): StateMachineRecord[] {
    return [];
  }
  loadExecutions(): ExecutionRecord[] {
    return [];
  }
  saveStateMachine(): void {}
  saveExecution(): void {}
  flush(): void {}
}

const BATCH_MS = 50;

/**
 * One JSON file per state machine and per execution:
 *   <dir>/state-machines/<name>.json
 *   <dir>/executions/<state machine>/<execution>.json
 * Written to a temporary file and renamed, so a crash never leaves half a record.
 */
export class FileStore implements SfnStore {
  private readonly pending = new Map<string, { record: ExecutionRecord; timer: NodeJS.Timeout }>();

  constructor(private readonly dir: string) {
    mkdirSync(join(dir, 'state-machines'), { recursive: true });
    mkdirSync(join(dir, 'executions'), { recursive: true });
  }

  loadStateMachines(): StateMachineRecord[] {
    const folder = join(this.dir, 'state-machines');
    return jsonFiles(folder).map((file) => readRecord(join(folder, file), stateMachineRecordSchema));
  }

  loadExecutions(): ExecutionRecord[] {
    const root = join(this.dir, 'executions');
    return readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => jsonFiles(join(root, d.name)).map((file) => readRecord(join(root, d.name, file), executionRecordSchema)));
  }

  saveStateMachine(record: StateMachineRecord): void {
    writeAtomically(join(this.dir, 'state-machines', fileName(record.name)), record);
  }

  saveExecution(record: ExecutionRecord, when: 'now' | 'soon' = 'now'): void {
    const key = record.executionArn;
    const queued = this.pending.get(key);
    if (when === 'soon') {
      if (queued) return;
      const timer = setTimeout(() => this.write(key), BATCH_MS);
      timer.unref();
      this.pending.set(key, { record, timer });
      return;
    }
    if (queued) clearTimeout(queued.timer);
    this.pending.delete(key);
    this.writeExecution(record);
  }

  flush(): void {
    for (const key of [...this.pending.keys()]) this.write(key);
  }

  private write(key: string): void {
    const queued = this.pending.get(key);
    if (!queued) return;
    clearTimeout(queued.timer);
    this.pending.delete(key);
    this.writeExecution(queued.record);
  }

  private writeExecution(record: ExecutionRecord): void {
    const folder = join(this.dir, 'executions', fileName(record.stateMachineName, ''));
    mkdirSync(folder, { recursive: true });
    writeAtomically(join(folder, fileName(record.name)), record);
  }
}

function fileName(name: string, suffix = '.json'): string {
  // Names may hold characters like '.' or unicode; encoding keeps them one safe path segment.
  return encodeURIComponent(name).replace(/^\.+/, (dots) => '%2E'.repeat(dots.length)) + suffix;
}

function jsonFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).filter((f) => f.endsWith('.json'));
}

function writeAtomically(file: string, value: unknown): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(value));
  renameSync(tmp, file);
}

function readRecord<T>(file: string, schema: z.ZodType<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not readable JSON (${(err as Error).message}); delete the file or the data folder to start clean`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${file}: field "${issue?.path.join('.') || '(root)'}" ${issue?.message ?? 'is invalid'}; ` +
        'the file was not written by this version of the local runner - delete it or the data folder',
    );
  }
  return parsed.data;
}
