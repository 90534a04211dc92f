import { defineHandler, ExecutionArn, ItemStateEvent } from '../src/app/handler-kit.js';
import { takeClaim } from '../src/app/guarded-write/claim.js';
import type { RoutedItem } from '../src/domain/routing.js';

/** Claim: the conditional put in the idempotency registry. */
export const handler = defineHandler('claim', ItemStateEvent.extend({ executionArn: ExecutionArn }), (s, event) =>
  takeClaim(s, { item: event.item as unknown as RoutedItem, executionArn: event.executionArn }),
);
