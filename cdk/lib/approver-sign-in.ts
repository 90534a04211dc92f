import { CfnOutput, Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AccountRecovery,
  FeaturePlan,
  Mfa,
  StandardThreatProtectionMode,
  OAuthScope,
  UserPool,
  type UserPoolClient,
  type UserPoolDomain,
} from 'aws-cdk-lib/aws-cognito';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { SIGN_IN_CALLBACK_PATH } from '../../src/config/schema.js';

/**
 * Approver sign-in on AWS: a Cognito user pool whose users are the approvers
 * (created by an administrator, no self sign-up, email as the user name), a
 * public app client for the approval pages (authorization code with PKCE, no
 * secret, the one callback URL under the public approval base URL), and the
 * hosted sign-in domain. The approval function and the write get the pool's
 * issuer URL and the client id (the write fetches the pool's JWKS to check the
 * decision's ID token); policy (which actions or amounts need sign-in) stays in the
 * Paperclip config.
 */
export interface ApproverSignInProps {
  prefix: string;
  /** The public base URL of the approval pages (the callback is registered under it). */
  approvalBaseUrl: string;
  /** Globally unique prefix of the hosted sign-in domain (<prefix>.auth.<region>.amazoncognito.com). */
  domainPrefix: string;
  /** The approval endpoint function, which signs approvers in. */
  approvalHttp: LambdaFunction;
  /** The write, which checks the stored ID token against the pool's published keys before it commits. */
  write: LambdaFunction;
}

export class ApproverSignIn extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  readonly domain: UserPoolDomain;
  readonly callbackUrl: string;

  constructor(scope: Construct, id: string, props: ApproverSignInProps) {
    super(scope, id);
    this.callbackUrl = new URL(SIGN_IN_CALLBACK_PATH, props.approvalBaseUrl).href;
    this.userPool = new UserPool(this, 'Approvers', {
      userPoolName: `${props.prefix}-approvers`,
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      signInCaseSensitive: false,
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: false } },
      mfa: Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      passwordPolicy: {
        minLength: 14,
        requireDigits: true,
        requireLowercase: true,
        requireUppercase: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      featurePlan: FeaturePlan.PLUS,
      standardThreatProtectionMode: StandardThreatProtectionMode.FULL_FUNCTION,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.client = this.userPool.addClient('ApprovalPages', {
      userPoolClientName: `${props.prefix}-approval-pages`,
      // A public client: PKCE binds the code to the browser that started the sign-in.
      generateSecret: false,
      authFlows: {},
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [OAuthScope.OPENID, OAuthScope.EMAIL],
        callbackUrls: [this.callbackUrl],
      },
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.minutes(15),
      accessTokenValidity: Duration.minutes(15),
      refreshTokenValidity: Duration.hours(1),
    });
    this.domain = this.userPool.addDomain('HostedSignIn', { cognitoDomain: { domainPrefix: props.domainPrefix } });

    for (const fn of [props.approvalHttp, props.write]) {
      fn.addEnvironment('PAPERCLIP_SIGN_IN_ISSUER', this.userPool.userPoolProviderUrl);
      fn.addEnvironment('PAPERCLIP_SIGN_IN_CLIENT_ID', this.client.userPoolClientId);
    }

    new CfnOutput(this, 'ApproversUserPoolId', {
      value: this.userPool.userPoolId,
      description: 'Approvers sign in here; create each approver (their email as in the tenant config) as a user',
    });
  }
}
