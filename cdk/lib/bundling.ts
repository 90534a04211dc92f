import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { RUNTIME_DIR_IN_BUNDLE } from './runtime-config.js';

/**
 * How every handler is bundled: esbuild on this machine (never Docker), ESM
 * output for nodejs22.x, the AWS SDK bundled so Lambda runs the SDK version
 * the tests ran rather than whatever the runtime ships that week.
 */

/** Packages installed next to the bundle instead of bundled into it, and why. */
export const BROWSER_NODE_MODULES = [
  // Its bin/*.br archives (Chromium, its fonts.conf, AL2023 libs) are found
  // relative to the package's own files; esbuild cannot carry them.
  '@sparticuz/chromium',
  // Resolves its own package.json and helper files at run time.
  'playwright-core',
] as const;

/** The CJK font: copied from the npm package to /var/task/fonts, which @sparticuz/chromium's fonts.conf reads. */
export const CJK_FONT_SOURCE = 'node_modules/@expo-google-fonts/noto-sans-sc/400Regular/NotoSansSC_400Regular.ttf';
export const CJK_FONT_TARGET = 'fonts/NotoSansSC-Regular.ttf';

/**
 * CommonJS dependencies bundled into an ES module still call require(); give
 * them one. Aliased names so the shim cannot clash with the bundle's own imports.
 */
const ESM_REQUIRE_SHIM =
  "import { createRequire as __paperclipCreateRequire } from 'node:module';" + 'const require = __paperclipCreateRequire(import.meta.url);';

/**
 * The installed folders of `names` and of everything they depend on at run
 * time (dependencies and installed optional dependencies), relative to
 * `projectRoot`, found the way Node resolves them: node_modules folders from
 * the dependent's own folder up to the root.
 */
export function installedClosure(projectRoot: string, names: readonly string[]): string[] {
  const found = new Set<string>();
  const visit = (name: string, fromDir: string, optional: boolean) => {
    for (let dir = fromDir; ; dir = dirname(dir)) {
      const candidate = join(dir, 'node_modules', name);
      if (existsSync(join(candidate, 'package.json'))) {
        const path = relative(projectRoot, candidate);
        if (found.has(path)) return;
        found.add(path);
        const manifest = JSON.parse(readFileSync(join(candidate, 'package.json'), 'utf8')) as {
          dependencies?: Record<string, string>;
          optionalDependencies?: Record<string, string>;
        };
        for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, candidate, false);
        for (const dep of Object.keys(manifest.optionalDependencies ?? {})) visit(dep, candidate, true);
        return;
      }
      if (dir === projectRoot || dirname(dir) === dir) break;
    }
    if (!optional) throw new Error(`${name} is not installed under ${projectRoot}: run \`npm ci\` before synth`);
  };
  for (const name of names) visit(name, projectRoot, false);
  return [...found].sort();
}

/** Fails fast, before CDK would quietly fall back to bundling in Docker. */
export function assertLocalEsbuild(): void {
  try {
    createRequire(import.meta.url).resolve('esbuild');
  } catch {
    throw new Error('esbuild is not installed: run `npm ci`. Paperclip bundles Lambdas locally and never with Docker.');
  }
}

/** Relative to the project root, where esbuild runs. */
const NO_BROWSER_ALIASES = {
  '--alias:playwright-core': './cdk/lib/stubs/playwright-core.ts',
  '--alias:@sparticuz/chromium': './cdk/lib/stubs/sparticuz-chromium.ts',
};

export interface HandlerBundlingOptions {
  browser: boolean;
  /** The repository root, whose installed node_modules the browser packages are copied from. */
  projectRoot: string;
  /** Folder with config.yaml and site-pack.yaml, copied to /var/task/paperclip/. */
  runtimeFilesDir: string;
}

export function handlerBundling(options: HandlerBundlingOptions): BundlingOptions {
  const copyRuntimeFiles = (outputDir: string) => [
    `mkdir -p "${outputDir}/${RUNTIME_DIR_IN_BUNDLE}"`,
    `cp "${options.runtimeFilesDir}/config.yaml" "${options.runtimeFilesDir}/site-pack.yaml" "${outputDir}/${RUNTIME_DIR_IN_BUNDLE}/"`,
  ];
  const common: BundlingOptions = {
    format: OutputFormat.ESM,
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: ESM_REQUIRE_SHIM,
    bundleAwsSDK: true,
    minify: true,
    sourceMap: true,
    sourcesContent: false,
    forceDockerBundling: false,
  };
  if (!options.browser) {
    return {
      ...common,
      esbuildArgs: NO_BROWSER_ALIASES,
      commandHooks: {
        beforeBundling: () => [],
        beforeInstall: () => [],
        afterBundling: (_inputDir: string, outputDir: string) => copyRuntimeFiles(outputDir),
      },
    };
  }
  // Copied from the installed tree rather than CDK's nodeModules, which runs a nested `npm ci` (network, or a warm cache):
  // synth works offline and ships exactly the versions the tests ran.
  const packages = installedClosure(options.projectRoot, BROWSER_NODE_MODULES);
  return {
    ...common,
    // Readable stacks without --enable-source-maps (paperclip-function.ts says why these functions run without it).
    minify: false,
    keepNames: true,
    externalModules: [...BROWSER_NODE_MODULES],
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir: string, outputDir: string) => [
        ...copyRuntimeFiles(outputDir),
        ...packages.flatMap((path) => [
          `mkdir -p "${outputDir}/${dirname(path)}"`,
          `cp -R "${join(options.projectRoot, path)}" "${outputDir}/${dirname(path)}/"`,
        ]),
        `mkdir -p "${outputDir}/fonts"`,
        `cp "${inputDir}/${CJK_FONT_SOURCE}" "${outputDir}/${CJK_FONT_TARGET}"`,
      ],
    },
  };
}
