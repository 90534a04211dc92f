import { z } from 'zod';

/** The batch map run's result files. The S3 adapter implements the port (src/adapters/s3/map-run-results.ts). */

/** What a Distributed Map with a ResultWriter outputs: where its manifest is. */
export const MapRunOutput = z.object({
  MapRunArn: z.string(),
  ResultWriterDetails: z.object({ Bucket: z.string().min(1), Key: z.string().min(1) }),
});
export type MapRunOutput = z.infer<typeof MapRunOutput>;

/** One item's result in a map run. */
export interface MapRunItemResult {
  outcome: string;
  key?: string;
  billNo?: string;
  executionArn?: string;
  reason?: string;
  /** The outcome an earlier run of the same task reached (this run found the item claimed and skipped it). */
  settledEarlier?: boolean;
  /** The item's 429s and the time they and the request pace cost (from its claim, set by the batch summary). */
  rateLimited?: number;
  rateLimitWaitMs?: number;
  paceWaitMs?: number;
}

export interface MapRunsPort {
  read(output: MapRunOutput): AsyncGenerator<MapRunItemResult>;
  /** The results a failed map run left under `results.prefix`, if it wrote any. */
  find(results: { bucket: string; prefix: string }): Promise<MapRunOutput | undefined>;
}
