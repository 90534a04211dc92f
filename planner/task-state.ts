import { z } from 'zod';
import { Step } from '../src/sitepack/action-language.js';
import { Reversibility } from '../src/sitepack/schema.js';
import { CompressedHistory } from './history.js';
import { NamedError } from '../src/domain/errors.js';

/**
 * A planner task as persisted (seed 003, 2.1): a finite state machine whose
 * every transition is written before the next step, so a restarted process
 * continues from the last completed step instead of starting over.
 *
 * pending -> running -> succeeded | failed
 *                    -> waiting_confirm (a person decides) -> running | failed
 */

export const TASK_STATUSES = ['pending', 'running', 'waiting_confirm', 'succeeded', 'failed'] as const;
export const TaskStatus = z.enum(TASK_STATUSES);
export type TaskStatus = z.infer<typeof TaskStatus>;

export const TaskId = z.string().regex(/^[A-Za-z0-9_-]{1,80}$/, 'task ids are 1-80 letters, digits, _ or -');

const Iso = z.string().datetime({ offset: true });

export const StoredPlan = z
  .object({
    round: z.number().int().min(1),
    kind: z.enum(['read_only', 'reversible', 'handoff', 'done']),
    steps: z.array(Step).max(10),
    sitePackAction: z.string().optional(),
    params: z.record(z.string(), z.string()).optional(),
    pageHash: z.string().optional(),
    draftedAt: Iso,
  })
  .strict();
export type StoredPlan = z.infer<typeof StoredPlan>;

export const TaskOutput = z
  .object({
    seq: z.number().int().min(0),
    as: z.string(),
    kind: z.enum(['download', 'screenshot', 'extract', 'record']),
    key: z.string(),
    contentType: z.string(),
    bytes: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();
export type TaskOutput = z.infer<typeof TaskOutput>;

export const Handoff = z
  .object({
    sitePackAction: z.string(),
    reversibility: Reversibility,
    params: z.record(z.string(), z.string()).optional(),
    steps: z.array(Step),
  })
  .strict();
export type Handoff = z.infer<typeof Handoff>;

export const TaskResult = z
  .object({
    outcome: z.enum(['completed', 'handoff', 'waiting_confirm', 'failed']),
    reason: z.string().max(2000).optional(),
    handoff: Handoff.optional(),
  })
  .strict();
export type TaskResult = z.infer<typeof TaskResult>;

export const DraftAttempt = z
  .object({
    round: z.number().int(),
    attempt: z.number().int(),
    ok: z.boolean(),
    reason: z.string().max(1000).optional(),
  })
  .strict();

export const TaskRecord = z
  .object({
    taskId: TaskId,
    /** Optimistic concurrency: every write names the version it read. */
    version: z.number().int().min(1),
    instruction: z.string().min(1).max(2000),
    site: z.string().min(1),
    tenant: z.string().optional(),
    /** Opened first when the page is blank (a fresh or restarted process). */
    startUrl: z.string().startsWith('/').optional(),
    /** A job's fixed plan: run as given, no model involved, done when it ends. */
    fixedPlan: z.boolean().default(false),
    status: TaskStatus,
    createdAt: Iso,
    updatedAt: Iso,
    plan: StoredPlan.optional(),
    /** Index of the next step of `plan` to run. */
    cursor: z.number().int().min(0),
    rounds: z.number().int().min(0),
    stepsExecuted: z.number().int().min(0),
    retryCount: z.number().int().min(0),
    consecutiveFailures: z.number().int().min(0),
    lastFailure: z
      .object({ seq: z.number().int(), step: Step, reason: z.string().max(400) })
      .strict()
      .optional(),
    /** The page the task was on after its last completed step. */
    lastUrl: z.string().max(2000).optional(),
    history: CompressedHistory,
    /** Fingerprints of the last executed plans (loop detection across rounds). */
    executedPlans: z.array(z.string().max(8000)).max(5),
    /** One per output-producing step at most; bounded by max_task_steps (≤ 1000) so a DynamoDB item stays under 400 KB. */
    outputs: z.array(TaskOutput).max(1010),
    /** The model attempts of the latest drafting, with rejection reasons. */
    draftAttempts: z.array(DraftAttempt).max(20),
    result: TaskResult.optional(),
  })
  .strict();
export type TaskRecord = z.infer<typeof TaskRecord>;
export type TaskRecordInput = z.input<typeof TaskRecord>;

export class TaskVersionConflictError extends NamedError {
  override name = 'TaskVersionConflictError';
  constructor(
    readonly taskId: string,
    readonly expectedVersion: number,
  ) {
    super(`task ${taskId} changed since version ${expectedVersion}: another runner owns it; stop and touch nothing`);
  }
}

export class TaskExistsError extends NamedError {
  override name = 'TaskExistsError';
  constructor(readonly taskId: string) {
    super(`task ${taskId} already exists`);
  }
}

export interface TaskStore {
  create(record: TaskRecord): Promise<void>;
  get(taskId: string): Promise<TaskRecord | undefined>;
  /**
   * Writes `record` as version expectedVersion + 1, only if the stored version
   * is still expectedVersion; otherwise throws TaskVersionConflictError.
   */
  update(record: TaskRecord, expectedVersion: number): Promise<TaskRecord>;
  list(filter?: { status?: TaskStatus }): Promise<TaskRecord[]>;
}
