import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_TENANTS } from './accounts.js';
import { BackOffice } from './back-office.js';
import { createRequestListener } from './router.js';
import { describeIssues, SimulatorOptionsSchema, type SimulatorOptions } from './schemas.js';

export { accountFor, accountsFor, DEFAULT_ACCOUNTS, DEFAULT_TENANTS, OPS_ACCOUNT, type SimAccount } from './accounts.js';
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

export interface RunningSimulator {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

export const SIMULATOR_DEFAULTS = {
  port: 0,
  host: '127.0.0.1',
  seed: 1,
  sessionTtlSeconds: 1800,
  asyncDelayMs: 300,
  pageSize: 10,
  clientTimeoutMs: 10_000,
} as const;

/**
 * Starts the vendor back-office simulator: server-rendered pages, a JSON API,
 * and (with a control token) the /__sim control API for tests and chaos.
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const parsed = SimulatorOptionsSchema.safeParse(options);
  if (!parsed.success) throw new Error(`invalid simulator options: ${describeIssues(parsed.error)}`);
  const config = { ...SIMULATOR_DEFAULTS, ...stripUndefined(parsed.data) };
  const office = new BackOffice(
    {
      seed: config.seed,
      tenants: config.tenants ?? DEFAULT_TENANTS.map((id) => ({ id })),
      asyncDelayMs: config.asyncDelayMs,
      sessionTtlSeconds: config.sessionTtlSeconds,
    },
    config.pageSize,
    config.clientTimeoutMs,
  );
  const closing = new AbortController();
  const server = createServer(createRequestListener(office, { controlToken: config.controlToken, closing: closing.signal }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${hostForUrl}:${port}`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        office.dispose();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
