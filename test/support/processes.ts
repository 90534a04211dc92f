import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node ...args` in a child process without blocking this one (whatever
 * it starts in this process's embedded stack keeps running) and collects its output.
 */
export function runNode(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The paperclip CLI from source (`src/cli/main.ts`), as runNode runs it. */
export function runPaperclipSource(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Finished> {
  return runNode(['--import', 'tsx', 'src/cli/main.ts', ...args], env);
}

/**
 * Waits until a back office started from its command line has printed its
 * URL and the Ctrl+C line; fails with what it printed when it does not within
 * 20 s or exits first.
 */
export function printedUrl(child: ChildProcessByStdio<null, Readable, Readable>): Promise<{ url: string; out: string }> {
  let out = '';
  child.stdout.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed; got: ${out}`)), 20_000);
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match?.[1] && out.includes('Ctrl+C')) {
        clearTimeout(timer);
        resolve({ url: match[1], out });
      }
    });
    child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${out}`)));
  });
}
