import { parseArgs } from 'node:util';
import { z } from 'zod';
import { OUTCOMES, type Outcome } from '../app/batch.js';
import { ValidationError } from '../config/errors.js';
import { NamedError } from '../domain/errors.js';

/**
 * Every command's flags are declared once, as a zod object: the parser, the
 * validation and the usage text all come from it. A field's `.meta()` may set
 * `description` (one line for --help) and `value` (the placeholder shown after
 * the flag, e.g. `file`); booleans are switches, arrays repeat (`--param a=1
 * --param b=2`), everything else takes one value.
 */

export interface Positional {
  name: string;
  description: string;
  schema: z.ZodType<string>;
  optional?: boolean;
}

export interface CommandSpec<F extends z.ZodType = z.ZodType> {
  /** The words after `paperclip`, e.g. `sitepack check`. */
  name: string;
  /** One line for `paperclip --help`. */
  summary: string;
  /** What it does, guarantees and exit codes (free text for `--help`). */
  description: string;
  /** A z.object of the flags (possibly refined). */
  flags: F;
  positionals?: Positional[];
  /** How the command is started when that is not `paperclip <name>` (the demo is `npm start --`). */
  invocation?: string;
}

/** One `paperclip` command: its declared flags, and what runs once they parsed. */
export interface Command {
  spec: CommandSpec;
  run(argv: string[]): Promise<number>;
}

/**
 * An expected condition that stops an operator command before it changes anything: no data folder, a
 * folder of another config, an unknown task. Its message names the fix; `paperclip` prints it as one line
 * (never a stack trace) and exits 2.
 */
export class RefusedError extends NamedError {
  override name = 'RefusedError';
}

/** Bad command-line input: names the flag and the fix; the command changes nothing. Exit code 2. */
export class UsageError extends ValidationError {
  override name = 'UsageError';
  constructor(command: string, issues: Array<{ path: string; message: string }>, invocation = `paperclip ${command}`) {
    super(invocation, issues);
    this.message = `${invocation}: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('\n  ')}\n(see ${invocation} --help)`;
  }
}

interface FlagInfo {
  name: string;
  kind: 'boolean' | 'string' | 'array';
  required: boolean;
  defaultValue?: unknown;
  description: string;
  value: string;
}

/** The object schema under refinements (`.refine`/`.superRefine` keep the object in zod 4; pipes wrap it). */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> {
  let current: z.ZodType = schema;
  for (;;) {
    if (current instanceof z.ZodObject) return current.shape as Record<string, z.ZodType>;
    if (current instanceof z.ZodPipe) current = current.in as z.ZodType;
    else throw new Error('a command spec needs a z.object of flags');
  }
}

function flagInfo(name: string, schema: z.ZodType): FlagInfo {
  let current: z.ZodType | undefined = schema;
  let required = true;
  let defaultValue: unknown;
  let description = '';
  let value = '';
  let base = 'string';
  let choices: string[] | undefined;
  while (current) {
    const meta = z.globalRegistry.get(current) as { description?: string; value?: string } | undefined;
    description ||= meta?.description ?? current.description ?? '';
    value ||= meta?.value ?? '';
    if (
      current instanceof z.ZodOptional ||
      current instanceof z.ZodDefault ||
      current instanceof z.ZodPrefault ||
      current instanceof z.ZodNullable
    ) {
      required = false;
      if (current instanceof z.ZodDefault) defaultValue = current.def.defaultValue;
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodPipe) current = current.in as z.ZodType;
    else {
      base = current.type;
      if (current instanceof z.ZodEnum) choices = current.options.map(String);
      current = undefined;
    }
  }
  const kind = base === 'boolean' ? 'boolean' : base === 'array' ? 'array' : 'string';
  return { name, kind, required, defaultValue, description, value: value || (choices ? choices.join('|') : 'value') };
}

export function flagInfos(spec: CommandSpec): FlagInfo[] {
  return Object.entries(objectShape(spec.flags)).map(([name, schema]) => flagInfo(name, schema));
}

/** The `--help` text, from the spec alone. */
export function usageText(spec: CommandSpec): string {
  const flags = flagInfos(spec);
  const synopsis = [
    spec.invocation ?? `paperclip ${spec.name}`,
    ...(spec.positionals ?? []).map((p) => (p.optional ? `[<${p.name}>]` : `<${p.name}>`)),
    ...flags.filter((f) => f.required).map((f) => (f.kind === 'boolean' ? `--${f.name}` : `--${f.name} <${f.value}>`)),
    ...(flags.some((f) => !f.required) ? ['[flags]'] : []),
  ].join(' ');
  const rows: Array<[string, string]> = [
    ...(spec.positionals ?? []).map((p): [string, string] => [`<${p.name}>`, p.description]),
    ...flags.map((f): [string, string] => {
      const left = `--${f.name}${f.kind === 'boolean' ? '' : ` <${f.value}>`}${f.kind === 'array' ? ' ...' : ''}`;
      const shown = f.defaultValue !== undefined && f.kind !== 'boolean' && !(Array.isArray(f.defaultValue) && f.defaultValue.length === 0);
      return [left, `${f.description}${f.required ? ' (required)' : ''}${shown ? ` (default ${String(f.defaultValue)})` : ''}`];
    }),
    ['--help', 'this text'],
  ];
  const width = Math.min(34, Math.max(...rows.map(([left]) => left.length)) + 2);
  const table = rows.map(([left, right]) =>
    left.length + 2 > width ? `  ${left}\n  ${''.padEnd(width)}${right}` : `  ${left.padEnd(width)}${right}`,
  );
  return `Usage: ${synopsis}\n\n${spec.summary}\n\n${spec.description.trim()}\n\n${table.join('\n')}`;
}

/** Edit distance, for "did you mean --tenant?". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

function unknownFlagMessage(flag: string, known: FlagInfo[]): string {
  const bare = flag.replace(/^-+/, '').split('=')[0] ?? '';
  const nearest = known.map((f) => ({ f, d: distance(bare, f.name) })).sort((a, b) => a.d - b.d)[0];
  const hint =
    nearest && nearest.d <= 2 ? `did you mean --${nearest.f.name}?` : `the flags are ${known.map((f) => `--${f.name}`).join(', ')}`;
  return `unknown flag ${flag.split('=')[0]}; ${hint}`;
}

/**
 * Parses and validates a command line against its spec. Nothing is opened or
 * changed before this returns: a bad flag throws a UsageError naming it.
 */
export function parseCommand<F extends z.ZodType>(spec: CommandSpec<F>, argv: string[]): { flags: z.output<F>; positionals: string[] } {
  const infos = flagInfos(spec);
  const usage = (issues: Array<{ path: string; message: string }>) => new UsageError(spec.name, issues, spec.invocation);
  const options = Object.fromEntries(
    infos.map((f) => [
      f.name,
      f.kind === 'boolean' ? { type: 'boolean' as const } : { type: 'string' as const, multiple: f.kind === 'array' },
    ]),
  );
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const flag = message.match(/'(-[^' ]+)/)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw usage([{ path: '', message: unknownFlagMessage(flag, infos) }]);
    const info = infos.find((f) => `--${f.name}` === flag);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && info) {
      const fix = info.kind === 'boolean' ? 'it is a switch and takes no value' : `it needs a value: --${info.name} <${info.value}>`;
      throw usage([{ path: `--${info.name}`, message: fix }]);
    }
    throw usage([{ path: '', message }]);
  }
  const issues: Array<{ path: string; message: string }> = [];
  const declared = spec.positionals ?? [];
  const min = declared.filter((p) => !p.optional).length;
  if (parsed.positionals.length < min || parsed.positionals.length > declared.length) {
    const wanted = declared.length === 0 ? 'no arguments besides flags' : declared.map((p) => `<${p.name}>`).join(' ');
    issues.push({
      path: '',
      message: `expected ${wanted}, got ${parsed.positionals.length === 0 ? 'none' : parsed.positionals.map((p) => JSON.stringify(p)).join(' ')}`,
    });
  } else {
    parsed.positionals.forEach((value, i) => {
      const p = declared[i]!;
      const result = p.schema.safeParse(value);
      if (!result.success) issues.push({ path: `<${p.name}>`, message: result.error.issues[0]?.message ?? 'invalid' });
    });
  }
  const result = spec.flags.safeParse(parsed.values);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const name = String(issue.path[0] ?? '');
      const info = infos.find((f) => f.name === name);
      // zod's own "expected string, received undefined" says nothing a person can act on.
      const missing = issue.code === 'invalid_type' && parsed.values[name] === undefined && issue.message.startsWith('Invalid input');
      issues.push({
        path: name ? `--${name}` : '',
        message:
          missing && info ? `is required; give --${name} <${info.value}>${info.description ? `: ${info.description}` : ''}` : issue.message,
      });
    }
  }
  if (issues.length > 0) throw usage(issues);
  return { flags: result.data as z.output<F>, positionals: parsed.positionals };
}

/** `--param k=v` values as a record; a malformed one names the flag and the fix. */
export const KeyValueList = z
  .array(z.string())
  .default([])
  .transform((pairs, ctx) => {
    const out: Record<string, string> = {};
    for (const pair of pairs) {
      const at = pair.indexOf('=');
      if (at <= 0) {
        ctx.addIssue({ code: 'custom', message: `"${pair}" is not name=value; write e.g. --param reason=duplicate` });
        continue;
      }
      out[pair.slice(0, at)] = pair.slice(at + 1);
    }
    return out;
  });

/** Flags several commands share, declared once. */
export const TenantId = z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'tenant ids are lower-kebab-case, e.g. acme');
export const ConfigPath = z.string().min(1).meta({ value: 'file', description: 'the Paperclip config (YAML)' });
/** The config of a command that reads a data folder: left out, the one the folder was run with (data-folder.ts). */
export const FolderConfigPath = ConfigPath.optional().meta({
  value: 'file',
  description: 'the Paperclip config (default: the one the data folder was run with, else config/paperclip.local.yaml)',
});
/**
 * `--fail-on takeover,error` or `--fail-on takeover:3`: item outcomes that make a batch that ran
 * exit non-zero (3), for schedulers and CI; `outcome:N` fails from N items of it on (default 1).
 */
export const FailOn = z
  .string()
  .optional()
  .transform((text, ctx) => {
    const rules: Array<{ outcome: Outcome; atLeast: number }> = [];
    for (const part of (text ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const match = /^([a-z_]+)(?::(\d{1,6}))?$/.exec(part);
      const outcome = match?.[1] as Outcome | undefined;
      if (!match || !outcome || !OUTCOMES.includes(outcome)) {
        ctx.addIssue({ code: 'custom', message: `"${part}" is not outcome or outcome:N; outcomes are ${OUTCOMES.join(', ')}` });
        return z.NEVER;
      }
      const atLeast = match[2] === undefined ? 1 : Number(match[2]);
      if (atLeast < 1) {
        ctx.addIssue({ code: 'custom', message: `"${part}": N counts items and starts at 1` });
        return z.NEVER;
      }
      rules.push({ outcome, atLeast });
    }
    return rules;
  })
  .meta({
    value: 'outcomes',
    description:
      'exit 3 when items end so, e.g. takeover,error or takeover:3 (from 3 items on); default: only a failed batch exits non-zero',
  });

export type FailOnRules = z.output<typeof FailOn>;

export const DataDir = z.string().min(1).meta({ value: 'dir', description: 'local data folder: claims, evidence, executions' });
/** The flags of a command that works on a data folder: the folder, and the config it was run with (FolderConfigPath). */
export const dataFolderFlags = { 'data-dir': DataDir.default('.paperclip'), config: FolderConfigPath };
/** `--aws` of a command that reads what Paperclip stored: the deployed tables and bucket instead of a data folder. */
export const AwsFlag = z.boolean().default(false).meta({ description: 'read the deployed tables and bucket' });
export const Port = z.coerce.number().int('must be a whole number').min(0).max(65535, 'ports go up to 65535');
