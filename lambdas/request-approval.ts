import '../src/composition/lambda.js';
import { defineTenantHandler, recordScope } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { requestApproval } from '../src/app/approvals/request-approval.js';

/** RequestApproval: stores the task token server-side (under the item's tenant session) and mails signed links to the approvers. */
export const handler = defineTenantHandler(
  'request-approval',
  StepInput.RequestApproval,
  (event) => recordScope(event.state.item),
  requestApproval,
);
