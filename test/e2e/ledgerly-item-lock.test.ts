import { describe, test } from 'node:test';
import { startLedgerlyHarness, useHarness } from '../support/embedded.js';
import { twoTasksOnOneItem } from '../support/item-lock.js';

/** One open write per item across tasks, on Ledgerly (the same scenario runs on the simulator: item-lock.test.ts). */
describe('one open write per item, on Ledgerly', () => {
  const h = useHarness(startLedgerlyHarness);

  test('a second task on an item in takeover writes nothing and ends blocked; after the takeover is resolved a third task writes it', async () => {
    await h.control.reset({ seed: 3, orgs: [{ id: 'acme', billingErrors: 1, duplicateCharges: 0, resolved: 0, refunded: 0 }] });
    await twoTasksOnOneItem(h, { tenant: 'acme', billNo: 'N-7001' });
  });
});
