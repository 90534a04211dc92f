import '../src/composition/lambda.js';
import { z } from 'zod';
import { defineTenantHandler, recordScope } from '../src/app/handler-kit.js';
import { ExecutionArn } from '../src/app/guarded-write/state.js';
import { MapRunOutput, summarizeBatch } from '../src/app/batch.js';

const StepError = z.object({ Error: z.string(), Cause: z.string().optional() });

/** SummarizeBatch: counts outcomes from the map run's results in S3, stores the batch summary and seals. */
export const handler = defineTenantHandler(
  'summarize-batch',
  z.object({
    // The request; summarizeBatch normalises it as ReadList does.
    batch: z.object({ taskId: z.string(), tenant: z.string() }).passthrough(),
    read: z.number().int().min(0).optional(),
    // Where the map run wrote every item's result, or why the map run failed.
    results: z.union([MapRunOutput, StepError]).optional(),
    // Where the ResultWriter writes (ReadList's results folder): a failed map run's results are read from there.
    resultsAt: z.object({ bucket: z.string().min(1), prefix: z.string().min(1) }).optional(),
    readError: StepError.optional(),
    // Why the summary itself failed (the Catch on Summarize), to be recorded and alerted.
    summarizeError: StepError.optional(),
    executionArn: ExecutionArn,
  }),
  // The batch's tenant: its results, evidence folder, claims and seal chain, nothing of any other tenant.
  (event) => recordScope(event.batch),
  (s, event) => summarizeBatch(s, event),
);
