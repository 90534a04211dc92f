import { z } from 'zod';

/** What the soak tells a runner process (written to a JSON file, validated on read). */
export const RunnerSpec = z
  .object({
    dataDir: z.string().min(1),
    configPath: z.string().min(1),
    vendorUrl: z.url(),
    tasks: z.array(z.object({ taskId: z.string(), tenant: z.string() })).min(1),
    runners: z.number().int().min(1).max(8),
    recoverFirst: z.boolean(),
    label: z.string().min(1),
    /** A batch whose list read failed is run again, at most this many times (reads are safe to repeat). */
    readAttempts: z.number().int().min(1).max(10).default(3),
    /** Lambda service faults the local Step Functions runner injects (validated there: twin/aws/stepfunctions/faults.ts). */
    lambdaFaults: z.array(z.record(z.string(), z.unknown())).default([]),
    /** Seed of the faults' probability draws. */
    lambdaFaultSeed: z.number().int().min(0).default(1),
  })
  .strict();
export type RunnerSpec = z.infer<typeof RunnerSpec>;
