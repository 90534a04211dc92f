import '../src/composition/lambda.js';
import { z } from 'zod';
import { defineHandler } from '../src/app/handler-kit.js';
import { writeDailyDigestsOrThrow } from '../src/app/digests.js';

/**
 * WriteDigests: invoked by its EventBridge rule every hour (a Scheduled Event; nothing in it is used but its
 * shape), writes each tenant's signed daily digest for every day that is over and has none yet.
 */
export const handler = defineHandler(
  'write-digests',
  z.object({ 'detail-type': z.string().optional(), time: z.string().optional() }).passthrough(),
  async (s) => {
    const run = await writeDailyDigestsOrThrow(s);
    return { written: run.written.length, tenants: run.tenants };
  },
);
