/**
 * Import rules per folder, checked by `npm run depcruise` (part of `npm run lint`, so of `npm test`) over src, lambdas,
 * cdk and the scaffolding (twin, backoffices, planner).
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
  // the ASL loader and walker, the function list and sizing, the tables, the tenant policy, the metric names
  '^src/contracts/',
  // the configuration schema and its loader: synth refuses a config that the runtime would refuse
  '^src/config/',
  // the site pack the config names is checked against it at synth, with the runtime's own loader
  '^src/sitepack/',
];

/**
 * Scaffolding: what runs the product locally or tests it (the AWS twin, the embedded runtime, the test back offices)
 * and the planner, a product of its own. Each part has one entry module, and only the CLI (`demo`, `run`, the data
 * folder, `plan`) may import it.
 */
const SCAFFOLDING = '^(twin|backoffices|planner)/';
const SCAFFOLDING_ENTRY_POINTS = [
  '^twin/runtime/index\\.ts$',
  '^twin/aws/index\\.ts$',
  '^backoffices/simulator/index\\.ts$',
  '^planner/index\\.ts$',
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
      comment: 'src/adapters implement the ports the app layer declares (src/app/ports); they never call back into it.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/app/', pathNot: '^src/app/ports/' },
    },
    {
      name: 'adapters-only-from-the-composition-root',
      comment:
        'Only the composition root (src/composition) builds adapters; everything else gets them as ports (src/app/services.ts, src/app/ports). ' +
        'The AWS twin and the embedded runtime (twin/) are scaffolding that wires real parts on purpose; ' +
        "the planner's DynamoDB task store is that product's own adapter and shares the conditional-write helper.",
      severity: 'error',
      from: { path: '^(src|lambdas|twin|planner)/', pathNot: '^(src/(adapters|composition)|twin|planner/stores)/' },
      to: { path: '^src/adapters/' },
    },
    {
      name: 'ports-only-declare',
      comment:
        'A port (src/app/ports) is an interface and the shapes it carries: it imports the domain and the site-pack types, nothing that runs.',
      severity: 'error',
      from: { path: '^src/app/ports/' },
      to: { path: '^(src|lambdas)/', pathNot: '^src/(domain|sitepack|app/ports)/' },
    },
    {
      name: 'app-does-not-compose',
      comment: 'The app layer is handed its services (services(), or a Services argument); it never builds them.',
      severity: 'error',
      from: { path: '^src/app/' },
      to: { path: '^src/composition/' },
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
        "src/evidence reads and seals evidence through the stores it is given; opening a data folder or booting a local stack (twin/) is the CLI's job (src/cli/data-source.ts).",
      severity: 'error',
      from: { path: '^src/evidence/' },
      to: { path: '^(src/cli|twin)/' },
    },
    {
      name: 'lambdas-only-call-the-app-layer',
      comment:
        'A handler in lambdas/ parses, calls the app layer (src/app, with the handler kit) and shapes the output; ' +
        'it imports the composition root for the Lambda (src/composition/lambda.ts), which builds its services.',
      severity: 'error',
      from: { path: '^lambdas/' },
      to: {
        path: '^(src|lambdas|cdk)/',
        pathNot: [
          '^src/app/',
          '^src/composition/lambda\\.ts$',
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
      name: 'contracts-load-nothing-that-runs',
      comment:
        'src/contracts is what cdk/ may read: data, validators and the ASL reader. It imports only the domain and the config schema, no AWS SDK, Lambda runtime or browser, so reading a contract never loads the runtime.',
      severity: 'error',
      from: { path: '^src/contracts/' },
      to: { path: `^(src|lambdas|cdk)/|${PLATFORM_PACKAGES}`, pathNot: ['^src/(contracts|domain|config)/'] },
    },
    {
      name: 'product-reaches-scaffolding-through-entry-points',
      comment:
        'Product code (src, lambdas, cdk) does not reach into the twin, the back offices or the planner: ' +
        'each has one entry module (SCAFFOLDING_ENTRY_POINTS) and everything else in it is its own business.',
      severity: 'error',
      from: { path: '^(src|lambdas|cdk)/' },
      to: { path: SCAFFOLDING, pathNot: SCAFFOLDING_ENTRY_POINTS },
    },
    {
      name: 'only-the-cli-starts-scaffolding',
      comment:
        'The entry modules of the twin, the back offices and the planner are for the CLI (src/cli: demo, run, the data folder, plan); ' +
        'the handlers, the app layer and the CDK app run without them.',
      severity: 'error',
      from: { path: '^(src|lambdas|cdk)/', pathNot: '^src/cli/' },
      to: { path: SCAFFOLDING },
    },
    {
      name: 'back-offices-share-only-the-kit',
      comment:
        'A back office imports its own folder and backoffices/kit, never another back office (the kit holds what they share), ' +
        'and neither the twin nor the planner: a test back office stands in for a vendor site.',
      severity: 'error',
      from: { path: '^backoffices/([^/]+)/' },
      to: { path: '^(backoffices|twin|planner)/', pathNot: ['^backoffices/$1/', '^backoffices/kit/'] },
    },
    {
      name: 'no-circular',
      comment: 'A cycle makes two modules one; split out what both need. A cycle through type-only imports loads nothing and is allowed.',
      severity: 'error',
      from: { path: '^(src|lambdas|cdk|twin|backoffices|planner)/' },
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
