import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { ApproverSignIn } from '../../cdk/lib/approver-sign-in.js';
import { packagedRuntimeConfig, SIGN_IN_CLIENT_PLACEHOLDER, SIGN_IN_ISSUER_PLACEHOLDER } from '../../cdk/lib/runtime-config.js';
import { loadDeploymentConfig } from '../../cdk/config.js';
import { SAMPLE_DEPLOY_CONFIG } from '../../cdk/lib/app.js';
import { loadConfig } from '../../src/config/load.js';
import { PaperclipConfig } from '../../src/config/schema.js';

/** The approvers' user pool and the approval pages' client, on their own stack (no bundling). */
describe('ApproverSignIn construct', () => {
  const app = new App();
  const stack = new Stack(app, 'SignIn', { env: { account: '111111111111', region: 'ap-east-1' } });
  const fn = (id: string, functionName: string) =>
    new LambdaFunction(stack, id, {
      functionName,
      runtime: Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({})'),
    });
  new ApproverSignIn(stack, 'ApproverSignIn', {
    prefix: 'pc',
    approvalBaseUrl: 'https://approvals.acme.example',
    domainPrefix: 'acme-pc-approvers',
    approvalHttp: fn('ApprovalHttp', 'pc-approval-http'),
    write: fn('BrowserWrite', 'pc-browser-write'),
  });
  fn('ReadList', 'pc-read-list');
  const template = Template.fromStack(stack);

  it('a user pool of approvers created by an administrator, email as the name, MFA required', () => {
    template.hasResourceProperties('AWS::Cognito::UserPool', {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      UsernameAttributes: ['email'],
      MfaConfiguration: 'ON',
      DeletionProtection: 'ACTIVE',
    });
  });

  it('a public client: authorization code only, openid and email, the one callback under the approval URL, no secret', () => {
    template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      GenerateSecret: false,
      AllowedOAuthFlows: ['code'],
      AllowedOAuthFlowsUserPoolClient: true,
      AllowedOAuthScopes: Match.arrayWith(['openid', 'email']),
      CallbackURLs: ['https://approvals.acme.example/auth/callback'],
      PreventUserExistenceErrors: 'ENABLED',
    });
    const clients = template.findResources('AWS::Cognito::UserPoolClient');
    const scopes = Object.values(clients)[0]?.Properties?.AllowedOAuthScopes as string[];
    assert.deepEqual([...scopes].sort(), ['email', 'openid']);
    template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { Domain: 'acme-pc-approvers' });
  });

  it('the approval function and the write get the pool as their issuer and the client id', () => {
    const withIssuer = template.findResources('AWS::Lambda::Function', {
      Properties: {
        Environment: {
          Variables: {
            PAPERCLIP_SIGN_IN_ISSUER: { 'Fn::GetAtt': [Match.stringLikeRegexp('ApproverSignInApprovers'), 'ProviderURL'] },
            PAPERCLIP_SIGN_IN_CLIENT_ID: Match.objectLike({ Ref: Match.stringLikeRegexp('ApproverSignInApproversApprovalPages') }),
          },
        },
      },
    });
    const names = Object.values(withIssuer).map((r) => String((r as { Properties: { FunctionName?: unknown } }).Properties.FunctionName));
    assert.equal(names.length, 2, names.join(', '));
    assert.ok(names.some((n) => n.endsWith('approval-http')) && names.some((n) => n.endsWith('browser-write')), names.join(', '));
  });
});

describe('sign-in in the packaged config', () => {
  it('keeps the policy, takes issuer and client from the deployment, and never packages embedded passwords', () => {
    const deploy = { ...loadDeploymentConfig(SAMPLE_DEPLOY_CONFIG), approvalBaseUrl: 'https://approvals.acme.example' };
    const source = loadConfig('config/paperclip.local.yaml');
    source.approvals.sign_in = {
      issuer: 'embedded',
      client_id: 'local',
      required_for: { actions: ['refund'], amount_above: '5000' },
      session_minutes: 30,
      embedded_users: [{ email: 'finance.lead@acme.example', password: 'local-password-1' }],
    };
    const packaged = packagedRuntimeConfig(deploy, source);
    assert.deepEqual(packaged.approvals.sign_in, {
      issuer: SIGN_IN_ISSUER_PLACEHOLDER,
      client_id: SIGN_IN_CLIENT_PLACEHOLDER,
      required_for: { actions: ['refund'], amount_above: '5000' },
      session_minutes: 30,
      embedded_users: [],
    });
    assert.equal(PaperclipConfig.safeParse(packaged).success, true, 'the packaged config is valid for environment aws');
    const embeddedOnAws = PaperclipConfig.safeParse({
      ...packaged,
      approvals: { ...packaged.approvals, sign_in: source.approvals.sign_in },
    });
    assert.match(JSON.stringify(embeddedOnAws.error?.issues), /embedded provider is for the local stack only/);
  });
});
