import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACK_OFFICES } from '../../support/back-offices.js';

// No browser: the control surface both back offices share, driven through one interface.
for (const office of BACK_OFFICES) {
  test(`${office.name}: the shared control calls and fault scopes work the same way`, async () => {
    const running = await office.start({ controlToken: 'parity-token', asyncDelayMs: 0 });
    try {
      const [acme, globex] = office.tenants;
      const { reversible, irreversible } = office.pending(acme);
      assert.ok(reversible.length > 0 && irreversible.length > 0);
      assert.notDeepEqual(office.pending(globex).reversible, reversible);
      const faults = await running.control.setFaults([
        { kind: 'half_success', bill: reversible[0] },
        { kind: 'session_revoked', identity: office.credentials(acme).username, times: 1 },
      ]);
      assert.deepEqual(
        faults.map((f) => [f.kind, f.fired, f.remaining]),
        [
          ['half_success', 0, undefined],
          ['session_revoked', 0, 1],
        ],
      );
      await running.control.addFault({ kind: 'slow_ms', tenant: globex, ms: 1 });
      assert.deepEqual(await running.control.journal(), []);
      assert.equal((await running.control.reset()).ok, true);
      await assert.rejects(running.control.addFault({ kind: 'slow_ms' }), /ms is required for a slow_ms fault/);
    } finally {
      await running.close();
    }
  });
}
