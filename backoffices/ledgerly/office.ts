import { BackOfficeState, type PageConfig, type BaseConfig } from '../kit/office-state.js';
import { ledgerlyUsersFor, orgsOf, type LedgerlyUser } from './accounts.js';
import { DiscrepancyBook } from './book.js';
import type { LedgerlyFaultSpec, LedgerlyState, OrgSpec } from './schemas.js';
import { generateDiscrepancies, orgName } from './seed-data.js';

export interface LedgerlyBaseConfig extends BaseConfig {
  orgs: OrgSpec[];
}

/**
 * All mutable state of Ledgerly: discrepancies and journal, sessions (with the
 * org each session is working in), faults and request timings. A reset returns
 * to the startup configuration for every field its spec leaves out.
 */
export class LedgerlyOffice extends BackOfficeState<LedgerlyBaseConfig, LedgerlyFaultSpec> {
  book!: DiscrepancyBook;
  /** sid -> the org slug the session is working in. */
  readonly sessionOrg = new Map<string, string>();
  private users!: LedgerlyUser[];

  constructor(base: LedgerlyBaseConfig & PageConfig) {
    super(base);
    this.rebuild(base);
  }

  protected rebuild(config: LedgerlyBaseConfig): number {
    this.book?.dispose();
    this.book = new DiscrepancyBook(generateDiscrepancies(config.seed, config.orgs));
    this.sessionOrg.clear();
    this.users = ledgerlyUsersFor(this.orgIds());
    return this.book.size;
  }

  orgIds(): string[] {
    return this.current.orgs.map((o) => o.id);
  }

  orgSummary(slug: string): { slug: string; name: string } {
    const spec = this.current.orgs.find((o) => o.id === slug);
    return { slug, name: spec ? orgName(spec) : slug };
  }

  userByUsername(username: string): LedgerlyUser | undefined {
    return this.users.find((u) => u.username === username);
  }

  orgsOf(user: LedgerlyUser): string[] {
    return orgsOf(user, this.orgIds());
  }

  state(): LedgerlyState {
    return { discrepancies: this.book.snapshot(), sessions: this.sessions.liveCount(), faults: this.faults.list() };
  }

  dispose(): void {
    this.book.dispose();
  }
}
