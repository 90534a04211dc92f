import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import sparticuz from '@sparticuz/chromium';
import type { Browser, LaunchOptions } from 'playwright-core';

/**
 * The one way this project starts a browser: the @sparticuz/chromium build
 * (the same binary locally and in Lambda) driven by playwright-core.
 */

/** fonts.conf shipped by @sparticuz/chromium reads these folders; /tmp is the writable one. */
const FONT_ROOT = '/tmp/fonts';
const CJK_FONT_DIR = join(FONT_ROOT, 'noto-sans-sc');
const CJK_FONT_FILE = 'NotoSansSC-Regular.ttf';

/**
 * Flags removed from @sparticuz/chromium's defaults, and why:
 * - --single-process: shares one renderer between every context, so a crash or
 *   leak in one tenant's page reaches the others, and newContext can fail with
 *   "Target closed". Isolation between tenants matters more than the memory.
 * - --disable-web-security / --disable-site-isolation-trials /
 *   --allow-running-insecure-content: unacceptable while logged into a back office.
 * - --headless='shell': playwright-core passes its own headless flag.
 * - the SwiftShader/ANGLE graphics flags: software GL made every screenshot
 *   several times slower here, and back offices need no WebGL; --disable-gpu
 *   renders with the plain software compositor instead.
 */
const GRAPHICS_FLAG = /^--(use-gl|use-angle|enable-unsafe-swiftshader|ignore-gpu-blocklist|in-process-gpu)/;

const DROPPED_FLAGS = new Set([
  '--single-process',
  '--disable-web-security',
  '--disable-site-isolation-trials',
  '--allow-running-insecure-content',
]);

/** Keep site isolation: only the audio-service tweak survives from the disabled features. */
const DISABLED_FEATURES = '--disable-features=AudioServiceOutOfProcess';

/** Software rendering, and no background fetches: the closed network makes them fail noisily. */
const EXTRA_FLAGS = ['--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export function chromiumArgs(): string[] {
  return [
    ...sparticuz.args
      .filter((arg) => !DROPPED_FLAGS.has(arg) && !arg.startsWith('--headless') && !GRAPHICS_FLAG.test(arg))
      .map((arg) => (arg.startsWith('--disable-features=') ? DISABLED_FEATURES : arg)),
    ...EXTRA_FLAGS,
  ];
}

/**
 * Places a CJK font where Chromium's fontconfig looks. In Lambda the font is
 * bundled at /var/task/fonts (or a layer at /opt/fonts) and fonts.conf finds it
 * there; locally it is copied out of the npm package once per machine boot.
 */
export function ensureCjkFont(): void {
  const target = join(CJK_FONT_DIR, CJK_FONT_FILE);
  if (existsSync(target)) return;
  for (const bundled of ['/var/task/fonts', '/opt/fonts']) {
    if (existsSync(join(bundled, CJK_FONT_FILE))) return;
  }
  const require = createRequire(import.meta.url);
  const packageDir = dirname(require.resolve('@expo-google-fonts/noto-sans-sc/package.json'));
  mkdirSync(CJK_FONT_DIR, { recursive: true });
  copyFileSync(join(packageDir, '400Regular', 'NotoSansSC_400Regular.ttf'), target);
}

export interface LaunchRequest {
  /** Extra launch options, e.g. a slowMo while debugging. */
  options?: Omit<LaunchOptions, 'executablePath' | 'args'>;
}

/**
 * Launches one browser. Playwright gives each launch its own temporary
 * user-data-dir and removes it on close, so warm Lambdas do not fill /tmp.
 */
export async function launchChromium(request: LaunchRequest = {}): Promise<Browser> {
  // Loaded at the first launch, not with the services: a command or handler that never opens a browser
  // (audit verify, report, the stores) does not pay for Playwright's modules.
  const { chromium } = await import('playwright-core');
  const executablePath = await sparticuz.executablePath();
  ensureCjkFont();
  return chromium.launch({
    headless: true,
    ...request.options,
    executablePath,
    args: chromiumArgs(),
    env: { ...process.env, FONTCONFIG_PATH: FONT_ROOT },
  });
}

let shared: Promise<Browser> | undefined;

/**
 * One browser per process, reused across items; every task gets a fresh
 * context from it. Relaunches if the previous browser died.
 */
export async function sharedBrowser(): Promise<Browser> {
  if (shared) {
    const browser = await shared.catch(() => undefined);
    if (browser?.isConnected()) return browser;
  }
  shared = launchChromium();
  return shared;
}

export async function closeSharedBrowser(): Promise<void> {
  if (!shared) return;
  const pending = shared;
  shared = undefined;
  const browser = await pending.catch(() => undefined);
  await browser?.close();
}
