import { defineHandler, ItemStateEvent } from '../src/app/handler-kit.js';
import { browserWrite } from '../src/app/guarded-write/write.js';
import type { ItemState } from '../src/app/guarded-write/state.js';

/** BrowserWrite: the one step that changes vendor state. */
export const handler = defineHandler('browser-write', ItemStateEvent, (s, event) => browserWrite(s, event as unknown as ItemState));
