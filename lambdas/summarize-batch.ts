import { z } from 'zod';
import { defineHandler } from '../src/app/handler-kit.js';
import { ExecutionArn } from '../src/app/guarded-write/state.js';
import { summarizeBatch, type BatchList } from '../src/app/batch.js';

/** SummarizeBatch: counts outcomes and stores the batch summary. */
export const handler = defineHandler(
  'summarize-batch',
  z.object({
    batch: z.object({ taskId: z.string(), tenant: z.string(), list: z.unknown().optional() }).passthrough(),
    results: z.array(z.object({ outcome: z.string().optional() }).passthrough()),
    readError: z.object({ Error: z.string(), Cause: z.string().optional() }).optional(),
    executionArn: ExecutionArn,
  }),
  (s, event) => summarizeBatch(s, { ...event, batch: { ...event.batch, list: event.batch.list as BatchList | undefined } }),
);
