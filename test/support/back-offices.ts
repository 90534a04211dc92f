import type { ActiveFault, FaultKind, ResetResult } from '../../backoffices/simulator/schemas.js';
import { accountFor } from '../../backoffices/simulator/accounts.js';
import { SimulatorControl } from '../../backoffices/simulator/control-client.js';
import { billNoFor, startSimulator } from '../../backoffices/simulator/server.js';
import { LedgerlyControl } from '../../backoffices/ledgerly/control-client.js';
import { discrepancyIdFor, ledgerlyUserFor, startLedgerly } from '../../backoffices/ledgerly/server.js';

/**
 * The two in-repo back offices side by side, for suites parametrised over
 * both: how to start each, its control client (the calls they share), its
 * seeded items and the journal actions its writes leave. Defaults only: each
 * back office's own docs say how its data is numbered.
 */

/** A fault as both back offices take it: `bill` is the item key, `tenant` the tenant/org, `identity` the username/email. */
export interface SharedFaultSpec {
  kind: FaultKind;
  bill?: string;
  tenant?: string;
  identity?: string;
  ms?: number;
  times?: number;
}

/** The journal fields both back offices record. */
export interface SharedJournalEntry {
  seq: number;
  at: string;
  tenant: string;
  billNo: string;
  action: string;
  identity: string;
  sessionId: string;
  detail?: Record<string, unknown>;
}

/** The control calls both clients have (SimulatorControl and LedgerlyControl). */
export interface SharedControl {
  reset(): Promise<ResetResult>;
  setFaults(faults: SharedFaultSpec[]): Promise<ActiveFault[]>;
  addFault(fault: SharedFaultSpec): Promise<ActiveFault[]>;
  journal(): Promise<SharedJournalEntry[]>;
}

export interface RunningBackOffice {
  url: string;
  control: SharedControl;
  close(): Promise<void>;
}

export interface BackOfficeUnderTest {
  name: 'simulator' | 'ledgerly';
  start(options: { controlToken: string; asyncDelayMs?: number }): Promise<RunningBackOffice>;
  /** The two tenants the default seed holds items for. */
  tenants: readonly [string, string];
  credentials(tenant: string): { username: string; password: string };
  /** Pending items of the default seed, by the kind of write they need. */
  pending(tenant: string): { reversible: string[]; irreversible: string[] };
  /** Journal actions one guarded write leaves, in order. */
  journalActions: { reversible: readonly string[]; inverse: readonly string[]; irreversible: readonly string[] };
}

/** Starts a back office with the control API on (and its settle delay, when given), beside its control client. */
async function startWithControl(
  startServer: (options: { controlToken: string; asyncDelayMs?: number }) => Promise<{ url: string; close(): Promise<void> }>,
  Control: new (url: string, token: string) => SharedControl,
  { controlToken, asyncDelayMs }: { controlToken: string; asyncDelayMs?: number },
): Promise<RunningBackOffice> {
  const server = await startServer({ controlToken, ...(asyncDelayMs === undefined ? {} : { asyncDelayMs }) });
  return { url: server.url, control: new Control(server.url, controlToken), close: () => server.close() };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

export const SIMULATOR: BackOfficeUnderTest = {
  name: 'simulator',
  start: (options) => startWithControl(startSimulator, SimulatorControl, options),
  tenants: ['acme', 'globex'],
  credentials: (tenant) => accountFor(tenant),
  pending: (tenant) => ({ reversible: range(1, 12).map((n) => billNoFor(tenant, n)), irreversible: [billNoFor(tenant, 13)] }),
  journalActions: { reversible: ['mark'], inverse: ['unmark'], irreversible: ['refund'] },
};

const LEDGERLY_ORG_INDEX: Record<string, number> = { acme: 0, globex: 1 };

export const LEDGERLY: BackOfficeUnderTest = {
  name: 'ledgerly',
  start: (options) => startWithControl(startLedgerly, LedgerlyControl, options),
  tenants: ['acme', 'globex'],
  credentials: (tenant) => ledgerlyUserFor(tenant),
  pending: (tenant) => {
    const index = LEDGERLY_ORG_INDEX[tenant];
    if (index === undefined) throw new Error(`Ledgerly's default seed has no org "${tenant}" (acme, globex)`);
    return {
      reversible: range(1, 6).map((n) => discrepancyIdFor(index, n)),
      irreversible: range(7, 8).map((n) => discrepancyIdFor(index, n)),
    };
  },
  // Resolve is two vendor writes: the reason saved with the edit form, then resolve.
  journalActions: { reversible: ['edit', 'resolve'], inverse: ['reopen'], irreversible: ['refund'] },
};

export const BACK_OFFICES: readonly BackOfficeUnderTest[] = [SIMULATOR, LEDGERLY];
