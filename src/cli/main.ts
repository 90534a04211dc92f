#!/usr/bin/env node
import { ValidationError } from '../config/errors.js';
import { PaperclipError } from '../domain/errors.js';
import { DEMO_USAGE, runDemo } from './demo.js';
import { AUDIT_USAGE, runAudit } from './audit.js';
import { EVIDENCE_USAGE, runEvidence } from './evidence.js';
import { REPORT_USAGE, runReport } from './report.js';
import { DRILL_USAGE, runDrillCommand } from './drill.js';
import { COMPENSATE_USAGE, runCompensate } from './compensate.js';
import { TAKEOVER_USAGE, runTakeover } from './takeover.js';
import { PLAN_USAGE, runPlan } from './plan.js';

// Locally this runs on Node 20 on purpose (Lambda runs 22); the SDK's notice about that is noise here.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

const COMMANDS: Record<string, { usage: string; run: (argv: string[]) => Promise<number> }> = {
  demo: { usage: DEMO_USAGE, run: runDemo },
  audit: { usage: AUDIT_USAGE, run: runAudit },
  evidence: { usage: EVIDENCE_USAGE, run: runEvidence },
  report: { usage: REPORT_USAGE, run: runReport },
  drill: { usage: DRILL_USAGE, run: runDrillCommand },
  compensate: { usage: COMPENSATE_USAGE, run: runCompensate },
  takeover: { usage: TAKEOVER_USAGE, run: runTakeover },
  plan: { usage: PLAN_USAGE, run: runPlan },
};

function usage(): string {
  return `Usage: paperclip <command> [flags]\n\nCommands:\n${Object.keys(COMMANDS)
    .map((c) => `  ${c}`)
    .join('\n')}\n\nRun paperclip <command> --help for its flags.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`${name ? `unknown command "${name}"\n\n` : ''}${usage()}\n`);
    return 2;
  }
  if (rest.includes('--help')) {
    process.stdout.write(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof ValidationError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    if (error instanceof PaperclipError) {
      // An expected failure (vendor unreachable, session lost, ...): its message is the explanation.
      process.stderr.write(`${error.name}: ${error.message.split('\n')[0]}\n`);
      return 1;
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
