import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { parse as parseYaml } from 'yaml';
import { TABLES, tableName } from '../../src/contracts/table-definitions.js';
import { WORKFLOW_FUNCTIONS, functionArnVariable, functionTimeouts } from '../../src/contracts/functions.js';
import { sizingOf } from '../../src/contracts/sizing.js';
import { ITEM_METRIC_SERVICES, METRIC_NAMES } from '../../src/contracts/metric-names.js';
import { applySubstitutions, substitutionVariables, type AslMachine } from '../../src/contracts/asl.js';
import { createPaperclipApp, PROJECT_ROOT, SAMPLE_DEPLOY_CONFIG } from '../../cdk/lib/app.js';
import { loadDeploymentConfig } from '../../cdk/config.js';
import { workingBucketName } from '../../src/config/schema.js';
import { BROWSER_NODE_MODULES, CJK_FONT_SOURCE, installedClosure } from '../../cdk/lib/bundling.js';
import { FUNCTION_ACCESS, type FunctionName } from '../../cdk/lib/function-access.js';
import { RATE_DEFINITIONS } from '../../cdk/lib/observability.js';
import type { PaperclipStack } from '../../cdk/lib/paperclip-stack.js';
import {
  assertEveryLambdaTaskRetriesServiceErrors,
  assertRetriesLambdaServiceErrors,
  assertTaskTokenWaitsTimeOut,
  stateNamed,
} from './asl-assertions.js';
import {
  actionsOf,
  actionsOfRole,
  resourcesOf,
  describe as describeValue,
  functionNamed,
  resources,
  resourcesGranted,
  roleLogicalId,
  statementsOfRole,
  type CfnResource,
  type Statement,
} from './template-queries.js';

/**
 * The whole stack, synthesized once for this file from the real handlers in
 * lambdas/ and the real ASL files, with esbuild bundling and cdk-nag, then
 * asserted on.
 */

const deploy = loadDeploymentConfig(SAMPLE_DEPLOY_CONFIG);
const prefix = deploy.prefix;

let outdir: string;
let stack: PaperclipStack;
let template: Template;
let nagViolations: Array<{ ruleName: string; constructs: string[] }>;

const npmEnvironment = { offline: process.env['npm_config_offline'], cache: process.env['npm_config_cache'] };

before(() => {
  outdir = mkdtempSync(join(tmpdir(), 'paperclip-cdk-test-'));
  // Synth must work offline from the installed tree: any npm install it started would fail here (offline, empty cache).
  process.env['npm_config_offline'] = 'true';
  process.env['npm_config_cache'] = join(outdir, 'empty-npm-cache');
  const created = createPaperclipApp({ deployConfigPath: SAMPLE_DEPLOY_CONFIG, outdir });
  stack = created.stack;
  // Listed before synth: synth itself fails on any unacknowledged finding, and this keeps the list readable.
  const report = new AwsSolutionsChecks(created.app).validateScope(created.app);
  nagViolations = report.violations.map((v) => ({
    ruleName: v.ruleName,
    constructs: v.violatingResources.map((r) => r.constructPath ?? r.resourceLogicalId ?? '?'),
  }));
  if (nagViolations.length > 0) return;
  created.app.synth();
  template = Template.fromStack(stack);
});

after(() => {
  for (const [key, value] of [
    ['npm_config_offline', npmEnvironment.offline],
    ['npm_config_cache', npmEnvironment.cache],
  ] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

const physical = (name: string) => `${prefix}-${name}`;
const fn = (name: FunctionName) => functionNamed(template, physical(name))[1];
const roleOf = (name: FunctionName) => roleLogicalId(fn(name));
const logicalIdOf = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as Parameters<PaperclipStack['getLogicalId']>[0]);

const browserNames = WORKFLOW_FUNCTIONS.filter((f) => f.browser).map((f) => f.name);
const allNames: FunctionName[] = [...WORKFLOW_FUNCTIONS.map((f) => f.name), 'approval-http', 'write-digests', 'start-scheduled-batch'];

function assetDirOf(fnResource: CfnResource): string {
  const key = fnResource.Properties['Code'].S3Key as string;
  return join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
}

function directoryBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const path = join(dir, entry.name);
    return sum + (entry.isDirectory() ? directoryBytes(path) : statSync(path).size);
  }, 0);
}

describe('cdk-nag', () => {
  it('AwsSolutions finds nothing that is not acknowledged with a reason', () => {
    assert.deepEqual(nagViolations, []);
  });
});

describe('functions', () => {
  it('runs every handler on nodejs22.x, the browser ones on x86_64 with room for Chromium', () => {
    const functions = resources(template, 'AWS::Lambda::Function');
    assert.equal(functions.length, allNames.length);
    for (const name of allNames) {
      const props = fn(name).Properties;
      assert.equal(props['Runtime'], 'nodejs22.x', name);
      assert.equal(props['Handler'], 'index.handler', name);
      if ((browserNames as string[]).includes(name)) {
        assert.deepEqual(props['Architectures'], ['x86_64'], name);
        assert.ok(props['MemorySize'] >= 2048 && props['MemorySize'] <= 3008, `${name} memory ${props['MemorySize']}`);
        // Up to Lambda's maximum: ReadList of a 10,000-row list paged by load more is sized at it (docs/deploy.md).
        assert.ok(props['Timeout'] >= 120 && props['Timeout'] <= 900, `${name} timeout ${props['Timeout']}`);
        assert.ok(props['EphemeralStorage'].Size >= 1024 && props['EphemeralStorage'].Size <= 2048, `${name} /tmp`);
      }
      // Both numbers from the measured sizing (docs/deploy.md), the timeout the same the local runner enforces.
      const size = sizingOf(name);
      assert.equal(props['MemorySize'], size.memoryMb, `${name} memory`);
      assert.equal(props['Timeout'], size.timeoutSeconds, `${name} timeout`);
      const spec = WORKFLOW_FUNCTIONS.find((f) => f.name === name);
      if (spec)
        assert.equal(props['Timeout'], functionTimeouts(prefix)[physical(spec.name)], `${name}: the timeout the local runner enforces`);
    }
  });

  it('gives every function Powertools settings and the packaged config path', () => {
    for (const name of allNames) {
      const env = fn(name).Properties['Environment'].Variables as Record<string, unknown>;
      assert.equal(env['POWERTOOLS_SERVICE_NAME'], name);
      assert.equal(env['POWERTOOLS_METRICS_NAMESPACE'], 'Paperclip');
      assert.equal(env['POWERTOOLS_LOGGER_LOG_EVENT'], 'false', 'events carry task tokens and page content');
      assert.equal(env['POWERTOOLS_TRACER_CAPTURE_RESPONSE'], 'false');
      assert.equal(env['PAPERCLIP_CONFIG'], '/var/task/paperclip/config.yaml');
    }
  });

  it('maps stack traces to the sources except in the browser functions, where Playwright reads a stack on every call', () => {
    for (const name of allNames) {
      const env = fn(name).Properties['Environment'].Variables as Record<string, unknown>;
      const browser = (browserNames as string[]).includes(name);
      assert.equal(env['NODE_OPTIONS'], browser ? undefined : '--enable-source-maps', name);
    }
    const bundle = readFileSync(join(assetDirOf(fn('browser-write')), 'index.mjs'), 'utf8');
    assert.match(bundle, /\nasync function browserWrite\(/, 'the browser bundle keeps readable function names and lines');
  });

  it('sends every function and workflow to its own log group with a retention', () => {
    const logGroups = Object.fromEntries(resources(template, 'AWS::Logs::LogGroup'));
    for (const [, group] of Object.entries(logGroups)) {
      assert.equal(group.Properties['RetentionInDays'], deploy.logRetentionDays);
    }
    for (const name of allNames) {
      const ref = fn(name).Properties['LoggingConfig'].LogGroup.Ref as string;
      assert.equal(logGroups[ref]?.Properties['LogGroupName'], `/aws/lambda/${physical(name)}`);
      const logStatements = statementsOfRole(template, roleOf(name)).filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
      assert.deepEqual(
        logStatements.flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource])).map(describeValue),
        [`GetAtt:${ref}.Arn`],
        `${name} writes logs to its own group only`,
      );
    }
    for (const [, machine] of resources(template, 'AWS::StepFunctions::StateMachine')) {
      const destination = machine.Properties['LoggingConfiguration'].Destinations[0].CloudWatchLogsLogGroup.LogGroupArn;
      const ref = destination['Fn::GetAtt'][0] as string;
      assert.ok(logGroups[ref], 'state machine log group is defined in the stack with a retention');
    }
    for (const [, role] of resources(template, 'AWS::IAM::Role')) {
      assert.equal(role.Properties['ManagedPolicyArns'], undefined, 'no AWS managed policies on any role');
    }
  });

  it('ships Chromium, playwright-core and the CJK font with each browser function, inside the 250 MB limit', () => {
    const fontBytes = statSync(join(PROJECT_ROOT, CJK_FONT_SOURCE)).size;
    for (const name of browserNames) {
      const dir = assetDirOf(fn(name));
      assert.ok(existsSync(join(dir, 'index.mjs')), `${name} bundle is ESM`);
      for (const file of ['chromium.br', 'fonts.tar.br', 'al2023.tar.br', 'swiftshader.tar.br']) {
        assert.ok(existsSync(join(dir, 'node_modules', '@sparticuz', 'chromium', 'bin', file)), `${name} ships bin/${file}`);
      }
      assert.ok(existsSync(join(dir, 'node_modules', 'playwright-core', 'package.json')), `${name} ships playwright-core`);
      // Chromium unpacks its archives with tar-fs at cold start: its dependencies are copied from the installed tree too.
      for (const dependency of installedClosure(PROJECT_ROOT, BROWSER_NODE_MODULES)) {
        assert.ok(existsSync(join(dir, dependency, 'package.json')), `${name} ships ${dependency}`);
      }
      assert.equal(statSync(join(dir, 'fonts', 'NotoSansSC-Regular.ttf')).size, fontBytes, `${name} ships the CJK font at /var/task/fonts`);
      const bytes = directoryBytes(dir);
      assert.ok(bytes < 250 * 1024 * 1024, `${name} unzipped ${bytes} bytes`);
      process.stderr.write(`bundle ${name}: ${(bytes / 1024 / 1024).toFixed(1)} MiB unzipped\n`);
    }
  });

  it('bundles the other functions without a browser: no node_modules, no Chromium', () => {
    for (const name of allNames.filter((n) => !(browserNames as string[]).includes(n))) {
      const dir = assetDirOf(fn(name));
      assert.ok(existsSync(join(dir, 'index.mjs')), `${name} bundle is ESM`);
      assert.equal(existsSync(join(dir, 'node_modules')), false, `${name} has no node_modules`);
      assert.equal(existsSync(join(dir, 'fonts')), false, `${name} has no fonts`);
      const bytes = directoryBytes(dir);
      assert.ok(bytes < 20 * 1024 * 1024, `${name} unzipped ${bytes} bytes`);
      process.stderr.write(`bundle ${name}: ${(bytes / 1024 / 1024).toFixed(1)} MiB unzipped\n`);
    }
  });

  it('packages the runtime config with Secrets Manager credentials only, never a password', () => {
    const dir = assetDirOf(fn('browser-write'));
    const text = readFileSync(join(dir, 'paperclip', 'config.yaml'), 'utf8');
    const packaged = parseYaml(text) as Record<string, any>;
    assert.equal(packaged['environment'], 'aws');
    assert.equal(packaged['prefix'], prefix);
    assert.equal(packaged['vendor'].site_pack, '/var/task/paperclip/site-pack.yaml');
    assert.equal(packaged['evidence'].bucket, deploy.evidence.bucketName);
    for (const identity of packaged['identities'] as Array<{ id: string; credentials: Record<string, string> }>) {
      assert.deepEqual(identity.credentials, { source: 'secrets_manager', secret_id: `${prefix}/identity/${identity.id}` });
    }
    assert.deepEqual(packaged['approvals'].signing_secret, { source: 'secrets_manager', secret_id: `${prefix}/approval-signing-key` });
    assert.doesNotMatch(text, /password|api_token|inline/);
    assert.ok(existsSync(join(dir, 'paperclip', 'site-pack.yaml')));
  });
});

describe('least privilege', () => {
  const tableArn = (id: string) => `GetAtt:${logicalIdOf(stack.tables.byId[id as keyof typeof stack.tables.byId])}.Arn`;

  it('gives each function exactly the table actions its access row lists, and never Scan or Delete', () => {
    for (const name of allNames) {
      const statements = statementsOfRole(template, roleOf(name));
      const granted = new Map<string, Set<string>>();
      for (const statement of statements) {
        for (const action of actionsOf(statement).filter((a) => a.startsWith('dynamodb:'))) {
          for (const resource of (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]).map(describeValue)) {
            const set = granted.get(resource) ?? new Set();
            set.add(action);
            granted.set(resource, set);
          }
        }
      }
      const expected = new Map<string, Set<string>>();
      for (const [id, access] of Object.entries(FUNCTION_ACCESS[name].tables)) {
        if (access!.actions.length > 0) expected.set(tableArn(id), new Set(access!.actions));
        for (const index of access!.indexes ?? []) expected.set(`${tableArn(id)}/index/${index}`, new Set(access!.actions));
        for (const index of access!.queriesIndexes ?? []) expected.set(`${tableArn(id)}/index/${index}`, new Set(['dynamodb:Query']));
      }
      assert.deepEqual(
        Object.fromEntries([...granted].map(([k, v]) => [k, [...v].sort()])),
        Object.fromEntries([...expected].map(([k, v]) => [k, [...v].sort()])),
        name,
      );
      const actions = actionsOfRole(template, roleOf(name));
      assert.ok(!actions.some((a) => /dynamodb:(Scan|DeleteItem|BatchWriteItem|\*)/.test(a)), `${name}: ${actions}`);
      assert.ok(!actions.some((a) => a.endsWith(':*') || a === '*'), `${name} has a wildcard action`);
    }
  });

  it('uses "*" as a resource only for X-Ray, which has no resource-level permissions', () => {
    for (const name of allNames) {
      const starred = statementsOfRole(template, roleOf(name)).filter((s) => s.Resource === '*');
      assert.deepEqual(
        [...new Set(starred.flatMap(actionsOf))].sort(),
        name === 'approval-http' ? [] : ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
        name,
      );
    }
  });

  it('claim: assumes the tenant-access role and holds no table, bucket or secret grant of its own', () => {
    const actions = actionsOfRole(template, roleOf('claim'));
    assert.deepEqual(
      actions.filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:')),
      ['sts:AssumeRole', 'sts:TagSession'],
    );
  });

  it('approval-http: answers task tokens and verifies links on its own role; the approval and its screenshot only through the tenant session', () => {
    const actions = actionsOfRole(template, roleOf('approval-http'));
    assert.deepEqual(
      actions.filter((a) => a.startsWith('states:')),
      ['states:SendTaskFailure', 'states:SendTaskSuccess'],
    );
    const answerable = resourcesGranted(template, roleOf('approval-http'), 'states:SendTaskSuccess');
    assert.equal(answerable.length, 1);
    assert.match(answerable[0]!, new RegExp(`:states:.*:stateMachine:${physical('guarded-write')}$`));
    assert.deepEqual(resourcesGranted(template, roleOf('approval-http'), 's3:GetObject'), []);
    assert.ok(!actions.some((a) => a.startsWith('dynamodb:')), `${actions}`);
    assert.deepEqual(resourcesGranted(template, roleOf('approval-http'), 'secretsmanager:GetSecretValue'), [
      `Ref:${logicalIdOf(stack.secrets.approvalSigningKey)}`,
    ]);
    assert.ok(!actions.some((a) => ['s3:PutObject', 'ses:SendEmail', 'lambda:InvokeFunction', 'states:StartExecution'].includes(a)));
  });

  it('no function role reads an identity secret (only tenant sessions do), and only the approval pair reads the signing key', () => {
    const identitySecrets = [...stack.secrets.identities.values()].map((s) => `Ref:${logicalIdOf(s)}`).sort();
    const signingKey = `Ref:${logicalIdOf(stack.secrets.approvalSigningKey)}`;
    const readers = (secret: string) =>
      allNames.filter((name) => resourcesGranted(template, roleOf(name), 'secretsmanager:GetSecretValue').includes(secret)).sort();
    for (const secret of identitySecrets) assert.deepEqual(readers(secret), []);
    for (const name of allNames) {
      const granted = resourcesGranted(template, roleOf(name), 'secretsmanager:GetSecretValue');
      assert.ok(!granted.some((arn) => arn.includes('/identity/')), `${name} reads an identity secret: ${granted}`);
    }
    assert.deepEqual(readers(signingKey), ['approval-http', 'request-approval']);
    // Requester attestations: the entry points that make them (batch items, compensations, the schedules) and routing, which checks them.
    assert.deepEqual(readers(`Ref:${logicalIdOf(stack.secrets.requesterAttestationKey)}`), [
      'compensate',
      'read-list',
      'start-scheduled-batch',
      'validate-route',
    ]);
    assert.equal(identitySecrets.length, stack.secrets.identities.size);
    for (const [, secret] of resources(template, 'AWS::SecretsManager::Secret')) {
      assert.match(
        secret.Properties['Name'],
        new RegExp(`^${prefix}/(identity/[a-z0-9-]+|approval-signing-key|requester-attestation-key)$`),
      );
    }
  });

  it('only request-approval, takeover, summarize-batch (a failed summary) and validate-route (session lost at routing) send mail, from the sender', () => {
    const senders = allNames.filter((name) => actionsOfRole(template, roleOf(name)).includes('ses:SendEmail'));
    assert.deepEqual(senders.sort(), ['request-approval', 'summarize-batch', 'takeover', 'validate-route']);
    for (const name of senders) {
      const statement = statementsOfRole(template, roleOf(name)).find((s) => actionsOf(s).includes('ses:SendEmail'))!;
      assert.deepEqual(statement.Condition, { StringEquals: { 'ses:FromAddress': deploy.email.senderAddress } });
    }
  });

  it('lets functions write only under evidence/, anchors/ and digests/, read only where they build pages, seals and digests, and delete nothing', () => {
    const bucket = `GetAtt:${logicalIdOf(stack.evidence.bucket)}.Arn`;
    const writers: string[] = [];
    const folderReaders: string[] = [];
    for (const name of allNames) {
      const s3 = actionsOfRole(template, roleOf(name)).filter((a) => a.startsWith('s3:'));
      if (s3.includes('s3:PutObject')) {
        writers.push(name);
        // The digest function puts digests and nothing else.
        assert.deepEqual(resourcesGranted(template, roleOf(name), 's3:PutObject').sort(), [`${bucket}/digests/*`], name);
      }
      if (s3.includes('s3:ListBucket')) {
        folderReaders.push(name);
        const lists = statementsOfRole(template, roleOf(name)).filter((s) => actionsOf(s).includes('s3:ListBucket'));
        assert.deepEqual(
          lists.map((l) => l.Condition),
          [{ StringLike: { 's3:prefix': ['anchors/*', 'digests/*'] } }],
          `${name} lists anchors/ and digests/ only`,
        );
        assert.deepEqual(
          resourcesGranted(template, roleOf(name), 's3:GetObject').sort(),
          [`${bucket}/anchors/*`, `${bucket}/digests/*`].sort(),
          name,
        );
      }
      assert.ok(!s3.some((a) => /s3:(Delete|PutObjectRetention|PutObjectLegalHold|BypassGovernance|PutBucket)/.test(a)), `${name}: ${s3}`);
    }
    // Every other function reaches evidence, anchors and batch results only through the tenant session (see tenant isolation).
    assert.deepEqual(writers.sort(), ['write-digests']);
    assert.deepEqual(folderReaders.sort(), ['write-digests']);
    for (const name of [
      'complete',
      'takeover',
      'summarize-batch',
      'approval-http',
      'claim',
      'validate-route',
      'request-approval',
      'compensate',
      'read-list',
      'snapshot',
      'browser-write',
      'readback',
    ] as const) {
      assert.ok(!actionsOfRole(template, roleOf(name)).some((a) => a.startsWith('s3:')), `${name} has no S3 access`);
    }
  });

  it('compensation only opens and closes the compensation: no Step Functions access, no browser, small memory and a short timeout', () => {
    const actions = actionsOfRole(template, roleOf('compensate')).filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'));
    // It attests the inverse's requester for the execution RunInverse starts, so it reads that key; the item through the tenant session.
    assert.deepEqual(actions, ['secretsmanager:GetSecretValue', 'sts:AssumeRole', 'sts:TagSession']);
    const compensate = fn('compensate').Properties;
    assert.equal(compensate['Environment'].Variables['PAPERCLIP_GUARDED_WRITE_ARN'], undefined);
    assert.equal(compensate['MemorySize'], 256);
    assert.ok(compensate['Timeout'] <= 30, `${compensate['Timeout']} s`);
  });
});

describe('daily digests', () => {
  it('are signed with an ECC P-256 key whose policy lets only the digest function sign and the auditor read the public key', () => {
    const [, key] = resources(template, 'AWS::KMS::Key').find(([id]) => id === logicalIdOf(stack.digests.key))!;
    assert.equal(key.Properties['KeySpec'], 'ECC_NIST_P256');
    assert.equal(key.Properties['KeyUsage'], 'SIGN_VERIFY');
    assert.equal(key.DeletionPolicy, 'Retain');
    const statements = key.Properties['KeyPolicy'].Statement as Statement[];
    const signers = statements.filter((st) => actionsOf(st).some((a) => a === 'kms:Sign' || a === 'kms:*'));
    assert.equal(signers.length, 1, 'one statement grants kms:Sign');
    assert.equal(describeValue((signers[0]!.Principal as { AWS?: unknown })?.AWS), `GetAtt:${roleOf('write-digests')}.Arn`);
    const admin = statements.find((st) => st.Sid === 'AccountAdministersTheKeyButDoesNotSign')!;
    assert.ok(
      !actionsOf(admin).some((a) => a === 'kms:*' || a.startsWith('kms:Sign')),
      'the account administers the key but does not sign',
    );
    const reader = statements.find((st) => actionsOf(st).includes('kms:GetPublicKey') && st.Sid === 'AuditorReadsThePublicKey')!;
    assert.equal(describeValue((reader.Principal as { AWS?: unknown })?.AWS), `GetAtt:${logicalIdOf(stack.auditor.role)}.Arn`);
    // No other role's own policy holds kms:Sign either.
    for (const name of allNames) {
      const signs = actionsOfRole(template, roleOf(name)).includes('kms:Sign');
      assert.equal(signs, name === 'write-digests', `${name} ${signs ? 'may' : 'may not'} sign`);
    }
    const env = fn('write-digests').Properties['Environment'].Variables as Record<string, unknown>;
    assert.equal(describeValue(env['PAPERCLIP_DIGEST_KEY_ID']), `GetAtt:${logicalIdOf(stack.digests.key)}.Arn`);
  });

  it('are written every hour by an EventBridge rule that invokes the digest function', () => {
    const [, rule] = resources(template, 'AWS::Events::Rule').find(([id]) => id === logicalIdOf(stack.digests.rule))!;
    assert.equal(rule.Properties['ScheduleExpression'], 'rate(1 hour)');
    const [target] = rule.Properties['Targets'] as Array<{ Arn: unknown; RetryPolicy?: { MaximumRetryAttempts?: number } }>;
    assert.equal(describeValue(target!.Arn), `GetAtt:${functionNamed(template, physical('write-digests'))[0]}.Arn`);
    assert.equal(target!.RetryPolicy?.MaximumRetryAttempts, 2);
  });
});

describe('tenant isolation in IAM', () => {
  const tenantNames = allNames.filter((name) => FUNCTION_ACCESS[name].actsForTenant).sort();
  const tenantRole = () => logicalIdOf(stack.tenantAccess.role);
  const tenantStatements = () => statementsOfRole(template, tenantRole());
  const statement = (sid: string) => {
    const found = tenantStatements().find((s) => s.Sid === sid);
    assert.ok(found, `the tenant-access role has a ${sid} statement`);
    return found;
  };
  const tableArn = (id: string) => `GetAtt:${logicalIdOf(stack.tables.byId[id as keyof typeof stack.tables.byId])}.Arn`;
  const ownKeys = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['k-${aws:PrincipalTag/tenant}_*'] } };

  it('every function but the digest writer acts for a tenant, and holds on its own role only what is not tenant data', () => {
    assert.deepEqual(tenantNames, [
      'approval-http',
      'browser-write',
      'claim',
      'compensate',
      'complete',
      'read-list',
      'readback',
      'request-approval',
      'snapshot',
      'summarize-batch',
      'takeover',
      'validate-route',
    ]);
    const sts = ['sts:AssumeRole', 'sts:TagSession'];
    const secret = 'secretsmanager:GetSecretValue';
    const mail = 'ses:SendEmail';
    const expected: Record<string, string[]> = {
      'read-list': [secret, ...sts],
      'validate-route': [secret, mail, ...sts],
      compensate: [secret, ...sts],
      'request-approval': [secret, mail, ...sts],
      'approval-http': [secret, 'states:SendTaskFailure', 'states:SendTaskSuccess', ...sts],
      takeover: [mail, ...sts],
      'summarize-batch': [mail, ...sts],
    };
    for (const name of tenantNames) {
      const own = actionsOfRole(template, roleOf(name)).filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'));
      assert.deepEqual(own, expected[name] ?? sts, name);
      assert.deepEqual(resourcesGranted(template, roleOf(name), 'sts:AssumeRole'), [`GetAtt:${tenantRole()}.Arn`], name);
      const env = fn(name).Properties['Environment'].Variables;
      assert.equal(describeValue(env['PAPERCLIP_TENANT_ROLE_ARN']), `GetAtt:${tenantRole()}.Arn`, name);
    }
  });

  it("confines claims, audit chains and approvals (with the byKey index the write proves its approval through) to the tenant's keys", () => {
    const claims = statement('OwnClaims');
    assert.deepEqual(resourcesOf(claims).map(describeValue), [tableArn('claims')]);
    assert.deepEqual(claims.Condition, ownKeys);
    const audit = statement('OwnAuditChains');
    assert.deepEqual(resourcesOf(audit).map(describeValue), [tableArn('audit')]);
    assert.deepEqual(actionsOf(audit).sort(), ['dynamodb:PutItem', 'dynamodb:Query']);
    // Item chains, and the tenant's batch seal chains (batch:<tenant>:<taskId>; tenant ids hold no `:`).
    const auditKeys = {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['k-${aws:PrincipalTag/tenant}_*', 'batch:${aws:PrincipalTag/tenant}:*'] },
    };
    assert.deepEqual(audit.Condition, auditKeys);
    const approvals = statement('OwnApprovals');
    assert.deepEqual(resourcesOf(approvals).map(describeValue), [tableArn('approvals'), `${tableArn('approvals')}/index/byKey`]);
    assert.deepEqual(approvals.Condition, ownKeys);
    const takeovers = statement('OwnTakeovers');
    assert.deepEqual(resourcesOf(takeovers).map(describeValue), [tableArn('takeover')]);
    assert.deepEqual(takeovers.Condition, ownKeys);
    // A task's claims: Query on the tenant-keyed index only, its partition key the tagged tenant itself.
    const taskClaims = statement('OwnTaskClaims');
    assert.deepEqual(resourcesOf(taskClaims).map(describeValue), [`${tableArn('claims')}/index/byTenantTask`]);
    assert.deepEqual(actionsOf(taskClaims), ['dynamodb:Query']);
    const tenantItself = { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['${aws:PrincipalTag/tenant}'] } };
    assert.deepEqual(taskClaims.Condition, tenantItself);
    // Every DynamoDB grant of the role carries a tenant condition, and none reaches the planner table.
    for (const s of tenantStatements().filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')))) {
      assert.deepEqual(s.Condition, s.Sid === 'OwnAuditChains' ? auditKeys : s.Sid === 'OwnTaskClaims' ? tenantItself : ownKeys, s.Sid);
      assert.ok(!actionsOf(s).some((a) => /Scan|Delete|BatchWrite/.test(a)), s.Sid);
      assert.ok(
        !resourcesOf(s)
          .map(describeValue)
          .some((r) => r.startsWith(tableArn('planner-tasks'))),
        s.Sid,
      );
    }
  });

  it("reads only the tagged identity's secret and writes only under the tagged tenant's evidence prefix", () => {
    const secret = statement('OwnIdentitySecret');
    assert.deepEqual(resourcesOf(secret).map(describeValue), [
      `arn:Ref:AWS::Partition:secretsmanager:Ref:AWS::Region:Ref:AWS::AccountId:secret:${prefix}/identity/\${aws:PrincipalTag/identity}-??????`,
    ]);
    const bucket = `GetAtt:${logicalIdOf(stack.evidence.bucket)}.Arn`;
    assert.deepEqual(resourcesOf(statement('OwnEvidence')).map(describeValue), [`${bucket}/evidence/\${aws:PrincipalTag/tenant}/*`]);
    // Item lists go to the unlocked working bucket, never into the locked evidence bucket.
    assert.deepEqual(resourcesOf(statement('OwnBatchItems')).map(describeValue), [
      `GetAtt:${logicalIdOf(stack.working.bucket)}.Arn/runs/\${aws:PrincipalTag/tenant}/*/items.json`,
    ]);
    assert.deepEqual(statement('ListOwnEvidence').Condition, { StringLike: { 's3:prefix': ['evidence/${aws:PrincipalTag/tenant}/*'] } });
    assert.deepEqual(resourcesOf(statement('OwnSealAnchors')).map(describeValue), [`${bucket}/anchors/\${aws:PrincipalTag/tenant}/*`]);
    assert.deepEqual(actionsOf(statement('OwnSealAnchors')), ['s3:PutObject']);
    assert.deepEqual(resourcesOf(statement('OwnBatchResults')).map(describeValue), [
      `GetAtt:${logicalIdOf(stack.working.bucket)}.Arn/runs/\${aws:PrincipalTag/tenant}/*/results/*`,
    ]);
    for (const s of tenantStatements()) assert.notEqual(s.Resource, '*', `${s.Sid} names its resources`);
  });

  it('is assumed and tagged only by the roles of the functions that act for a tenant, with a tenant tag and at most an identity tag', () => {
    const trust = template.findResources('AWS::IAM::Role')[tenantRole()]!['Properties']['AssumeRolePolicyDocument']
      .Statement as Statement[];
    assert.equal(trust.length, 1);
    assert.deepEqual(actionsOf(trust[0]!).sort(), ['sts:AssumeRole', 'sts:TagSession']);
    const condition = trust[0]!.Condition as Record<string, Record<string, unknown>>;
    assert.deepEqual(condition['StringLike'], { 'aws:RequestTag/tenant': '?*' });
    assert.deepEqual(condition['StringLikeIfExists'], { 'aws:RequestTag/identity': '?*' });
    assert.deepEqual(condition['ForAllValues:StringEquals'], { 'aws:TagKeys': ['tenant', 'identity'] });
    const admitted = (condition['ArnEquals']!['aws:PrincipalArn'] as unknown[]).map(describeValue).sort();
    assert.deepEqual(admitted, tenantNames.map((name) => `GetAtt:${roleOf(name)}.Arn`).sort());
    assert.deepEqual(Object.keys(condition).sort(), ['ArnEquals', 'ForAllValues:StringEquals', 'StringLike', 'StringLikeIfExists']);
  });
});

describe('teardown and redeploy', () => {
  /** Physical-name properties by resource type: a resource that sets one and is retained blocks the next deploy. */
  const NAME_PROPERTIES: Record<string, string> = {
    'AWS::DynamoDB::Table': 'TableName',
    'AWS::S3::Bucket': 'BucketName',
    'AWS::Logs::LogGroup': 'LogGroupName',
    'AWS::SecretsManager::Secret': 'Name',
    'AWS::SNS::Topic': 'TopicName',
    'AWS::StepFunctions::StateMachine': 'StateMachineName',
    'AWS::Lambda::Function': 'FunctionName',
  };

  it('retains the record (tables, evidence bucket) and the working bucket under fixed names, as docs/deploy.md lists; nothing else', () => {
    const retainedByName: string[] = [];
    for (const [type, property] of Object.entries(NAME_PROPERTIES)) {
      for (const [, resource] of resources(template, type)) {
        if (resource.Properties[property] === undefined || resource.DeletionPolicy !== 'Retain') continue;
        retainedByName.push(`${type} ${describeValue(resource.Properties[property])}`);
      }
    }
    const expected = [
      ...TABLES.map((t) => `AWS::DynamoDB::Table ${tableName(prefix, t.id)}`),
      `AWS::S3::Bucket ${deploy.evidence.bucketName}`,
      `AWS::S3::Bucket ${workingBucketName({ bucket: deploy.evidence.bucketName, working_bucket: deploy.evidence.workingBucketName })}`,
    ].sort();
    assert.deepEqual(retainedByName.sort(), expected);
    const docs = readFileSync(join(PROJECT_ROOT, 'docs', 'deploy.md'), 'utf8');
    const section = docs.slice(docs.indexOf('## Teardown and redeploy'));
    for (const name of ['`<prefix>-<table>`', '`evidence.bucketName`', '`evidence.workingBucketName`', 'identity secrets', 'log groups']) {
      assert.ok(section.includes(name), `docs/deploy.md "Teardown and redeploy" covers ${name}`);
    }
  });

  const teardownSection = () => {
    const docs = readFileSync(join(PROJECT_ROOT, 'docs', 'deploy.md'), 'utf8');
    const start = docs.indexOf('## Teardown and redeploy');
    return docs.slice(start, docs.indexOf('\n## ', start + 1));
  };

  it('keeps nothing else when the stack is deleted: every retained resource is one the teardown procedure names', () => {
    const retained = Object.entries(template.toJSON()['Resources'] as Record<string, CfnResource>)
      .filter(([, r]) => r.DeletionPolicy === 'Retain')
      .map(([id, r]) => `${r.Type} ${id}`);
    const expected = [
      ...TABLES.map((t) => `AWS::DynamoDB::Table ${logicalIdOf(stack.tables.byId[t.id])}`),
      `AWS::S3::Bucket ${logicalIdOf(stack.evidence.bucket)}`,
      `AWS::KMS::Key ${logicalIdOf(stack.evidence.key)}`,
      `AWS::KMS::Key ${logicalIdOf(stack.digests.key)}`,
      `AWS::S3::Bucket ${logicalIdOf(stack.evidence.accessLogs)}`,
      `AWS::S3::Bucket ${logicalIdOf(stack.working.bucket)}`,
      ...(stack.approverSignIn ? [`AWS::Cognito::UserPool ${logicalIdOf(stack.approverSignIn.userPool)}`] : []),
    ].sort();
    assert.deepEqual(retained.sort(), expected);
    const section = teardownSection();
    for (const what of ['DynamoDB tables', 'evidence bucket', 'working bucket', 'KMS key', 'access-log bucket', 'user pool']) {
      assert.ok(section.includes(what), `docs/deploy.md "Teardown and redeploy" says what happens to the ${what}`);
    }
  });

  it('documents the removal of every fixed-name secret, whose name stays taken for its recovery window', () => {
    const section = teardownSection();
    const names = resources(template, 'AWS::SecretsManager::Secret').map(([, r]) => describeValue(r.Properties['Name']));
    assert.ok(names.length > 0);
    const documented = [...section.matchAll(/`(<prefix>\/[^`]+)`/g)].map((m) => m[1]!);
    for (const name of names) {
      const pattern = documented.find((d) =>
        new RegExp(`^${d.replace('<prefix>', prefix).replace(/<[a-z]+>/g, '[a-z0-9-]+')}$`).test(name),
      );
      assert.ok(pattern, `secret ${name} is named in docs/deploy.md "Teardown and redeploy" (documented: ${documented.join(', ')})`);
    }
    assert.match(section, /--force-delete-without-recovery/);
    assert.match(section, /restore-secret/);
  });

  it('deletes the fixed-name log groups with the stack, so a redeploy can create them again', () => {
    for (const [, group] of resources(template, 'AWS::Logs::LogGroup')) {
      if (group.Properties['LogGroupName'] === undefined) continue;
      assert.equal(group.DeletionPolicy, 'Delete', describeValue(group.Properties['LogGroupName']));
    }
  });
});

describe('working bucket', () => {
  const working = () => template.findResources('AWS::S3::Bucket')[logicalIdOf(stack.working.bucket)] as CfnResource;

  it('holds the runs/ working files apart from the evidence: not versioned, not locked, emptied by a lifecycle rule', () => {
    const bucket = working();
    assert.equal(
      bucket.Properties['BucketName'],
      workingBucketName({ bucket: deploy.evidence.bucketName, working_bucket: deploy.evidence.workingBucketName }),
    );
    assert.notEqual(bucket.Properties['BucketName'], deploy.evidence.bucketName);
    assert.equal(bucket.Properties['ObjectLockEnabled'], undefined);
    assert.equal(bucket.Properties['ObjectLockConfiguration'], undefined);
    assert.equal(bucket.Properties['VersioningConfiguration'], undefined);
    const rules = bucket.Properties['LifecycleConfiguration'].Rules as Array<Record<string, any>>;
    assert.deepEqual(
      rules.map((r) => [r['Id'], r['ExpirationInDays'], r['Status']]),
      [['expire-working-files', deploy.evidence.workingFilesExpireDays, 'Enabled']],
    );
    const sse = bucket.Properties['BucketEncryption'].ServerSideEncryptionConfiguration[0];
    assert.equal(describeValue(sse.ServerSideEncryptionByDefault.KMSMasterKeyID), `GetAtt:${logicalIdOf(stack.evidence.key)}.Arn`);
    assert.deepEqual(bucket.Properties['PublicAccessBlockConfiguration'], {
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
  });

  it('is where the deployed config sends the batch working files, and nothing grants runs/ in the evidence bucket', () => {
    const dir = assetDirOf(fn('read-list'));
    const packaged = parseYaml(readFileSync(join(dir, 'paperclip', 'config.yaml'), 'utf8')) as { evidence: Record<string, string> };
    assert.equal(packaged.evidence['working_bucket'], working().Properties['BucketName']);
    const evidenceArn = `GetAtt:${logicalIdOf(stack.evidence.bucket)}.Arn`;
    for (const [, role] of resources(template, 'AWS::IAM::Policy')) {
      const granted = JSON.stringify(role.Properties['PolicyDocument']);
      assert.ok(!granted.includes(`"${logicalIdOf(stack.evidence.bucket)}","Arn"]},"/runs/`), `${evidenceArn}/runs/ granted`);
    }
  });
});

describe('evidence bucket', () => {
  const bucketResource = () => template.findResources('AWS::S3::Bucket')[logicalIdOf(stack.evidence.bucket)] as CfnResource;
  const logBucketId = () => logicalIdOf(stack.evidence.accessLogs);

  it('is versioned, Object Locked with the configured default retention, and kept on stack deletion', () => {
    const bucket = bucketResource();
    assert.equal(bucket.Properties['BucketName'], deploy.evidence.bucketName);
    assert.deepEqual(bucket.Properties['VersioningConfiguration'], { Status: 'Enabled' });
    assert.equal(bucket.Properties['ObjectLockEnabled'], true);
    assert.deepEqual(bucket.Properties['ObjectLockConfiguration'], {
      ObjectLockEnabled: 'Enabled',
      Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: deploy.evidence.retentionDays } },
    });
    assert.equal(bucket.DeletionPolicy, 'Retain');
  });

  it('is encrypted with a rotating customer key, blocks public access, and logs access to a separate bucket', () => {
    const bucket = bucketResource();
    const sse = bucket.Properties['BucketEncryption'].ServerSideEncryptionConfiguration[0];
    assert.equal(sse.ServerSideEncryptionByDefault.SSEAlgorithm, 'aws:kms');
    assert.equal(describeValue(sse.ServerSideEncryptionByDefault.KMSMasterKeyID), `GetAtt:${logicalIdOf(stack.evidence.key)}.Arn`);
    assert.equal(sse.BucketKeyEnabled, true);
    const key = template.findResources('AWS::KMS::Key')[logicalIdOf(stack.evidence.key)] as CfnResource;
    assert.equal(key.Properties['EnableKeyRotation'], true);
    assert.equal(key.DeletionPolicy, 'Retain');
    const blockAll = { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true };
    assert.deepEqual(bucket.Properties['PublicAccessBlockConfiguration'], blockAll);
    assert.equal(describeValue(bucket.Properties['LoggingConfiguration'].DestinationBucketName), `Ref:${logBucketId()}`);

    const logs = template.findResources('AWS::S3::Bucket')[logBucketId()] as CfnResource;
    assert.equal(logs.Properties['ObjectLockEnabled'], undefined, 'the log bucket is not Object Locked (S3 cannot deliver logs to one)');
    assert.equal(
      logs.Properties['BucketEncryption'].ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm,
      'AES256',
    );
    assert.deepEqual(logs.Properties['PublicAccessBlockConfiguration'], blockAll);
  });

  it('keeps the auditor able to decrypt through the key policy itself', () => {
    const key = template.findResources('AWS::KMS::Key')[logicalIdOf(stack.evidence.key)] as CfnResource;
    const auditor = `GetAtt:${logicalIdOf(stack.auditor.role)}.Arn`;
    const statement = (key.Properties['KeyPolicy'].Statement as Statement[]).find((s) => s.Sid === 'AuditorDecryptsEvidenceThroughS3');
    assert.ok(statement);
    assert.equal(describeValue((statement.Principal as { AWS: unknown }).AWS), auditor);
    assert.ok(actionsOf(statement).includes('kms:Decrypt'));
  });

  it('denies plain HTTP on both buckets and trace downloads to everyone but the auditor role', () => {
    const policies = resources(template, 'AWS::S3::BucketPolicy');
    for (const id of [logicalIdOf(stack.evidence.bucket), logBucketId()]) {
      const policy = policies.find(([, p]) => describeValue(p.Properties['Bucket']) === `Ref:${id}`)?.[1];
      assert.ok(policy, `bucket policy for ${id}`);
      const statements = policy.Properties['PolicyDocument'].Statement as Statement[];
      assert.ok(
        statements.some(
          (s) => s.Effect === 'Deny' && JSON.stringify(s.Condition) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
        ),
        `${id} is SSL-only`,
      );
    }
    const evidencePolicy = policies.find(
      ([, p]) => describeValue(p.Properties['Bucket']) === `Ref:${logicalIdOf(stack.evidence.bucket)}`,
    )![1];
    const traces = (evidencePolicy.Properties['PolicyDocument'].Statement as Statement[]).find(
      (s) => s.Sid === 'OnlyTheAuditorReadsTraces',
    )!;
    assert.equal(traces.Effect, 'Deny');
    assert.deepEqual(traces.Principal, { AWS: '*' });
    assert.deepEqual(actionsOf(traces).sort(), ['s3:GetObject', 's3:GetObjectVersion']);
    assert.deepEqual((Array.isArray(traces.Resource) ? traces.Resource : [traces.Resource]).map(describeValue), [
      `GetAtt:${logicalIdOf(stack.evidence.bucket)}.Arn/*trace.zip`,
    ]);
    assert.equal(
      describeValue((traces.Condition as { ArnNotEquals: Record<string, unknown> }).ArnNotEquals['aws:PrincipalArn']),
      `GetAtt:${logicalIdOf(stack.auditor.role)}.Arn`,
    );
    // The pattern matches the key layout the writers use.
    assert.ok(new RegExp(`^${'*trace.zip'.replace('*', '.*').replace('.zip', '\\.zip')}$`).test('evidence/acme/T-1/k-abc/trace.zip'));
  });

  it('moves evidence to Glacier Instant Retrieval and expires noncurrent versions after the retention', () => {
    const rules = bucketResource().Properties['LifecycleConfiguration'].Rules as Array<Record<string, any>>;
    const rule = rules.find((r) => r['Id'] === 'evidence-to-glacier-ir')!;
    assert.deepEqual(rule['Transitions'], [{ StorageClass: 'GLACIER_IR', TransitionInDays: deploy.evidence.glacierAfterDays }]);
    assert.deepEqual(rule['NoncurrentVersionExpiration'], { NoncurrentDays: deploy.evidence.retentionDays });
    assert.equal(rule['Status'], 'Enabled');
  });

  it('lets the auditor role read and list evidence and read the audit chain and claims, read-only', () => {
    const role = logicalIdOf(stack.auditor.role);
    const actions = actionsOfRole(template, role);
    assert.ok(actions.includes('s3:GetObject') && actions.includes('s3:ListBucket') && actions.includes('kms:Decrypt'));
    // audit verify reads what Object Lock preserves: every version and delete marker (src/evidence/preserved-versions.ts).
    const evidence = `GetAtt:${logicalIdOf(stack.evidence.bucket)}.Arn`;
    assert.deepEqual(resourcesGranted(template, role, 's3:ListBucketVersions'), [evidence]);
    assert.deepEqual(resourcesGranted(template, role, 's3:GetObjectVersion'), [`${evidence}/*`]);
    assert.ok(!actions.some((a) => /s3:(Put|Delete|Bypass)|dynamodb:(Put|Update|Delete|Batch)/.test(a)), `${actions}`);
    const tableArn = (table: object) => `GetAtt:${logicalIdOf(table as { node: { defaultChild?: unknown } })}.Arn`;
    assert.deepEqual(
      resourcesGranted(template, role, 'dynamodb:Scan'),
      [tableArn(stack.tables.byId.audit), tableArn(stack.tables.byId.claims)].sort(),
    );
  });
});

describe('tables', () => {
  it('builds every shared table definition with on-demand billing, PITR, deletion protection, encryption, TTL and GSIs', () => {
    const tables = resources(template, 'AWS::DynamoDB::Table');
    assert.equal(tables.length, TABLES.length);
    for (const definition of TABLES) {
      const found = tables.find(([, t]) => t.Properties['TableName'] === tableName(prefix, definition.id));
      assert.ok(found, definition.id);
      const [, table] = found;
      assert.equal(table.Properties['BillingMode'], 'PAY_PER_REQUEST');
      assert.deepEqual(table.Properties['PointInTimeRecoverySpecification'], { PointInTimeRecoveryEnabled: true });
      assert.equal(table.Properties['DeletionProtectionEnabled'], true);
      assert.equal(table.DeletionPolicy, 'Retain');
      assert.deepEqual(table.Properties['SSESpecification'], { SSEEnabled: true });
      const keys = table.Properties['KeySchema'] as Array<{ AttributeName: string; KeyType: string }>;
      assert.deepEqual(keys[0], { AttributeName: definition.partitionKey.name, KeyType: 'HASH' });
      if (definition.sortKey) assert.deepEqual(keys[1], { AttributeName: definition.sortKey.name, KeyType: 'RANGE' });
      assert.deepEqual(
        table.Properties['TimeToLiveSpecification'],
        definition.ttlAttribute ? { AttributeName: definition.ttlAttribute, Enabled: true } : undefined,
      );
      const indexes = (table.Properties['GlobalSecondaryIndexes'] ?? []) as Array<{ IndexName: string; KeySchema: unknown[] }>;
      assert.deepEqual(indexes.map((i) => i.IndexName).sort(), definition.indexes.map((i) => i.name).sort());
    }
  });
});

describe('workflows', () => {
  const machines = () => resources(template, 'AWS::StepFunctions::StateMachine');

  /** The definition as CloudFormation will deploy it, with intrinsics shown as readable placeholders. */
  function deployedDefinition(machine: CfnResource): string {
    const values = Object.fromEntries(
      Object.entries(machine.Properties['DefinitionSubstitutions'] as Record<string, unknown>).map(([k, v]) => [k, describeValue(v)]),
    );
    return applySubstitutions(machine.Properties['DefinitionString'] as string, values);
  }
  const byName = (name: string) => machines().find(([, m]) => m.Properties['StateMachineName'] === physical(name))![1];

  it('are Standard workflows with full logging but no execution data, and X-Ray tracing', () => {
    assert.equal(machines().length, 2);
    for (const [, machine] of machines()) {
      assert.equal(machine.Properties['StateMachineType'], 'STANDARD');
      assert.equal(machine.Properties['LoggingConfiguration'].Level, 'ALL');
      assert.equal(machine.Properties['LoggingConfiguration'].IncludeExecutionData, false);
      assert.deepEqual(machine.Properties['TracingConfiguration'], { Enabled: true });
    }
  });

  it('resolve every ${…} in the ASL files through DefinitionSubstitutions', () => {
    for (const [, machine] of machines()) {
      const raw = machine.Properties['DefinitionString'] as string;
      assert.equal(typeof raw, 'string', 'the definition is inline in the template, not an S3 location');
      const provided = Object.keys(machine.Properties['DefinitionSubstitutions']).sort();
      assert.deepEqual(substitutionVariables(raw), provided);
      const deployed = deployedDefinition(machine);
      assert.doesNotMatch(deployed, /\$\{[^}]*\}/);
      JSON.parse(deployed);
    }
  });

  it('point each Task at the function its variable names', () => {
    const definition = JSON.parse(deployedDefinition(byName('guarded-write'))) as AslMachine;
    const browserWrite = stateNamed(definition, 'BrowserWrite');
    const expected = `GetAtt:${logicalIdOf(stack.handlers.workflow.BrowserWrite.fn)}.Arn`;
    assert.equal(browserWrite.Resource, expected);
    const batch = byName('batch');
    assert.equal(
      describeValue(batch.Properties['DefinitionSubstitutions'][functionArnVariable('ReadList')]),
      `GetAtt:${logicalIdOf(stack.handlers.workflow.ReadList.fn)}.Arn`,
    );
    assert.match(
      describeValue(batch.Properties['DefinitionSubstitutions']['GuardedWriteStateMachineArn']),
      new RegExp(`stateMachine:${physical('guarded-write')}$`),
    );
  });

  it('run the batch items as a Distributed Map that reads them from S3 and writes results to S3, with settings from config', () => {
    const batch = JSON.parse(deployedDefinition(byName('batch'))) as AslMachine;
    const map = stateNamed(batch, 'ProcessItems') as unknown as Record<string, any>;
    assert.equal(map['ItemProcessor']['ProcessorConfig']['Mode'], 'DISTRIBUTED');
    assert.equal(map['ItemReader']['Resource'], 'arn:aws:states:::s3:getObject');
    assert.deepEqual(map['ItemReader']['Parameters'], { 'Bucket.$': '$.list.items.bucket', 'Key.$': '$.list.items.key' });
    assert.equal(map['ResultWriter']['Resource'], 'arn:aws:states:::s3:putObject');
    assert.equal(map['MaxConcurrencyPath'], '$.list.maxConcurrency');
    assert.equal(map['ToleratedFailurePercentagePath'], '$.list.toleratedFailurePercentage');
    assert.deepEqual(Object.keys(stateNamed(batch, 'Summarize').Parameters as object).sort(), [
      'batch.$',
      'executionArn.$',
      'read.$',
      'results.$',
      'resultsAt.$',
    ]);
  });

  it('retry BrowserWrite only on a throttle, every other Lambda task on every Lambda service error, and time out approval waits', () => {
    const guarded = JSON.parse(deployedDefinition(byName('guarded-write'))) as AslMachine;
    assertEveryLambdaTaskRetriesServiceErrors(guarded, ['BrowserWrite']);
    assertEveryLambdaTaskRetriesServiceErrors(JSON.parse(deployedDefinition(byName('batch'))) as AslMachine);
    for (const idempotent of ['ValidateRoute', 'Claim', 'Readback']) assertRetriesLambdaServiceErrors(guarded, idempotent);
    assertTaskTokenWaitsTimeOut(guarded);
    assert.equal(stateNamed(guarded, 'RequestApproval').TimeoutSeconds, stack.deployment.packaged.write_policy.approval_timeout_seconds);
  });

  it('let each workflow role invoke only the functions its definition names', () => {
    for (const [name, id] of [
      ['batch', 'Batch'],
      ['guarded-write', 'GuardedWrite'],
    ] as const) {
      const machine = byName(name);
      const role = (machine.Properties['RoleArn'] as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
      const invoked = resourcesGranted(template, role, 'lambda:InvokeFunction');
      const named = WORKFLOW_FUNCTIONS.filter((f) =>
        (machine.Properties['DefinitionString'] as string).includes(`\${${functionArnVariable(f.id)}}`),
      );
      assert.deepEqual(invoked, named.map((f) => `GetAtt:${logicalIdOf(stack.handlers.workflow[f.id].fn)}.Arn`).sort(), name);
      assert.equal(describeValue(role), describeValue(logicalIdOf(stack.workflows.roles[id])));
    }
  });

  it('let the batch start, watch and stop guarded-write executions (with the .sync rule) and run its Distributed Map, nothing else', () => {
    const role = logicalIdOf(stack.workflows.roles.Batch);
    const actions = actionsOfRole(template, role).filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'));
    assert.deepEqual(actions, [
      'events:DescribeRule',
      'events:PutRule',
      'events:PutTargets',
      'kms:Decrypt',
      'kms:GenerateDataKey',
      'lambda:InvokeFunction',
      's3:AbortMultipartUpload',
      's3:GetObject',
      's3:ListMultipartUploadParts',
      's3:PutObject',
      'states:DescribeExecution',
      'states:StartExecution',
      'states:StopExecution',
    ]);
    const started = resourcesGranted(template, role, 'states:StartExecution');
    assert.ok(
      started.some((r) => new RegExp(`stateMachine:${physical('guarded-write')}$`).test(r)),
      `${started}`,
    );
    assert.ok(
      started.some((r) => new RegExp(`stateMachine:${physical('batch')}$`).test(r)),
      `map run children: ${started}`,
    );
    const stopped = resourcesGranted(template, role, 'states:StopExecution');
    assert.ok(
      stopped.some((r) => new RegExp(`execution:${physical('guarded-write')}:\\*$`).test(r)),
      `${stopped}`,
    );
    assert.ok(
      stopped.some((r) => new RegExp(`execution:${physical('batch')}/\\*$`).test(r)),
      `${stopped}`,
    );
    // The map run's item list and results live in the unlocked working bucket.
    const bucket = `GetAtt:${logicalIdOf(stack.working.bucket)}.Arn`;
    assert.deepEqual(resourcesGranted(template, role, 's3:PutObject'), [`${bucket}/runs/*/results/*`]);
    assert.deepEqual(resourcesGranted(template, role, 's3:GetObject').sort(), [
      `${bucket}/runs/*/items.json`,
      `${bucket}/runs/*/results/*`,
    ]);
    assert.match(resourcesGranted(template, role, 'events:PutRule')[0]!, /rule\/StepFunctionsGetEventsForStepFunctionsExecutionRule$/);
  });

  it('let the guarded write start its inverse as a nested execution of itself and wait for it (.sync:2), nothing else', () => {
    const role = logicalIdOf(stack.workflows.roles.GuardedWrite);
    const actions = actionsOfRole(template, role).filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'));
    assert.deepEqual(actions, [
      'events:DescribeRule',
      'events:PutRule',
      'events:PutTargets',
      'lambda:InvokeFunction',
      'states:DescribeExecution',
      'states:StartExecution',
      'states:StopExecution',
    ]);
    const own = new RegExp(`:states:Ref:AWS::Region:Ref:AWS::AccountId:stateMachine:${physical('guarded-write')}$`);
    const started = resourcesGranted(template, role, 'states:StartExecution');
    assert.equal(started.length, 1);
    assert.match(started[0]!, own);
    for (const action of ['states:DescribeExecution', 'states:StopExecution']) {
      const watched = resourcesGranted(template, role, action);
      assert.equal(watched.length, 1, action);
      assert.match(watched[0]!, new RegExp(`:execution:${physical('guarded-write')}:\\*$`), action);
    }
    for (const action of ['events:PutTargets', 'events:PutRule', 'events:DescribeRule']) {
      assert.deepEqual(
        resourcesGranted(template, role, action).map((r) => r.replace(/^.*:rule\//, 'rule/')),
        ['rule/StepFunctionsGetEventsForStepFunctionsExecutionRule'],
        action,
      );
    }
    const definition = JSON.parse(deployedDefinition(byName('guarded-write'))) as AslMachine;
    const runInverse = stateNamed(definition, 'RunInverse');
    assert.equal(runInverse.Resource, 'arn:aws:states:::states:startExecution.sync:2');
    assert.match(describeValue((runInverse.Parameters as Record<string, unknown>)['StateMachineArn']), own);
  });
});

describe('schedules', () => {
  it('invoke the entry point per tenant at the configured time zone, with the tenant and the scheduled time', () => {
    const schedules = resources(template, 'AWS::Scheduler::Schedule');
    assert.equal(schedules.length, deploy.tenants.length);
    const [starterId] = functionNamed(template, physical('start-scheduled-batch'));
    for (const tenant of deploy.tenants) {
      const [, schedule] = schedules.find(([, s]) => s.Properties['Name'] === `${prefix}-batch-${tenant.id}`)!;
      assert.equal(schedule.Properties['ScheduleExpression'], tenant.schedule.expression);
      assert.equal(schedule.Properties['ScheduleExpressionTimezone'], tenant.schedule.timezone);
      assert.deepEqual(schedule.Properties['FlexibleTimeWindow'], { Mode: 'OFF' });
      const target = schedule.Properties['Target'];
      assert.equal(describeValue(target.Arn), `GetAtt:${starterId}.Arn`);
      assert.deepEqual(JSON.parse(target.Input), { tenant: tenant.id, scheduledTime: '<aws.scheduler.scheduled-time>' });
      assert.equal(schedule.Properties['Name'], `${deploy.prefix}-batch-${tenant.id}`);
      assert.ok(target.RetryPolicy.MaximumRetryAttempts >= 1);
      assert.equal(describeValue(target.DeadLetterConfig.Arn), `GetAtt:${logicalIdOf(stack.schedules.deadLetters)}.Arn`);
      assert.equal(describeValue(target.RoleArn), `GetAtt:${logicalIdOf(stack.schedules.role)}.Arn`);
    }
  });

  it('use a role that may only invoke the entry point (and dead-letter a failed start); only the entry point starts the batch', () => {
    const role = logicalIdOf(stack.schedules.role);
    const [starterId, starter] = functionNamed(template, physical('start-scheduled-batch'));
    assert.deepEqual(actionsOfRole(template, role), ['lambda:InvokeFunction', 'sqs:SendMessage']);
    assert.deepEqual(
      resourcesGranted(template, role, 'lambda:InvokeFunction').sort(),
      [`GetAtt:${starterId}.Arn`, `GetAtt:${starterId}.Arn:*`].sort(),
    );
    const batch = `Ref:${logicalIdOf(stack.workflows.byId.Batch)}`;
    assert.equal(describeValue(starter.Properties['Environment'].Variables['PAPERCLIP_BATCH_ARN']), batch);
    const starters = allNames.filter((name) => resourcesGranted(template, roleOf(name), 'states:StartExecution').includes(batch));
    assert.deepEqual(starters, ['start-scheduled-batch']);
  });
});

describe('approval endpoint and mail', () => {
  it('serves the approval page from a Function URL without AWS auth and without tracing', () => {
    const [approvalId, approval] = functionNamed(template, physical('approval-http'));
    const urls = resources(template, 'AWS::Lambda::Url');
    assert.equal(urls.length, 1);
    assert.equal(urls[0]![1].Properties['AuthType'], 'NONE');
    assert.equal(describeValue(urls[0]![1].Properties['TargetFunctionArn']), `GetAtt:${approvalId}.Arn`);
    assert.equal(approval.Properties['TracingConfig'], undefined);
    // Public and unauthenticated: capped by its reserved concurrency, so a flood cannot starve the workflows.
    assert.equal(approval.Properties['ReservedConcurrentExecutions'], 5);
    const urlLogicalId = urls[0]![0];
    const env = fn('request-approval').Properties['Environment'].Variables;
    assert.equal(describeValue(env['PAPERCLIP_APPROVAL_BASE_URL']), `GetAtt:${urlLogicalId}.FunctionUrl`);
  });

  it('verifies the sender domain in SES', () => {
    const identities = resources(template, 'AWS::SES::EmailIdentity');
    assert.deepEqual(
      identities.map(([, i]) => i.Properties['EmailIdentity']),
      [deploy.email.senderDomain],
    );
  });
});

describe('observability', () => {
  const alarms = () => resources(template, 'AWS::CloudWatch::Alarm');
  const alarmNamed = (suffix: string) => alarms().find(([, a]) => a.Properties['AlarmName'] === `${prefix}-${suffix}`)?.[1];
  const expressions = (alarm: CfnResource) =>
    ((alarm.Properties['Metrics'] ?? []) as Array<{ Expression?: string }>).map((m) => m.Expression).filter(Boolean) as string[];
  type AlarmMetric = {
    Id: string;
    Expression?: string;
    MetricStat?: { Metric: { MetricName: string; Dimensions?: Array<{ Name: string; Value: string }> } };
  };
  /** The plain metrics an alarm sums, as `<metric>@<service>`. */
  const summed = (alarm: CfnResource) =>
    (alarm.Properties['Metrics'] as AlarmMetric[])
      .filter((m) => m.MetricStat)
      .map((m) => `${m.MetricStat!.Metric.MetricName}@${m.MetricStat!.Metric.Dimensions?.map((d) => `${d.Name}=${d.Value}`).join(',')}`)
      .sort();
  const perService = (metric: string) => ITEM_METRIC_SERVICES.map((service) => `${metric}@service=${service}`).sort();

  it('uses no Metrics Insights query in an alarm, where CloudWatch allows one query alone, and at most one per dashboard widget', () => {
    for (const [, alarm] of alarms()) {
      const name = alarm.Properties['AlarmName'];
      assert.ok(!expressions(alarm).some((e) => /\bSELECT\b/i.test(e)), `${name} alarms on metric math over plain metrics`);
      assert.ok(
        (alarm.Properties['Metrics'] ?? []).length <= 10 || !alarm.Properties['Metrics'],
        `${name}: at most 10 metrics in an alarm's math`,
      );
    }
    const [, dashboard] = resources(template, 'AWS::CloudWatch::Dashboard')[0]!;
    const raw = dashboard.Properties['DashboardBody'] as string | { 'Fn::Join': [string, unknown[]] };
    const text = typeof raw === 'string' ? raw : raw['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
    const body = JSON.parse(text) as { widgets: Array<{ properties: { metrics?: unknown[][] } }> };
    for (const widget of body.widgets) {
      const queries = (widget.properties.metrics ?? []).filter((row) =>
        row.some((cell) => typeof cell === 'object' && /\bSELECT\b/i.test(JSON.stringify(cell))),
      );
      assert.ok(queries.length <= 1, `a widget runs ${queries.length} Metrics Insights queries`);
    }
  });

  it('alarms on any misoperation, any session loss, and workflow failures', () => {
    const misoperation = alarmNamed('misoperation')!;
    assert.deepEqual(summed(misoperation), perService('Misoperation'));
    assert.equal(misoperation.Properties['Threshold'], 0);
    assert.equal(misoperation.Properties['ComparisonOperator'], 'GreaterThanThreshold');
    const session = alarmNamed('session-lost')!;
    assert.deepEqual(
      summed(session),
      [...perService('SessionLost'), 'SessionLost@service=validate-route'].sort(),
      'a session lost at routing, before any claim, counts too',
    );
    assert.equal(session.Properties['Threshold'], 0);
    for (const name of ['batch', 'guardedwrite']) {
      const failures = alarmNamed(`${name}-workflow-failures`)!;
      const metrics = (failures.Properties['Metrics'] as Array<{ MetricStat?: { Metric: { MetricName: string } } }>)
        .map((m) => m.MetricStat?.Metric.MetricName)
        .filter(Boolean)
        .sort();
      assert.deepEqual(metrics, ['ExecutionsAborted', 'ExecutionsFailed', 'ExecutionsTimedOut']);
    }
  });

  it('alarms on the takeover rate above the configured threshold', () => {
    const takeover = alarmNamed('takeover-rate')!;
    assert.equal(takeover.Properties['Threshold'], deploy.alarms.takeoverRateThreshold);
    assert.deepEqual(summed(takeover), [...perService('HumanTakeover'), ...perService('ItemProcessed')].sort());
    assert.ok(expressions(takeover).some((e) => /n \/ d/.test(e)));
  });

  it('notifies one encrypted, SSL-only topic from every alarm', () => {
    const topicId = logicalIdOf(stack.observability.topic);
    const topic = template.findResources('AWS::SNS::Topic')[topicId] as CfnResource;
    assert.ok(topic.Properties['KmsMasterKeyId']);
    for (const [, alarm] of alarms()) {
      assert.deepEqual(alarm.Properties['AlarmActions'].map(describeValue), [`Ref:${topicId}`]);
    }
    const subscriptions = resources(template, 'AWS::SNS::Subscription');
    assert.deepEqual(
      subscriptions.map(([, s]) => [s.Properties['Protocol'], s.Properties['Endpoint']]),
      [['email', deploy.email.alarmAddress]],
    );
    const [, topicPolicy] = resources(template, 'AWS::SNS::TopicPolicy')[0]!;
    assert.ok(
      (topicPolicy.Properties['PolicyDocument'].Statement as Statement[]).some(
        (s) => s.Effect === 'Deny' && JSON.stringify(s.Condition).includes('aws:SecureTransport'),
      ),
    );
    const key = Object.values(template.findResources('AWS::KMS::Key')).find((k) =>
      JSON.stringify(k['Properties']['KeyPolicy']).includes('cloudwatch.amazonaws.com'),
    );
    assert.ok(key, 'the topic key lets CloudWatch publish');
  });

  it('shows the four rates on the dashboard as metric math over the EMF counts', () => {
    const [, dashboard] = resources(template, 'AWS::CloudWatch::Dashboard')[0]!;
    const body = JSON.stringify(dashboard.Properties['DashboardBody']);
    for (const definition of RATE_DEFINITIONS) {
      assert.ok(body.includes(definition.label), definition.label);
      assert.ok(body.includes(`\\"${definition.numerator}\\",\\"service\\",\\"complete\\"`), definition.numerator);
      assert.ok(body.includes(`\\"${definition.denominator}\\",\\"service\\",\\"takeover\\"`), definition.denominator);
    }
    assert.ok(body.includes('IF(d > 0, n / d, 0)'));
    for (const metric of METRIC_NAMES)
      assert.ok(body.includes(`\\"${metric}\\",\\"service\\",\\"complete\\"`), `${metric} is on the dashboard`);
  });
});
