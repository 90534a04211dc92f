import { parseArgs } from 'node:util';
import { z } from 'zod';
import { accountsFor } from './accounts.js';
import { describeIssues, TENANT_ID_PATTERN } from './schemas.js';
import { SIMULATOR_DEFAULTS, startSimulator } from './server.js';

const USAGE = `Vendor back-office simulator

Usage: npm run sim -- [--port 4100] [--host 127.0.0.1] [--seed 7] [--control-token T]
                      [--async-delay-ms 300] [--session-ttl 1800] [--page-size 10]
                      [--tenants acme,globex,initech]

  --port            TCP port (0 = any free port; default 0)
  --host            listen address (default 127.0.0.1)
  --seed            data seed; the same seed gives the same bills (default 1)
  --control-token   enables the /__sim control API, guarded by header x-sim-token
  --async-delay-ms  how long writes stay 处理中 before settling (default 300)
  --session-ttl     idle session timeout in seconds (default 1800)
  --page-size       list rows per page (default 10)
  --tenants         comma-separated tenant ids, lowercase letters (default acme,globex,initech)
`;

const integer = (flag: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `--${flag} must be a whole number`)
    .transform(Number)
    .pipe(z.number().min(min, `--${flag} must be >= ${min}`).max(max, `--${flag} must be <= ${max}`));

const FlagsSchema = z.strictObject({
  port: integer('port', 0, 65535).optional(),
  host: z.string().min(1).optional(),
  seed: integer('seed', 0, 2 ** 32 - 1).optional(),
  'control-token': z.string().min(1, '--control-token must not be empty').optional(),
  'async-delay-ms': integer('async-delay-ms', 0, 600_000).optional(),
  'session-ttl': integer('session-ttl', 1, 7 * 24 * 3600).optional(),
  'page-size': integer('page-size', 1, 100).optional(),
  tenants: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .pipe(
      z
        .array(z.string().regex(TENANT_ID_PATTERN, '--tenants takes lowercase letters only, e.g. acme,globex'))
        .min(1, '--tenants needs at least one tenant'),
    )
    .optional(),
  help: z.boolean().optional(),
});

function fail(message: string): never {
  process.stderr.write(`sim: ${message}\n\n${USAGE}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        seed: { type: 'string' },
        'control-token': { type: 'string' },
        'async-delay-ms': { type: 'string' },
        'session-ttl': { type: 'string' },
        'page-size': { type: 'string' },
        tenants: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  const flags = FlagsSchema.safeParse(values);
  if (!flags.success) fail(describeIssues(flags.error));
  const f = flags.data;
  if (f.help) {
    process.stdout.write(USAGE);
    return;
  }
  const tenantIds = f.tenants ?? undefined;
  const sim = await startSimulator({
    port: f.port ?? SIMULATOR_DEFAULTS.port,
    host: f.host,
    seed: f.seed,
    controlToken: f['control-token'],
    asyncDelayMs: f['async-delay-ms'],
    sessionTtlSeconds: f['session-ttl'],
    pageSize: f['page-size'],
    tenants: tenantIds?.map((id) => ({ id })),
  }).catch((error: Error) => fail(error.message));

  const accounts = accountsFor(tenantIds ?? ['acme', 'globex', 'initech']);
  const lines = [
    `供应商对账后台 (simulator) listening on ${sim.url}`,
    `  login page:   ${sim.url}/login`,
    `  control API:  ${f['control-token'] ? `${sim.url}/__sim/ (header x-sim-token)` : 'disabled (no --control-token)'}`,
    '  accounts (username / password / API token / scope):',
    ...accounts.map((a) => `    ${a.username.padEnd(20)} ${a.password.padEnd(16)} ${a.token.padEnd(14)} ${a.tenant ?? 'all tenants'}`),
    'Press Ctrl+C to stop.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  const stop = () => {
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
