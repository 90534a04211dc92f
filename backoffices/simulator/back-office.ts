import { BackOfficeState, type PageConfig, type BaseConfig as KitConfig } from '../kit/office-state.js';
import { accountsFor, identityOf, type Identity, type SimAccount } from './accounts.js';
import { Ledger } from './ledger.js';
import type { FaultSpec, SimState, TenantSpec } from './schemas.js';
import { generateBills } from './seed-data.js';
import { PendingSecondFactors } from './second-factor.js';

/** The settings a reset returns to when its spec omits them. */
export interface BaseConfig extends KitConfig {
  tenants: TenantSpec[];
}

/**
 * All mutable state of one simulated vendor: bills and journal (ledger),
 * sessions, installed faults, request timings. Routes read and change it;
 * the control API resets it.
 */
export class BackOffice extends BackOfficeState<BaseConfig, FaultSpec> {
  ledger!: Ledger;
  /** Logins that passed the password and wait for their TOTP code. */
  readonly pendingLogins = new PendingSecondFactors();
  private accounts!: SimAccount[];

  protected rebuild(config: BaseConfig): number {
    this.accounts = accountsFor(this.tenantIds());
    this.pendingLogins?.clear();
    this.ledger?.dispose();
    this.ledger = new Ledger(generateBills(config.seed, config.tenants));
    return this.ledger.size;
  }

  constructor(base: BaseConfig & PageConfig) {
    super(base);
    this.rebuild(base);
  }

  tenantIds(): string[] {
    return this.current.tenants.map((t) => t.id);
  }

  accountByUsername(username: string): SimAccount | undefined {
    return this.accounts.find((a) => a.username === username);
  }

  accountByToken(token: string): SimAccount | undefined {
    return this.accounts.find((a) => a.token === token);
  }

  /** The TOTP period of an account whose tenant asks a second factor; undefined when it asks none. */
  secondFactorPeriod(account: SimAccount): number | undefined {
    const spec = this.current.tenants.find((t) => t.id === account.tenant)?.secondFactor;
    return spec ? (spec.periodSeconds ?? 30) : undefined;
  }

  identityFor(account: SimAccount): Identity {
    return identityOf(account, this.tenantIds());
  }

  state(): SimState {
    return { bills: this.ledger.snapshot(), sessions: this.sessions.liveCount(), faults: this.faults.list() };
  }

  dispose(): void {
    this.ledger.dispose();
  }
}
