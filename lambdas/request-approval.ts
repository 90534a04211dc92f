import { z } from 'zod';
import { defineHandler, ExecutionArn, ItemStateEvent } from '../src/app/handler-kit.js';
import { requestApproval } from '../src/app/approvals/request-approval.js';
import type { ItemState } from '../src/app/guarded-write/state.js';

/** RequestApproval: stores the task token server-side and mails signed links to the approvers. */
export const handler = defineHandler(
  'request-approval',
  z.object({ state: ItemStateEvent, taskToken: z.string().min(1), executionArn: ExecutionArn }),
  (s, event) => requestApproval(s, { ...event, state: event.state as unknown as ItemState }),
);
