import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseOrThrow } from '../../src/config/errors.js';
import { TaskExistsError, TaskId, TaskRecord, TaskVersionConflictError, type TaskStatus, type TaskStore } from '../task-state.js';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Tasks as JSON files, one per task, for a single machine. Writes go to a
 * temporary file renamed over the old one (a crash never leaves half a
 * record), under a per-task lock file so two processes on the machine cannot
 * interleave a read-check-write.
 */
export class FileTaskStore implements TaskStore {
  constructor(private readonly dir: string) {}

  private path(taskId: string): string {
    return join(this.dir, `${parseOrThrow(TaskId, taskId, 'taskId')}.json`);
  }

  async create(record: TaskRecord): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const valid = parseOrThrow(TaskRecord, record, `task ${record.taskId}`);
    await this.locked(valid.taskId, async () => {
      try {
        await stat(this.path(valid.taskId));
        throw new TaskExistsError(valid.taskId);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      await this.write(valid);
    });
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    let text: string;
    try {
      text = await readFile(this.path(taskId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return parseOrThrow(TaskRecord, JSON.parse(text), this.path(taskId));
  }

  async update(record: TaskRecord, expectedVersion: number): Promise<TaskRecord> {
    const next = parseOrThrow(TaskRecord, { ...record, version: expectedVersion + 1 }, `task ${record.taskId}`);
    return this.locked(record.taskId, async () => {
      const current = await this.get(record.taskId);
      if (!current || current.version !== expectedVersion) throw new TaskVersionConflictError(record.taskId, expectedVersion);
      await this.write(next);
      return next;
    });
  }

  async list(filter: { status?: TaskStatus } = {}): Promise<TaskRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const records: TaskRecord[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const record = await this.get(name.slice(0, -'.json'.length));
      if (record && (filter.status === undefined || record.status === filter.status)) records.push(record);
    }
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  private async write(record: TaskRecord): Promise<void> {
    const target = this.path(record.taskId);
    const temp = `${target}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify(record, null, 2)}\n`, 'utf8');
    await rename(temp, target);
  }

  /** Holds <taskId>.lock (O_EXCL) around `work`; a lock older than 30 s is a crashed holder's and is broken. */
  private async locked<T>(taskId: string, work: () => Promise<T>): Promise<T> {
    await mkdir(this.dir, { recursive: true });
    const lock = join(this.dir, `${taskId}.lock`);
    for (let attempt = 0; ; attempt++) {
      try {
        const handle = await open(lock, 'wx');
        await handle.close();
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const age = await stat(lock).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        if (age > 30_000) await rm(lock, { force: true });
        else if (attempt > 200) throw new Error(`task ${taskId} stays locked by another process (${lock})`);
        else await sleep(10);
      }
    }
    try {
      return await work();
    } finally {
      await rm(lock, { force: true });
    }
  }
}
