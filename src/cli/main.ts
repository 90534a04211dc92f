#!/usr/bin/env node
import { ValidationError } from '../config/errors.js';
import { PaperclipError } from '../domain/errors.js';
import { RefusedError, usageText, type Command } from './args.js';
import { TakeoverRefusedError } from '../app/takeover/resolve.js';
import { CompensationRefusedError } from '../app/compensation.js';
import { itemsCommand } from './items.js';
import { demoCommand } from './demo.js';
import { runCommand } from './run.js';
import { sitepackCommands } from './sitepack.js';
import { auditCommand, auditDigestCommand } from './audit.js';
import { evidenceCommand } from './evidence.js';
import { reportCommand } from './report.js';
import { drillCommand } from './drill.js';
import { compensateCommand } from './compensate.js';
import { takeoverCommands } from './takeover.js';
import { planCommand } from './plan.js';
import { unexpectedErrorLine } from './unexpected-error.js';

// Locally this runs on Node 20 on purpose (Lambda runs 22); the SDK's notice about that is noise here.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

const COMMANDS: Command[] = [
  runCommand,
  ...sitepackCommands,
  demoCommand,
  drillCommand,
  itemsCommand,
  compensateCommand,
  ...takeoverCommands,
  auditCommand,
  auditDigestCommand,
  evidenceCommand,
  reportCommand,
  planCommand,
];

function listing(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.spec.name.length)) + 2;
  return commands.map((c) => `  ${c.spec.name.padEnd(width)}${c.spec.summary}`).join('\n');
}

/** What every command's exit code means; a command's --help says what its 1 (and run's 3) are. */
export const EXIT_CODES = `Exit codes (every command):
  0  it did what was asked
  1  it ran and failed: the command's --help says what that means for it
  2  refused, nothing changed: bad flags, no data folder, a folder of another
     config, an unknown key, item or task (one line naming the fix)
  3  run only: the batch succeeded but items ended as --fail-on names
  4  it could not run: a store or service it needs is unreachable, no AWS
     credentials, or an unexpected error (one line; PAPERCLIP_DEBUG=1 prints
     the stack trace)`;

export function overview(): string {
  return (
    `Usage: paperclip <command> [flags]\n\nCommands:\n${listing(COMMANDS)}\n\n${EXIT_CODES}\n\nRun paperclip ` +
    `<command> --help for its flags. npm start runs the demo; npx paperclip runs this.`
  );
}

/** The command named by the leading words of argv (the longest name wins: `sitepack check` before `sitepack`). */
function find(argv: string[]): { command?: Command; rest: string[]; group: Command[] } {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS.find((c) => c.spec.name === name);
    if (command) return { command, rest: argv.slice(words), group: [] };
  }
  const group = argv[0] ? COMMANDS.filter((c) => c.spec.name.startsWith(`${argv[0]} `)) : [];
  return { rest: argv.slice(1), group };
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help' || argv[0] === '-h') {
    process.stdout.write(`${overview()}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const { command, rest, group } = find(argv);
  if (!command) {
    if (group.length > 0) {
      const asked = rest[0] === undefined || rest[0] === '--help';
      const head = asked ? '' : `paperclip ${argv[0]}: unknown subcommand "${rest[0]}"\n\n`;
      (asked ? process.stdout : process.stderr).write(`${head}Usage: paperclip ${argv[0]} <subcommand> [flags]\n\n${listing(group)}\n`);
      return rest[0] === '--help' ? 0 : 2;
    }
    process.stderr.write(`unknown command "${argv[0]}"\n\n${overview()}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${usageText(command.spec)}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof ValidationError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    if (error instanceof RefusedError || error instanceof TakeoverRefusedError || error instanceof CompensationRefusedError) {
      // An expected condition (no data folder, an unknown key or task): the message names the fix.
      process.stderr.write(`paperclip ${command.spec.name}: ${error.message}\n`);
      return 2;
    }
    if (error instanceof PaperclipError) {
      // An expected failure (vendor unreachable, session lost, ...): its message is the explanation.
      process.stderr.write(`${error.name}: ${error.message.split('\n')[0]}\n`);
      return 1;
    }
    process.stderr.write(`${unexpectedErrorLine(command.spec.name, error)}\n`);
    if (process.env['PAPERCLIP_DEBUG']) process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    return 4;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${unexpectedErrorLine('', error)}\n`);
    if (process.env['PAPERCLIP_DEBUG']) process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(4);
  },
);
