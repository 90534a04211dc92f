/**
 * Import rules per folder, checked by `npm run depcruise` (part of `npm run lint`, so of `npm test`).
 * Tests, benchmarks and the chaos soak are not checked: they wire real parts together on purpose.
 * test/lint/import-rules.test.ts shows a broken rule fails the check.
 */

/** Packages that tie code to AWS, the Lambda runtime or a browser (as named, or as resolved into node_modules). */
const PLATFORM_PACKAGES =
  '(^|node_modules/)(@aws-sdk|@smithy|@aws-lambda-powertools|@types/aws-lambda|aws-lambda|playwright|playwright-core|@sparticuz/chromium)(/|$)';

/**
 * What the CDK app may read from the runtime: the contracts both sides must agree on, nothing that runs.
 * Each is data or a validator; none loads an AWS client, the browser or a handler.
 */
const SHARED_WITH_CDK = [
  // the Lambda functions the workflows call and the policy values set on the ASL: one list for CDK and the local runner
  '^src/workflow/',
  // the configuration schema and its loader: synth refuses a config that the runtime would refuse
  '^src/config/',
  // the site pack the config names is checked against it at synth, with the runtime's own loader
  '^src/sitepack/',
  // the tables with their keys and indexes: one definition for CDK and the local stack
  '^src/adapters/dynamodb/table-definitions\\.ts$',
  // the tenant session policy: one document for the tenant-access role and the sessions the functions assume
  '^src/adapters/tenant-session/policy\\.ts$',
  // metric names the dashboard and alarms query: the same names the handlers emit
  '^src/report/metric-names\\.ts$',
];

export default {
  forbidden: [
    {
      name: 'domain-is-platform-free',
      comment: 'src/domain holds rules without I/O: no AWS SDK, no Lambda types, no Playwright or Chromium.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: PLATFORM_PACKAGES },
    },
    {
      name: 'adapters-do-not-import-app',
      comment: 'src/adapters implement what the app layer asks for; they never call back into it.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/app/' },
    },
    {
      name: 'app-talks-to-ports',
      comment:
        'src/app talks to stores, the mailer and the executions port (src/app/services.ts); the AWS SDK clients live in src/adapters.',
      severity: 'error',
      from: { path: '^src/app/' },
      to: { path: '(^|node_modules/)@aws-sdk/' },
    },
    {
      name: 'app-drives-no-browser',
      comment:
        'src/app decides; src/browser drives the page (reads, steps, write feedback, the settled wait). A page is passed through src/app, never driven there.',
      severity: 'error',
      from: { path: '^src/app/' },
      to: { path: '(^|node_modules/)(playwright|playwright-core)(/|$)' },
    },
    {
      name: 'evidence-boots-no-stack',
      comment:
        "src/evidence reads and seals evidence through the stores it is given; opening a data folder or booting a local stack is the CLI's job (src/cli/data-source.ts).",
      severity: 'error',
      from: { path: '^src/evidence/' },
      to: { path: '^src/(cli|local|embedded)/' },
    },
    {
      name: 'lambdas-only-call-the-app-layer',
      comment: 'A handler in lambdas/ parses, calls the app layer (src/app, with the handler kit) and shapes the output.',
      severity: 'error',
      from: { path: '^lambdas/' },
      to: {
        path: '^(src|lambdas|cdk)/',
        pathNot: [
          '^src/app/',
          // the approval pages' HTTP handler is the app layer of the approval function URL
          '^src/approval-server/function-url\\.ts$',
        ],
      },
    },
    {
      name: 'cdk-reads-only-shared-contracts',
      comment: 'cdk/ deploys the runtime; it reads only the contracts listed in SHARED_WITH_CDK, never runtime internals.',
      severity: 'error',
      from: { path: '^cdk/' },
      to: { path: '^(src|lambdas)/', pathNot: SHARED_WITH_CDK },
    },
    {
      name: 'no-circular',
      comment: 'A cycle makes two modules one; split out what both need. A cycle through type-only imports loads nothing and is allowed.',
      severity: 'error',
      from: { path: '^(src|lambdas|cdk)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    // Type-only imports count: a Lambda type in the domain is what the first rule is about.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test|bench|chaos|cdk\\.out)/' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
