import { BACK_OFFICE_DEFAULTS, startOptions } from '../kit/office-state.js';
import { serveBackOffice, type RunningBackOffice } from '../kit/serve.js';
import { DEFAULT_TENANTS } from './accounts.js';
import { BackOffice } from './back-office.js';
import { simulatorRoutes } from './router.js';
import { SimulatorOptionsSchema, type SimulatorOptions } from './schemas.js';

export { accountFor, accountsFor, DEFAULT_ACCOUNTS, DEFAULT_TENANTS, OPS_ACCOUNT, totpSecretFor, type SimAccount } from './accounts.js';
export { formatYuan, KIND_LABELS, STATUS_LABELS } from './format.js';
export { billNoFor } from './seed-data.js';
export {
  BILL_NO_PATTERN,
  TENANT_ID_PATTERN,
  type ActiveFault,
  type Bill,
  type BillKind,
  type BillStatus,
  type FaultKind,
  type FaultSpec,
  type JournalEntry,
  type Note,
  type ProcessingRecord,
  type RequestTiming,
  type ResetResult,
  type ResetSpec,
  type SimState,
  type SimulatorOptions,
  type TenantSpec,
} from './schemas.js';

export type RunningSimulator = RunningBackOffice;

export const SIMULATOR_DEFAULTS = { ...BACK_OFFICE_DEFAULTS, pageSize: 10 } as const;

/**
 * Starts the vendor back-office simulator: server-rendered pages, a JSON API,
 * and (with a control token) the /__sim control API for tests and chaos.
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const config = startOptions('simulator', SimulatorOptionsSchema, options, SIMULATOR_DEFAULTS);
  const office = new BackOffice({ ...config, tenants: config.tenants ?? DEFAULT_TENANTS.map((id) => ({ id })) });
  return serveBackOffice(simulatorRoutes(office, config.controlToken, options.layout), config, () => office.dispose());
}
