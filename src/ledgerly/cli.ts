import { parseArgs } from 'node:util';
import { z } from 'zod';
import { describeIssues } from '../simulator/schemas.js';
import { ledgerlyUsersFor } from './accounts.js';
import { DEFAULT_ORGS, LEDGERLY_DEFAULTS, ORG_SLUG_PATTERN, startLedgerly } from './server.js';

const USAGE = `Ledgerly, a billing SaaS back office (the second in-repo vendor)

Usage: npm run sim:ledgerly -- [--port 4200] [--host 127.0.0.1] [--seed 7] [--control-token T]
                               [--async-delay-ms 300] [--session-ttl 1800] [--page-size 5] [--orgs acme,globex]

  --port            TCP port (0 = any free port; default 0)
  --host            listen address (default 127.0.0.1)
  --seed            data seed; the same seed gives the same discrepancies (default 1)
  --control-token   enables the /__sim control API, guarded by header x-sim-token
  --async-delay-ms  how long a resolve stays "Under review" (a refund "Refund pending") (default 300)
  --session-ttl     idle session timeout in seconds (default 1800)
  --page-size       cards per page (default 5)
  --orgs            comma-separated org slugs, lowercase letters (default acme,globex)
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
  orgs: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(ORG_SLUG_PATTERN, '--orgs takes lowercase letters only, e.g. acme,globex')).min(1).max(9))
    .optional(),
  help: z.boolean().optional(),
});

function fail(message: string): never {
  process.stderr.write(`ledgerly: ${message}\n\n${USAGE}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values: Record<string, unknown>;
  try {
    const string = { type: 'string' } as const;
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      strict: true,
      allowPositionals: false,
      options: {
        port: string,
        host: string,
        seed: string,
        'control-token': string,
        'async-delay-ms': string,
        'session-ttl': string,
        'page-size': string,
        orgs: string,
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
  const orgs = f.orgs ?? [...DEFAULT_ORGS];
  const server = await startLedgerly({
    port: f.port ?? LEDGERLY_DEFAULTS.port,
    host: f.host,
    seed: f.seed,
    controlToken: f['control-token'],
    asyncDelayMs: f['async-delay-ms'],
    sessionTtlSeconds: f['session-ttl'],
    pageSize: f['page-size'],
    orgs: orgs.map((id) => ({ id })),
  }).catch((error: Error) => fail(error.message));
  const lines = [
    `Ledgerly listening on ${server.url}`,
    `  sign in:      ${server.url}/#/login`,
    `  control API:  ${f['control-token'] ? `${server.url}/__sim/ (header x-sim-token)` : 'disabled (no --control-token)'}`,
    '  users (email / password / orgs):',
    ...ledgerlyUsersFor(orgs).map((u) => `    ${u.username.padEnd(22)} ${u.password.padEnd(22)} ${u.org ?? 'every org'}`),
    'Press Ctrl+C to stop.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
