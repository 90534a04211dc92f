import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { planRows } from '../../src/app/batch.js';
import { Tenant } from '../../src/config/schema.js';
import { parseSitePack } from '../../src/sitepack/load.js';

const pack = parseSitePack(readFileSync('sitepacks/vendor-sim.yaml', 'utf8'));
const row = (billNo: string, status: string, kind?: string) => ({ billNo, status, kind, fields: {} });

test('a row gets its action by status, then kind, then the default; a row without one says why', () => {
  const tenant = Tenant.parse({
    id: 'acme',
    identity: 'svc-recon-acme',
    actions_by_status: { PROCESSING: 'unmark_processed' },
    actions_by_kind: { overcharge: 'refund', mystery: 'vanish' },
  });
  const plans = planRows(tenant, pack, [
    row('A-1', 'PROCESSING', 'overcharge'),
    row('A-2', 'PENDING', 'overcharge'),
    row('A-3', 'PROCESSED', 'overcharge'),
    row('A-4', 'PENDING', 'mismatch'),
    row('A-5', 'PENDING', 'mystery'),
    row('A-6', 'PENDING', 'constructor'),
  ]);
  assert.deepEqual(
    plans.map((p) => [p.row.billNo, p.action ?? null, p.why]),
    [
      ['A-1', 'unmark_processed', 'status PROCESSING -> unmark_processed'],
      ['A-2', 'refund', 'kind overcharge -> refund'],
      ['A-3', 'refund', 'kind overcharge -> refund, but refund applies to PENDING, not PROCESSED'],
      ['A-4', null, 'no action for status PENDING or kind mismatch in actions_by_status / actions_by_kind, and no default_action'],
      ['A-5', null, 'kind mystery maps to "vanish", which the site pack does not define'],
      ['A-6', null, 'no action for status PENDING or kind constructor in actions_by_status / actions_by_kind, and no default_action'],
    ],
  );
  const withDefault = planRows(Tenant.parse({ id: 'acme', identity: 'svc-recon-acme', default_action: 'mark_processed' }), pack, [
    row('A-4', 'PENDING', 'mismatch'),
  ]);
  assert.equal(withDefault[0]?.why, 'default_action -> mark_processed');
});
