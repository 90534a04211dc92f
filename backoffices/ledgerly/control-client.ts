import { BackOfficeControl } from '../kit/control-client.js';
import { LedgerlyFaultSpecSchema, LedgerlyJournalEntrySchema, LedgerlyResetSpecSchema, LedgerlyStateSchema } from './schemas.js';

export { SimulatorControlError } from '../kit/control-client.js';

/**
 * Ledgerly's control client: the same calls as SimulatorControl (reset,
 * setFaults, addFault, journal, state, timings) with Ledgerly's reset spec,
 * fault scopes, journal and state. For tests, benchmarks and chaos only.
 */
export class LedgerlyControl extends BackOfficeControl<
  typeof LedgerlyResetSpecSchema,
  typeof LedgerlyFaultSpecSchema,
  typeof LedgerlyJournalEntrySchema,
  typeof LedgerlyStateSchema
> {
  constructor(baseUrl: string, token: string) {
    super(baseUrl, token, {
      reset: LedgerlyResetSpecSchema,
      fault: LedgerlyFaultSpecSchema,
      journalEntry: LedgerlyJournalEntrySchema,
      state: LedgerlyStateSchema,
    });
  }
}
