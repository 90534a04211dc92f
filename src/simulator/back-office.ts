import { BackOfficeState, type PageConfig, type BaseConfig as KitConfig } from '../back-office-kit/office-state.js';
import { accountsFor, identityOf, type Identity, type SimAccount } from './accounts.js';
import { Ledger } from './ledger.js';
import type { FaultSpec, SimState, TenantSpec } from './schemas.js';
import { generateBills } from './seed-data.js';

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
  private accounts!: SimAccount[];

  protected rebuild(config: BaseConfig): number {
    this.accounts = accountsFor(this.tenantIds());
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
