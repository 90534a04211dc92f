import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BatchRequest } from '../../src/domain/task.js';
import { loadConfig } from '../../src/config/load.js';
import { DeploymentConfigError, loadDeploymentConfig, parseDeploymentConfig, type DeploymentConfigInput } from '../../cdk/config.js';
import { PROJECT_ROOT, SAMPLE_DEPLOY_CONFIG } from '../../cdk/lib/app.js';
import { resolveDeployment, APPROVAL_URL_PLACEHOLDER } from '../../cdk/lib/runtime-config.js';
import { scheduledStartInput } from '../../cdk/lib/schedules.js';
import { ScheduledStart } from '../../src/app/scheduled-batch.js';

const sample = JSON.parse(readFileSync(SAMPLE_DEPLOY_CONFIG, 'utf8')) as DeploymentConfigInput;
const scratch = mkdtempSync(join(tmpdir(), 'paperclip-deploy-config-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function problemsOf(input: unknown): string[] {
  try {
    parseDeploymentConfig(input, 'test.json');
  } catch (error) {
    assert.ok(error instanceof DeploymentConfigError, String(error));
    return error.problems;
  }
  assert.fail('expected the config to be rejected');
}

describe('deployment config', () => {
  it('accepts the sample and fills the documented defaults', () => {
    const config = loadDeploymentConfig(SAMPLE_DEPLOY_CONFIG);
    assert.equal(config.prefix, 'paperclip');
    assert.equal(config.evidence.objectLockMode, 'COMPLIANCE');
    assert.equal(config.memory, undefined, 'memory comes from the measured sizing, not the deployment config');
    const { alarms, ...rest } = sample;
    void alarms;
    const defaulted = parseDeploymentConfig(rest);
    assert.deepEqual(defaulted.alarms, { takeoverRateThreshold: 0.2 });
  });

  it('names the field and the fix for each mistake', () => {
    const problems = problemsOf({
      ...sample,
      prefix: 'Bad_Prefix',
      vendorBaseUrl: 'http://vendor.example.com',
      tenants: [{ id: 'acme', schedule: { expression: 'every day', timezone: 'Mars/Olympus' } }],
      logRetentionDays: 42,
      memory: { browserMb: 1024 },
    });
    const joined = problems.join('\n');
    assert.match(joined, /field "prefix": must start with a letter/);
    assert.match(joined, /field "vendorBaseUrl": must be the https:\/\/ base URL/);
    assert.match(joined, /field "tenants\[0\]\.schedule\.expression": must be an EventBridge Scheduler expression/);
    assert.match(joined, /field "tenants\[0\]\.schedule\.timezone": must be an IANA time zone/);
    assert.match(joined, /field "logRetentionDays": must be one of 1, 3, 5/);
    assert.match(joined, /field "memory": memory sizes are derived from measurements in src\/contracts\/sizing\.ts/);
  });

  it('says which object is missing rather than "expected object"', () => {
    const { email, evidence, ...rest } = sample;
    void email;
    void evidence;
    const joined = problemsOf(rest).join('\n');
    assert.match(joined, /field "email": required: an object with senderAddress and alarmAddress/);
    assert.match(joined, /field "evidence": required: an object with at least retentionDays/);
  });

  it('rejects a sender outside the verified domain and duplicate tenants', () => {
    const joined = problemsOf({
      ...sample,
      email: { ...sample.email, senderAddress: 'someone@elsewhere.example' },
      tenants: [sample.tenants[0], sample.tenants[0]],
    }).join('\n');
    assert.match(joined, /field "email\.senderAddress": must be an address at senderDomain 'ops\.example\.com'/);
    assert.match(joined, /field "tenants\[1\]\.id": duplicate id 'acme'/);
  });

  it('reports an unreadable or non-JSON file with the path', () => {
    assert.throws(() => loadDeploymentConfig(join(scratch, 'missing.json')), /missing\.json.*cannot read the file/s);
    const broken = join(scratch, 'broken.json');
    writeFileSync(broken, '{ "prefix": ');
    assert.throws(() => loadDeploymentConfig(broken), /broken\.json is invalid:\n {2}- is not valid JSON/);
  });
});

describe('resolving against the runtime config', () => {
  it('refuses a scheduled tenant the runtime config does not know', () => {
    const config = parseDeploymentConfig({
      ...sample,
      tenants: [{ id: 'wayne', schedule: { expression: 'rate(1 day)', timezone: 'UTC' } }],
    });
    assert.throws(
      () => resolveDeployment(config, PROJECT_ROOT, 'test.json'),
      (error: unknown) =>
        error instanceof DeploymentConfigError &&
        /field "tenants\[0\]\.id": tenant 'wayne' is not in config\/paperclip\.local\.yaml/.test(error.message),
    );
  });

  it('names runtimeConfig when the YAML it points at is missing or invalid', () => {
    const missing = parseDeploymentConfig({ ...sample, runtimeConfig: 'config/does-not-exist.yaml' });
    assert.throws(() => resolveDeployment(missing, PROJECT_ROOT, 'test.json'), /field "runtimeConfig"/);
    const bad = join(scratch, 'bad.yaml');
    writeFileSync(bad, 'environment: moon\n');
    assert.throws(
      () => resolveDeployment(parseDeploymentConfig({ ...sample, runtimeConfig: bad }), PROJECT_ROOT, 'test.json'),
      /field "runtimeConfig": .*bad\.yaml: environment/,
    );
  });

  it('packages the policy of the runtime config with the deployment facts and Secrets Manager credentials', () => {
    const deploy = loadDeploymentConfig(SAMPLE_DEPLOY_CONFIG);
    const resolved = resolveDeployment(deploy, PROJECT_ROOT);
    const source = loadConfig(join(PROJECT_ROOT, deploy.runtimeConfig));
    const { packaged } = resolved;
    assert.equal(packaged.environment, 'aws');
    assert.equal(packaged.prefix, deploy.prefix);
    assert.equal(packaged.vendor.base_url, deploy.vendorBaseUrl);
    assert.equal(packaged.approvals.sender, deploy.email.senderAddress);
    assert.equal(packaged.approvals.base_url, APPROVAL_URL_PLACEHOLDER);
    assert.equal(packaged.evidence.bucket, deploy.evidence.bucketName);
    assert.deepEqual(packaged.write_policy, source.write_policy, "policy is the operator's, untouched");
    assert.deepEqual(packaged.tenants, source.tenants);
    assert.deepEqual(
      packaged.identities.map((i) => [i.id, i.tenants, i.credentials]),
      source.identities.map((i) => [i.id, i.tenants, { source: 'secrets_manager', secret_id: `${deploy.prefix}/identity/${i.id}` }]),
    );
  });
});

describe('scheduled batch input', () => {
  it('sends the entry point the tenant and the scheduled time, never a requester: the entry point names and attests it', () => {
    assert.deepEqual(scheduledStartInput('acme'), { tenant: 'acme', scheduledTime: '<aws.scheduler.scheduled-time>' });
  });

  it('is accepted by the entry point once Scheduler fills in the time, and yields a task id stable per delivery', () => {
    const filled = JSON.parse(
      JSON.stringify(scheduledStartInput('acme')).replace('<aws.scheduler.scheduled-time>', '2026-12-02T01:00:00Z'),
    );
    const parsed = ScheduledStart.safeParse(filled);
    assert.ok(parsed.success, parsed.success ? '' : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const batch = BatchRequest.parse({ tenant: 'acme', taskId: `T-acme-${parsed.data.scheduledTime}` });
    assert.equal(batch.taskId, 'T-acme-2026-12-02T010000Z', 'colons dropped: a valid execution name, stable per delivery');
  });
});
