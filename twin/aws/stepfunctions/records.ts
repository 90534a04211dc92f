import { z } from 'zod';

export const EXECUTION_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** One history event as GetExecutionHistory returns it, with the timestamp kept in epoch ms. */
export const historyEventSchema = z
  .object({
    id: z.number().int().positive(),
    previousEventId: z.number().int().nonnegative(),
    timestamp: z.number(),
    type: z.string().min(1),
  })
  .catchall(z.unknown());
export type HistoryEvent = z.infer<typeof historyEventSchema>;

export const stateMachineRecordSchema = z.object({
  name: z.string().min(1),
  stateMachineArn: z.string().min(1),
  definition: z.string().min(1),
  roleArn: z.string().min(1),
  type: z.literal('STANDARD'),
  creationDate: z.number(),
});
export type StateMachineRecord = z.infer<typeof stateMachineRecordSchema>;

export const executionRecordSchema = z.object({
  executionArn: z.string().min(1),
  stateMachineArn: z.string().min(1),
  stateMachineName: z.string().min(1),
  name: z.string().min(1),
  status: z.enum(EXECUTION_STATUSES),
  startDate: z.number(),
  stopDate: z.number().optional(),
  input: z.string(),
  output: z.string().optional(),
  error: z.string().optional(),
  cause: z.string().optional(),
  parentExecutionArn: z.string().optional(),
  /** Tokens issued to this execution's callback tasks, so late answers get TaskTimedOut after a restart. */
  taskTokens: z.array(z.string()).default([]),
  history: z.array(historyEventSchema),
});
export type ExecutionRecord = z.infer<typeof executionRecordSchema>;
