#!/usr/bin/env node
// `npx paperclip ...`: runs the TypeScript CLI through tsx's loader, so there is no build step.
// Paths (config, site packs, state machines) are relative to the working directory: run it from the checkout.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
