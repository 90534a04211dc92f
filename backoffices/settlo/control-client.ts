import { BackOfficeControl } from '../kit/control-client.js';
import { SettloFaultSpecSchema, SettloJournalEntrySchema, SettloResetSpecSchema, SettloStateSchema } from './schemas.js';

/**
 * Settlo's control client: the calls every in-repo back office has (reset, setFaults, addFault, journal,
 * state, timings), with Settlo's reset spec (its controls included), journal and state. Tests and chaos only.
 */
export class SettloControl extends BackOfficeControl<
  typeof SettloResetSpecSchema,
  typeof SettloFaultSpecSchema,
  typeof SettloJournalEntrySchema,
  typeof SettloStateSchema
> {
  constructor(baseUrl: string, token: string) {
    super(baseUrl, token, {
      reset: SettloResetSpecSchema,
      fault: SettloFaultSpecSchema,
      journalEntry: SettloJournalEntrySchema,
      state: SettloStateSchema,
    });
  }
}
