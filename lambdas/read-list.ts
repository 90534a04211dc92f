import '../src/composition/lambda.js';
import { z } from 'zod';
import { defineHandler } from '../src/app/handler-kit.js';
import { ExecutionArn } from '../src/app/guarded-write/state.js';
import { readBatchList } from '../src/app/batch.js';

/** ReadList: the tenant's discrepancy list through a read-only session. */
export const handler = defineHandler('read-list', z.object({ batch: z.unknown(), executionArn: ExecutionArn }), (s, event) =>
  readBatchList(s, event),
);
