import { Aws, Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { handlerBundling } from './bundling.js';
import type { FunctionName } from './function-access.js';
import { CONFIG_PATH_IN_LAMBDA } from './runtime-config.js';
import { METRICS_NAMESPACE } from '../../src/contracts/metric-names.js';

/**
 * Sizes, and why (timeouts are per function, in src/contracts/functions.ts):
 * - browser: @sparticuz/chromium asks for >= 1600 MB; memory also buys CPU, which
 *   is what page rendering and screenshots wait on. /tmp holds the inflated Chromium (~200 MB), one user-data-dir
 *   per browser, screenshots and the trace before upload.
 * - everything else talks to DynamoDB, SES or Step Functions only.
 */
export const BROWSER_SIZING = { ephemeralStorage: Size.mebibytes(2048) };
export const DEFAULT_SIZING = { ephemeralStorage: Size.mebibytes(512) };

export interface PaperclipFunctionProps {
  prefix: string;
  name: FunctionName;
  browser: boolean;
  entry: string;
  memoryMb: number;
  /** From src/contracts/functions.ts, the list the local runner enforces the same timeouts from. */
  timeoutSeconds: number;
  logRetention: RetentionDays;
  environment: Record<string, string>;
  /** Generated config.yaml and site-pack.yaml shipped in the bundle. */
  runtimeFilesDir: string;
  /** The repository root: the browser packages are copied from its installed node_modules. */
  projectRoot: string;
  /**
   * X-Ray active tracing. Off for the approval endpoint, whose requests carry
   * signed approval links that have no business in a trace store.
   */
  tracing: boolean;
}

/**
 * Stack traces point at the TypeScript sources (the bundle ships .map files, not the sources), except in the
 * browser functions: there Playwright reads an Error's stack on every call it makes, and mapping each one cost
 * about a tenth of the guarded write's Node CPU (BENCHMARKS.md). Their bundle is not minified instead, so a stack
 * still names functions and lines of readable code; the .map file maps it to the sources afterwards.
 */
const SOURCE_MAPPED_STACKS = (browser: boolean): Record<string, string> => (browser ? {} : { NODE_OPTIONS: '--enable-source-maps' });

/**
 * One handler from lambdas/: its own role (no AWS managed policies: logs only
 * to its own group), its own log group with retention, Powertools settings.
 */
export class PaperclipFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly tracingEnabled: boolean;
  readonly name: FunctionName;

  constructor(scope: Construct, id: string, props: PaperclipFunctionProps) {
    super(scope, id);
    const functionName = `${props.prefix}-${props.name}`;
    const sizing = props.browser ? BROWSER_SIZING : DEFAULT_SIZING;
    this.tracingEnabled = props.tracing;
    this.name = props.name;

    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/lambda/${functionName}`,
      retention: props.logRetention,
      // Its name is fixed (Lambda writes to /aws/lambda/<function>): a retained group would make the next deploy after a
      // teardown fail with "already exists". The record of what was done lives in the audit table and the evidence bucket.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs ${functionName}`,
    });
    this.role.addToPolicy(
      new PolicyStatement({
        sid: 'OwnLogGroupOnly',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );

    this.fn = new NodejsFunction(this, 'Function', {
      functionName,
      entry: props.entry,
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      // The Chromium build in @sparticuz/chromium is x86_64; the rest is plain JavaScript and runs on Graviton.
      architecture: props.browser ? Architecture.X86_64 : Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: Duration.seconds(props.timeoutSeconds),
      ephemeralStorageSize: sizing.ephemeralStorage,
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: ApplicationLogLevel.INFO,
      systemLogLevelV2: SystemLogLevel.WARN,
      tracing: props.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      bundling: handlerBundling({ browser: props.browser, runtimeFilesDir: props.runtimeFilesDir, projectRoot: props.projectRoot }),
      environment: {
        POWERTOOLS_SERVICE_NAME: props.name,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        // Events and responses carry task tokens, page content and approval links.
        POWERTOOLS_LOGGER_LOG_EVENT: 'false',
        // Without active tracing there is no X-Ray daemon to send to: the tracer stays off.
        POWERTOOLS_TRACE_ENABLED: String(props.tracing),
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        POWERTOOLS_TRACER_CAPTURE_ERROR: 'true',
        ...SOURCE_MAPPED_STACKS(props.browser),
        PAPERCLIP_CONFIG: CONFIG_PATH_IN_LAMBDA,
        PAPERCLIP_AWS_REGION: Aws.REGION,
        ...props.environment,
      },
      description: props.browser ? `Paperclip ${props.name} (headless Chromium)` : `Paperclip ${props.name}`,
    });
  }
}
