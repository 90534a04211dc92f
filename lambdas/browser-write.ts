import { defineHandler } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { browserWrite } from '../src/app/guarded-write/write.js';

/** BrowserWrite: the one step that changes vendor state. */
export const handler = defineHandler('browser-write', StepInput.BrowserWrite, browserWrite);
