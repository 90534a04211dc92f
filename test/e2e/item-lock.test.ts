import { describe, test } from 'node:test';
import { useHarness } from '../support/embedded.js';
import { twoTasksOnOneItem } from '../support/item-lock.js';

/** One open write per item across tasks, on the simulator (the same scenario runs on Ledgerly: ledgerly-item-lock.test.ts). */
describe('one open write per item, on the simulator', () => {
  const h = useHarness();

  test('a second task on an item in takeover writes nothing and ends blocked; after the takeover is resolved a third task writes it', async () => {
    await h.control.reset({ seed: 7, tenants: [{ id: 'acme', pending: 1, overcharge: 0, processed: 0 }] });
    await twoTasksOnOneItem(h, { tenant: 'acme', billNo: 'ACME-202611-0001' });
  });
});
