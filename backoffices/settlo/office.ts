import { BackOfficeState, type BaseConfig, type PageConfig } from '../kit/office-state.js';
import { PendingSecondFactors } from '../kit/second-factor.js';
import { settloUsersFor, type SettloUser } from './accounts.js';
import { BillBook } from './book.js';
import { RateLimiter } from './rate-limit.js';
import type { RateLimit, SettloFaultSpec, SettloState, TenantSpec } from './schemas.js';
import { generateBills, tenantName } from './seed-data.js';
import { UndoWindow } from './undo-window.js';

export interface SettloBaseConfig extends BaseConfig {
  tenants: TenantSpec[];
  undoWindowSeconds: number;
  rateLimit: RateLimit;
  allowTopLevelWork: boolean;
}

/**
 * All mutable state of Settlo: bills and journal, sessions and logins waiting for their code, writes held in
 * the undo window, the request limiter, faults and request timings. A reset returns every field its spec
 * leaves out (controls included) to the start-up value.
 */
export class SettloOffice extends BackOfficeState<SettloBaseConfig, SettloFaultSpec> {
  book!: BillBook;
  readonly pendingLogins = new PendingSecondFactors();
  readonly undo = new UndoWindow();
  readonly limiter: RateLimiter;
  private users!: SettloUser[];

  constructor(base: SettloBaseConfig & PageConfig) {
    super(base);
    this.limiter = new RateLimiter(base.rateLimit);
    this.rebuild(base);
  }

  protected rebuild(config: SettloBaseConfig): number {
    this.book?.dispose();
    this.book = new BillBook(generateBills(config.seed, config.tenants));
    this.users = settloUsersFor(config.tenants.map((t) => t.id));
    this.pendingLogins.clear();
    this.undo.clear();
    this.limiter?.configure(config.rateLimit);
    return this.book.size;
  }

  get controls(): Pick<SettloBaseConfig, 'undoWindowSeconds' | 'rateLimit' | 'allowTopLevelWork'> {
    return {
      undoWindowSeconds: this.current.undoWindowSeconds,
      rateLimit: this.current.rateLimit,
      allowTopLevelWork: this.current.allowTopLevelWork,
    };
  }

  userByUsername(username: string): SettloUser | undefined {
    return this.users.find((u) => u.username === username);
  }

  tenantName(tenant: string): string {
    const index = this.current.tenants.findIndex((t) => t.id === tenant);
    const spec = this.current.tenants[index];
    return spec ? tenantName(spec, index) : tenant;
  }

  state(): SettloState {
    return {
      bills: this.book.snapshot(),
      sessions: this.sessions.liveCount(),
      faults: this.faults.list(),
      pendingWrites: this.undo.open(),
      controls: this.controls,
    };
  }

  dispose(): void {
    this.book.dispose();
  }
}
