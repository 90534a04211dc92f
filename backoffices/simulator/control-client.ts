import { BackOfficeControl } from '../kit/control-client.js';
import { FaultSpecSchema, JournalEntrySchema, ResetSpecSchema, SimStateSchema } from './schemas.js';

export { SimulatorControlError } from '../kit/control-client.js';

/** The bundled simulator's control client. */
export class SimulatorControl extends BackOfficeControl<
  typeof ResetSpecSchema,
  typeof FaultSpecSchema,
  typeof JournalEntrySchema,
  typeof SimStateSchema
> {
  constructor(baseUrl: string, token: string) {
    super(baseUrl, token, { reset: ResetSpecSchema, fault: FaultSpecSchema, journalEntry: JournalEntrySchema, state: SimStateSchema });
  }
}
