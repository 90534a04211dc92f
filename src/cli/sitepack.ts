import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { ValidationError } from '../config/errors.js';
import { loadConfig } from '../config/load.js';
import { checkConfigAgainstPack } from '../config/runtime.js';
import { loadSitePack } from '../sitepack/load.js';
import type { SitePack } from '../sitepack/schema.js';
import { ConfigPath, parseCommand, type Command, type CommandSpec } from './args.js';
import { probeCommand } from './probe.js';
import { sitepackDrillCommand } from './drill.js';
import { draftCommand } from './sitepack-draft.js';

const CheckFlags = z.object({
  config: ConfigPath.optional().meta({ value: 'file', description: 'also check this config against the pack' }),
});

export const CHECK_SPEC: CommandSpec<typeof CheckFlags> = {
  name: 'sitepack check',
  summary: 'validates a site pack (and a config against it) without a browser',
  description: `Validates the site pack: its schema, and that the states its actions name can be
read from the vendor's pages. With --config, also the config against that pack:
identities and tenants, the actions it enables and maps kinds to, the readback
sources it asks for (the pack must describe each), approval and parameter
settings. Every problem names the field path and the fix. Opens no browser and
changes nothing. Exit code 0 valid, 1 problems found, 2 bad arguments.`,
  flags: CheckFlags,
  positionals: [{ name: 'pack', description: 'the site-pack file (YAML)', schema: z.string().min(1) }],
};

/** Checks a valid pack cannot express in its schema: the states its actions name must be ones a status map yields. */
export function packIssues(pack: SitePack): Array<{ path: string; message: string }> {
  const readable = new Set([pack.statuses, pack.api?.statusMap ?? {}, pack.export?.statusMap ?? {}].flatMap((map) => Object.values(map)));
  const issues: Array<{ path: string; message: string }> = [];
  const known = [...readable].join(', ');
  for (const [name, action] of Object.entries(pack.actions)) {
    const named: Array<[string, string | undefined]> = [
      ...action.appliesTo.map((s, i): [string, string] => [`appliesTo.${i}`, s]),
      ['targetStatus', action.targetStatus],
      ...action.settlingStatuses.map((s, i): [string, string] => [`settlingStatuses.${i}`, s]),
    ];
    for (const [field, status] of named) {
      if (status !== undefined && !readable.has(status)) {
        issues.push({
          path: `actions.${name}.${field}`,
          message: `status ${status} is in no status map: map the text the vendor shows for it under statuses (they map to: ${known})`,
        });
      }
    }
  }
  return issues;
}

function resolvePath(path: string): string {
  return isAbsolute(path) ? path : resolve(process.cwd(), path);
}

export async function runCheck(argv: string[], out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<number> {
  const { flags, positionals } = parseCommand(CHECK_SPEC, argv);
  const packPath = positionals[0]!;
  let failed = false;
  const report = (error: unknown): void => {
    if (!(error instanceof ValidationError)) throw error;
    failed = true;
    out(error.message);
  };
  let pack: SitePack | undefined;
  try {
    pack = loadSitePack(resolvePath(packPath));
    const issues = packIssues(pack);
    if (issues.length > 0) throw new ValidationError(packPath, issues);
    out(`${packPath}: valid (site ${pack.site}; actions ${Object.keys(pack.actions).join(', ')})`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') report(new ValidationError(packPath, [{ path: '', message: 'no such file' }]));
    else report(error);
  }
  if (flags.config) {
    try {
      const config = loadConfig(resolvePath(flags.config));
      if (pack) {
        checkConfigAgainstPack(config, pack, flags.config);
        if (resolvePath(config.vendor.site_pack) !== resolvePath(packPath))
          out(`note: ${flags.config} names vendor.site_pack ${config.vendor.site_pack}, not ${packPath}; checked against ${packPath}`);
        out(`${flags.config}: valid against ${pack.site} (tenants ${config.tenants.map((t) => t.id).join(', ')})`);
      } else out(`${flags.config}: valid on its own; not checked against the pack, which is invalid`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        report(new ValidationError(flags.config, [{ path: '', message: 'no such file' }]));
      else report(error);
    }
  }
  return failed ? 1 : 0;
}

export const sitepackCommands: Command[] = [
  { spec: CHECK_SPEC, run: (argv) => runCheck(argv) },
  probeCommand,
  sitepackDrillCommand,
  draftCommand,
];
