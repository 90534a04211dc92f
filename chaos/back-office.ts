import type { FaultSpec } from '../backoffices/simulator/schemas.js';
import { startSimulator, billNoFor } from '../backoffices/simulator/server.js';
import { SimulatorControl } from '../backoffices/simulator/control-client.js';
import { discrepancyIdFor, ledgerlyUserFor, startLedgerly } from '../backoffices/ledgerly/server.js';
import { LedgerlyControl } from '../backoffices/ledgerly/control-client.js';
import type { DiscrepancyState } from '../backoffices/ledgerly/schemas.js';
import { startSettlo } from '../backoffices/settlo/server.js';
import { SettloControl } from '../backoffices/settlo/control-client.js';
import { settloTotpSecretFor, settloUserFor } from '../backoffices/settlo/accounts.js';

/**
 * The back offices the soak can run against, behind the few calls it needs:
 * seed pending items for the soak's tenants, install faults, read the journal
 * as mutations attributed to site-pack actions, and read every item's status
 * in the site pack's words. The invariants (chaos/verify.ts) are the same for
 * both.
 */

export const SOAK_BACK_OFFICES = ['simulator', 'ledgerly', 'settlo'] as const;
export type SoakBackOfficeName = (typeof SOAK_BACK_OFFICES)[number];

export interface SoakTenant {
  id: string;
  pending: number;
}

/** One committed vendor mutation, as the soak judges it. */
export interface SoakMutation {
  billNo: string;
  /** The site-pack action this journal entry belongs to (the key is rebuilt from it). */
  action: string;
  /** The vendor's own name for the write (a site-pack action may be more than one: Ledgerly's resolve is edit, then resolve). */
  vendorAction: string;
  identity: string;
}

/** A started back office, seeded for the soak. */
export interface SoakVendor {
  url: string;
  seed(tenants: readonly SoakTenant[]): Promise<void>;
  setFaults(faults: readonly FaultSpec[]): Promise<void>;
  addFault(fault: FaultSpec): Promise<void>;
  mutations(): Promise<SoakMutation[]>;
  /** Every item's status, in the site pack's status names. */
  statuses(): Promise<Map<string, string>>;
  /** Items in a state the vendor leaves on its own (a review, an async settle). */
  settling(): Promise<string[]>;
  /** Kinds of the faults that fired, once per installed fault that fired at least once. */
  firedFaults(): Promise<string[]>;
  close(): Promise<void>;
}

export interface SoakBackOffice {
  name: SoakBackOfficeName;
  /** The Paperclip config the soak's config is derived from (vendor, policies, approvals). */
  defaultConfig: string;
  /** The site-pack action every soak item needs (its pending kind's action). */
  itemAction: string;
  maxTenants: number;
  itemKey(tenantIndex: number, tenant: string, n: number): string;
  /** The identity the vendor's journal names for a tenant's writes. */
  journalIdentity(tenant: string): string;
  /** The config's identities and tenants for the soak's tenants (the back office's account scheme). */
  configFor(tenants: readonly SoakTenant[]): { identities: unknown[]; tenants: unknown[] };
  start(options: { controlToken: string; seed: number; settleMs: number }): Promise<SoakVendor>;
}

/** The config's identity for one soak tenant: its id, and the inline credentials the back office's account scheme gives it. */
interface SoakAccount {
  identity: string;
  credentials: Record<string, string>;
}

/**
 * One identity per soak tenant, each tenant approved by its own finance address; the back offices differ in their
 * account scheme and in the actions their kinds map to. The policy is copied per tenant: an object shared between
 * tenants would be written into the YAML config as an anchor and its aliases.
 */
function soakConfig(
  tenants: readonly SoakTenant[],
  account: (tenant: string) => SoakAccount,
  policy: { actions_by_kind: Record<string, string>; action_params: Record<string, Record<string, string>> },
): { identities: unknown[]; tenants: unknown[] } {
  return {
    identities: tenants.map((t) => {
      const { identity, credentials } = account(t.id);
      return { id: identity, tenants: [t.id], credentials: { source: 'inline', ...credentials } };
    }),
    tenants: tenants.map((t) => ({
      id: t.id,
      identity: account(t.id).identity,
      approvers: [`finance@${t.id}.example`],
      ...structuredClone(policy),
    })),
  };
}

/** The control calls the soak makes, the same on every in-repo back office (backoffices/kit/control-client.ts). */
interface SoakControl<Reset, State> {
  reset(spec: Reset): Promise<unknown>;
  setFaults(faults: FaultSpec[]): Promise<unknown>;
  addFault(fault: FaultSpec): Promise<unknown>;
  journal(): Promise<Array<{ billNo: string; action: string; identity: string }>>;
  state(): Promise<State>;
}

/** What the soak reads from one back office's state, in the site pack's words. */
interface SoakStateView<State> {
  statuses(state: State): Array<[string, string]>;
  settling(state: State): string[];
}

type FaultsState = { faults: ReadonlyArray<{ kind: string; fired: number }> };

/**
 * A started back office behind the soak's calls. `reset` is the control API's reset for the soak's tenants (seeded
 * pending items, nothing else); `actions` maps a vendor action to the site-pack action it belongs to, and a vendor
 * action it does not name is the pack's own.
 */
function soakVendor<Reset, State extends FaultsState>(
  server: { url: string; close(): Promise<void> },
  control: SoakControl<Reset, State>,
  parts: {
    reset(tenants: readonly SoakTenant[]): NoInfer<Reset>;
    actions?: Readonly<Record<string, string>>;
    view: SoakStateView<NoInfer<State>>;
  },
): SoakVendor {
  const { view } = parts;
  return {
    url: server.url,
    seed: async (tenants) => void (await control.reset(parts.reset(tenants))),
    setFaults: async (faults) => void (await control.setFaults([...faults])),
    addFault: async (fault) => void (await control.addFault(fault)),
    mutations: async () =>
      (await control.journal()).map((e) => ({
        billNo: e.billNo,
        action: parts.actions?.[e.action] ?? e.action,
        vendorAction: e.action,
        identity: e.identity,
      })),
    statuses: async () => new Map(view.statuses(await control.state())),
    settling: async () => view.settling(await control.state()),
    firedFaults: async () => (await control.state()).faults.filter((f) => f.fired > 0).map((f) => f.kind),
    close: () => server.close(),
  };
}

/** The simulator and Settlo keep bills whose status is already the site pack's; PROCESSING is their async settle. */
const BILLS_VIEW: SoakStateView<{ bills: ReadonlyArray<{ billNo: string; status: string }> }> = {
  statuses: (state) => state.bills.map((b) => [b.billNo, b.status]),
  settling: (state) => state.bills.filter((b) => b.status === 'PROCESSING').map((b) => b.billNo),
};

const SIMULATOR_ACTIONS: Record<string, string> = {
  mark: 'mark_processed',
  unmark: 'unmark_processed',
  refund: 'refund',
  note: 'add_note',
};

export const SIMULATOR_SOAK: SoakBackOffice = {
  name: 'simulator',
  defaultConfig: 'config/paperclip.local.yaml',
  itemAction: 'mark_processed',
  maxTenants: 12,
  itemKey: (_index, tenant, n) => billNoFor(tenant, n),
  journalIdentity: (tenant) => `svc-recon-${tenant}`,
  configFor: (tenants) =>
    soakConfig(
      tenants,
      (id) => ({
        identity: `svc-recon-${id}`,
        credentials: { username: `svc-recon-${id}`, password: `pw-${id}-2026`, api_token: `tok-${id}` },
      }),
      { actions_by_kind: { mismatch: 'mark_processed', overcharge: 'refund' }, action_params: { refund: { reason: '重复扣款退款' } } },
    ),
  async start({ controlToken, seed, settleMs }) {
    const sim = await startSimulator({ port: 0, controlToken, seed, asyncDelayMs: settleMs });
    return soakVendor(sim, new SimulatorControl(sim.url, controlToken), {
      reset: (tenants) => ({
        seed,
        asyncDelayMs: settleMs,
        tenants: tenants.map((t) => ({ id: t.id, pending: t.pending, overcharge: 0, processed: 0 })),
      }),
      actions: SIMULATOR_ACTIONS,
      view: BILLS_VIEW,
    });
  },
};

/** Ledgerly's states in its site pack's status names (sitepacks/ledgerly.yaml, api.statusMap). */
const LEDGERLY_STATUS: Record<DiscrepancyState, string> = {
  open: 'OPEN',
  under_review: 'UNDER_REVIEW',
  resolved: 'RESOLVED',
  refund_pending: 'REFUND_PENDING',
  refunded: 'REFUNDED',
};
/** A resolve through the page is two vendor writes: the reason saved with the edit form, then resolve. */
const LEDGERLY_ACTIONS: Record<string, string> = { edit: 'resolve', resolve: 'resolve', reopen: 'reopen', refund: 'refund' };

export const LEDGERLY_SOAK: SoakBackOffice = {
  name: 'ledgerly',
  defaultConfig: 'config/ledgerly.local.yaml',
  itemAction: 'resolve',
  // Each org numbers its discrepancies in its own block of 1000, nine blocks.
  maxTenants: 9,
  itemKey: (index, _tenant, n) => discrepancyIdFor(index, n),
  journalIdentity: (tenant) => ledgerlyUserFor(tenant).username,
  configFor: (tenants) =>
    soakConfig(
      tenants,
      (id) => {
        const user = ledgerlyUserFor(id);
        return { identity: `svc-ledgerly-${id}`, credentials: { username: user.username, password: user.password } };
      },
      {
        actions_by_kind: { billing_error: 'resolve', duplicate_charge: 'refund' },
        action_params: { resolve: { reason: 'Credit note issued by Paperclip reconciliation' } },
      },
    ),
  async start({ controlToken, seed, settleMs }) {
    const server = await startLedgerly({ port: 0, controlToken, seed, asyncDelayMs: settleMs });
    return soakVendor(server, new LedgerlyControl(server.url, controlToken), {
      reset: (tenants) => ({
        seed,
        asyncDelayMs: settleMs,
        orgs: tenants.map((t) => ({ id: t.id, billingErrors: t.pending, duplicateCharges: 0, resolved: 0, refunded: 0 })),
      }),
      actions: LEDGERLY_ACTIONS,
      view: {
        statuses: (state) => state.discrepancies.map((d) => [d.id, LEDGERLY_STATUS[d.state]]),
        settling: (state) => state.discrepancies.filter((d) => d.state === 'under_review' || d.state === 'refund_pending').map((d) => d.id),
      },
    });
  },
};

/**
 * Settlo (docs/settlo.md): a password-then-TOTP login, writes held in an undo window (kept short here), the
 * rate limit at its default. The soak's pack reads the work area at top level, so that control is on.
 */
export const SETTLO_SOAK: SoakBackOffice = {
  name: 'settlo',
  defaultConfig: 'config/settlo.local.yaml',
  itemAction: 'settle',
  // Bill numbers carry the tenant's position as their first digit: JS-10001 for the first tenant, … JS-90001.
  maxTenants: 9,
  itemKey: (index, _tenant, n) => `JS-${index + 1}${String(n).padStart(4, '0')}`,
  journalIdentity: (tenant) => settloUserFor(tenant).username,
  configFor: (tenants) =>
    soakConfig(
      tenants,
      (id) => {
        const user = settloUserFor(id);
        return {
          identity: `svc-settlo-${id}`,
          credentials: { username: user.username, password: user.password, totp_secret: settloTotpSecretFor(id) },
        };
      },
      { actions_by_kind: { mismatch: 'settle', overcharge: 'refund' }, action_params: { settle: { note: '已由 Paperclip 对账核对' } } },
    ),
  async start({ controlToken, seed, settleMs }) {
    const controls = { undoWindowSeconds: 1 };
    const server = await startSettlo({ port: 0, controlToken, seed, asyncDelayMs: settleMs, ...controls });
    return soakVendor(server, new SettloControl(server.url, controlToken), {
      reset: (tenants) => ({
        seed,
        asyncDelayMs: settleMs,
        ...controls,
        tenants: tenants.map((t) => ({ id: t.id, pending: t.pending, overcharge: 0, processed: 0 })),
      }),
      // Settlo's journal names the pack's actions (settle, reopen, refund): no actions to map.
      view: BILLS_VIEW,
    });
  },
};

export function soakBackOffice(name: SoakBackOfficeName): SoakBackOffice {
  return name === 'ledgerly' ? LEDGERLY_SOAK : name === 'settlo' ? SETTLO_SOAK : SIMULATOR_SOAK;
}
