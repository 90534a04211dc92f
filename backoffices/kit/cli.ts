import { parseArgs } from 'node:util';
import { z } from 'zod';
import { describeIssues } from './schemas.js';
import type { RunningBackOffice } from './serve.js';

/**
 * A back office's command line, declared once: each flag is a zod schema over
 * the flag's text with an example and a help line. Parsing, validation and the
 * usage text are all derived from that one declaration.
 */
export interface Flag<T = unknown> {
  schema: z.ZodType<T, string>;
  /** Shown in the usage line, e.g. `[--port 4100]`. */
  example: string;
  help: string;
}

export type Flags = Record<string, Flag>;
export type FlagValues<F extends Flags> = { [K in keyof F]?: F[K] extends Flag<infer T> ? T : never };

export function flag<T>(schema: z.ZodType<T, string>, example: string, help: string): Flag<T> {
  return { schema, example, help };
}

/** A whole number within [min, max]; the message names the flag. */
export function wholeNumber(name: string, min: number, max: number): z.ZodType<number, string> {
  return z
    .string()
    .regex(/^\d+$/, `--${name} must be a whole number`)
    .transform(Number)
    .pipe(z.number().min(min, `--${name} must be >= ${min}`).max(max, `--${name} must be <= ${max}`));
}

/** `a,b,c` as a list, blanks dropped, each item and the list checked by `list`. */
export function commaList(list: z.ZodType<string[], string[]>): z.ZodType<string[], string> {
  return z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    )
    .pipe(list);
}

/** What tells one back office's common flags apart from the other's. */
export interface BackOfficeWords {
  port: number;
  /** What the seed decides, e.g. `bills`. */
  seeded: string;
  /** What --async-delay-ms does, without its default. */
  asyncDelay: string;
  pageSize: number;
  /** What a page holds, e.g. `list rows`. */
  pageOf: string;
}

/** The flags every back office takes, with the start options they map to (see `serverOptions`). */
export function backOfficeFlags(words: BackOfficeWords) {
  return {
    port: flag(wholeNumber('port', 0, 65535), String(words.port), 'TCP port (0 = any free port; default 0)'),
    host: flag(z.string().min(1), '127.0.0.1', 'listen address (default 127.0.0.1)'),
    seed: flag(wholeNumber('seed', 0, 2 ** 32 - 1), '7', `data seed; the same seed gives the same ${words.seeded} (default 1)`),
    'control-token': flag(
      z.string().min(1, '--control-token must not be empty'),
      'T',
      'enables the /__sim control API, guarded by header x-sim-token',
    ),
    'async-delay-ms': flag(wholeNumber('async-delay-ms', 0, 600_000), '300', `${words.asyncDelay} (default 300)`),
    'session-ttl': flag(wholeNumber('session-ttl', 1, 7 * 24 * 3600), '1800', 'idle session timeout in seconds (default 1800)'),
    'page-size': flag(wholeNumber('page-size', 1, 100), String(words.pageSize), `${words.pageOf} per page (default ${words.pageSize})`),
  };
}

type CommonValues = FlagValues<ReturnType<typeof backOfficeFlags>>;

/** The start options the common flags set. */
export function serverOptions(f: CommonValues) {
  return {
    port: f.port ?? 0,
    host: f.host,
    seed: f.seed,
    controlToken: f['control-token'],
    asyncDelayMs: f['async-delay-ms'],
    sessionTtlSeconds: f['session-ttl'],
    pageSize: f['page-size'],
  };
}

/** The usage text: the title, the flags with their examples wrapped under the command, one help line each. */
export function usageOf(title: string, command: string, flags: Flags): string {
  const head = `Usage: ${command} -- `;
  const lines: string[] = [];
  let line = head;
  for (const [name, f] of Object.entries(flags)) {
    const item = `[--${name} ${f.example}]`;
    if (line.length > head.length && line.length + item.length > 100) {
      lines.push(line.trimEnd());
      line = ' '.repeat(head.length);
    }
    line += `${item} `;
  }
  lines.push(line.trimEnd());
  const help = Object.entries(flags).map(([name, f]) => `  --${name.padEnd(15)} ${f.help}`);
  return `${title}\n\n${lines.join('\n')}\n\n${help.join('\n')}\n`;
}

/** Reads argv against `flags`; a bad flag or value is a message naming it. */
export function parseFlags<F extends Flags>(
  argv: string[],
  flags: F,
): { ok: true; help: boolean; values: FlagValues<F> } | { ok: false; message: string } {
  let values: Record<string, unknown>;
  try {
    const options = Object.fromEntries(Object.keys(flags).map((name) => [name, { type: 'string' as const }]));
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const shape = Object.fromEntries(Object.entries(flags).map(([name, f]) => [name, f.schema.optional()]));
  const parsed = z.strictObject({ ...shape, help: z.boolean().optional() }).safeParse(values);
  if (!parsed.success) return { ok: false, message: describeIssues(parsed.error) };
  const { help, ...rest } = parsed.data as { help?: boolean } & Record<string, unknown>;
  return { ok: true, help: help === true, values: rest as FlagValues<F> };
}

export interface BackOfficeCli<F extends Flags> {
  /** Prefixes error messages, e.g. `sim`. */
  name: string;
  title: string;
  /** How it is started, e.g. `npm run sim`. */
  command: string;
  flags: F;
  start(values: FlagValues<F>): Promise<RunningBackOffice>;
  /** Who can sign in, printed after the URLs. */
  banner(values: FlagValues<F>, url: string): { name: string; signIn: string; users: string[] };
}

/** Parses the flags, starts the back office, prints where it listens and who can sign in, and stops on SIGINT/SIGTERM. */
export async function runBackOfficeCli<F extends Flags>(cli: BackOfficeCli<F>): Promise<void> {
  const usage = usageOf(cli.title, cli.command, cli.flags);
  const fail = (message: string): never => {
    process.stderr.write(`${cli.name}: ${message}\n\n${usage}`);
    process.exit(2);
  };
  const parsed = parseFlags(process.argv.slice(2), cli.flags);
  if (!parsed.ok) return fail(parsed.message);
  if (parsed.help) {
    process.stdout.write(usage);
    return;
  }
  const running = await cli.start(parsed.values).catch((error: Error) => fail(error.message));
  const { url } = running;
  const about = cli.banner(parsed.values, url);
  const controlled = parsed.values['control-token'] !== undefined;
  const lines = [
    `${about.name} listening on ${url}`,
    about.signIn,
    `  control API:  ${controlled ? `${url}/__sim/ (header x-sim-token)` : 'disabled (no --control-token)'}`,
    ...about.users,
    'Press Ctrl+C to stop.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const stop = () => {
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
