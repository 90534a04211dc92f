import '../src/composition/lambda.js';
import { defineHandler } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { requestApproval } from '../src/app/approvals/request-approval.js';

/** RequestApproval: stores the task token server-side and mails signed links to the approvers. */
export const handler = defineHandler('request-approval', StepInput.RequestApproval, requestApproval);
