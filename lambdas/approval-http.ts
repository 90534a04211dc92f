import '../src/composition/lambda.js';
import { services } from '../src/app/services.js';
import { handleFunctionUrlEvent, type FunctionUrlResult } from '../src/approval-server/function-url.js';

/** The approval pages behind a Function URL: GET shows a request, POST records a decision. */
export const handler = (event: unknown): Promise<FunctionUrlResult> => handleFunctionUrlEvent(services(), event);
