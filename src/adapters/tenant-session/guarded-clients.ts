import {
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { TABLES, tableName, type TableDefinition } from '../dynamodb/table-definitions.js';
import type { AuthorizationRequest, PolicyGuard } from './policy-guard.js';

/**
 * The local stand-in for a tenant session's credentials: the process's own
 * clients, wrapped so that every call is first authorised by the policy guard
 * against the tenant session policy, with the action, resource ARN and
 * condition keys IAM would use for it. A call the guard cannot describe is
 * refused, so a new kind of call has to be taught here before it runs
 * locally, as it would need a policy change on AWS.
 */

export interface LocalArns {
  tableArn(name: string): string;
  bucketArn(bucket: string): string;
  /** A secret's full ARN from its name or ARN (AWS appends six random characters to the name). */
  secretArn(secretId: string): string;
}

type Sendable = { send(command: unknown, ...rest: unknown[]): Promise<unknown> };

function guardSend<C extends Sendable>(client: C, describe: (command: unknown) => AuthorizationRequest[], guard: PolicyGuard): C {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'send') {
        return async (command: unknown, ...rest: unknown[]) => {
          guard.authorize(describe(command));
          return target.send(command, ...rest);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

function unknownCall(service: string, command: unknown): never {
  const name = (command as { constructor?: { name?: string } })?.constructor?.name ?? 'this command';
  throw new Error(`the tenant session does not know which IAM action ${service} ${name} needs; add it to the local policy guard`);
}

interface KeyedTable {
  definition: TableDefinition;
  arn: string;
}

function partitionKeyName(table: KeyedTable, index: string | undefined): string {
  if (!index) return table.definition.partitionKey.name;
  const found = table.definition.indexes.find((i) => i.name === index);
  if (!found) throw new Error(`table ${table.definition.id} has no index ${index}`);
  return found.partitionKey.name;
}

/** The partition key value a Query's key condition pins (`#k = :k`), resolved through the expression's names and values. */
function queriedPartitionKey(input: QueryCommand['input'], keyName: string): string[] {
  const expression = input.KeyConditionExpression ?? '';
  for (const match of expression.matchAll(/(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)/g)) {
    const name = match[1]!.startsWith('#') ? input.ExpressionAttributeNames?.[match[1]!] : match[1];
    const value = input.ExpressionAttributeValues?.[match[2]!];
    if (name === keyName && typeof value === 'string') return [value];
  }
  return [];
}

function stringValue(record: Record<string, unknown> | undefined, name: string): string[] {
  const value = record?.[name];
  return typeof value === 'string' ? [value] : [];
}

export function guardDocumentClient(
  db: DynamoDBDocumentClient,
  guard: PolicyGuard,
  prefix: string,
  arns: LocalArns,
): DynamoDBDocumentClient {
  const tables = new Map<string, KeyedTable>(
    TABLES.map((definition) => {
      const name = tableName(prefix, definition.id);
      return [name, { definition, arn: arns.tableArn(name) }];
    }),
  );
  const table = (name: string | undefined): KeyedTable => {
    const found = name ? tables.get(name) : undefined;
    if (!found) throw new Error(`table ${name ?? '(none)'} is not one of Paperclip's tables`);
    return found;
  };
  const item = (action: string, name: string | undefined, key: Record<string, unknown> | undefined): AuthorizationRequest[] => {
    const t = table(name);
    return [{ action, resource: t.arn, context: { 'dynamodb:LeadingKeys': stringValue(key, partitionKeyName(t, undefined)) } }];
  };
  const describe = (command: unknown): AuthorizationRequest[] => {
    if (command instanceof GetCommand) return item('dynamodb:GetItem', command.input.TableName, command.input.Key);
    if (command instanceof PutCommand) return item('dynamodb:PutItem', command.input.TableName, command.input.Item);
    if (command instanceof UpdateCommand) return item('dynamodb:UpdateItem', command.input.TableName, command.input.Key);
    if (command instanceof DeleteCommand) return item('dynamodb:DeleteItem', command.input.TableName, command.input.Key);
    if (command instanceof QueryCommand) {
      const t = table(command.input.TableName);
      const index = command.input.IndexName;
      return [
        {
          action: 'dynamodb:Query',
          resource: index ? `${t.arn}/index/${index}` : t.arn,
          context: { 'dynamodb:LeadingKeys': queriedPartitionKey(command.input, partitionKeyName(t, index)) },
        },
      ];
    }
    if (command instanceof BatchGetCommand) {
      return Object.entries(command.input.RequestItems ?? {}).map(([name, request]) => {
        const t = table(name);
        const keyName = partitionKeyName(t, undefined);
        return {
          action: 'dynamodb:BatchGetItem',
          resource: t.arn,
          context: { 'dynamodb:LeadingKeys': (request.Keys ?? []).flatMap((key) => stringValue(key, keyName)) },
        };
      });
    }
    return unknownCall('DynamoDB', command);
  };
  return guardSend(db, describe, guard);
}

export function guardS3Client(s3: S3Client, guard: PolicyGuard, arns: LocalArns): S3Client {
  const object = (action: string, bucket: string | undefined, key: string | undefined): AuthorizationRequest => ({
    action,
    resource: `${arns.bucketArn(bucket ?? '')}/${key ?? ''}`,
  });
  const describe = (command: unknown): AuthorizationRequest[] => {
    if (command instanceof PutObjectCommand) return [object('s3:PutObject', command.input.Bucket, command.input.Key)];
    if (command instanceof GetObjectCommand || command instanceof HeadObjectCommand) {
      return [object('s3:GetObject', command.input.Bucket, command.input.Key)];
    }
    if (command instanceof GetObjectAttributesCommand) {
      return [
        object('s3:GetObject', command.input.Bucket, command.input.Key),
        object('s3:GetObjectAttributes', command.input.Bucket, command.input.Key),
      ];
    }
    if (command instanceof ListObjectsV2Command) {
      return [
        {
          action: 's3:ListBucket',
          resource: arns.bucketArn(command.input.Bucket ?? ''),
          context: { 's3:prefix': [command.input.Prefix ?? ''] },
        },
      ];
    }
    return unknownCall('S3', command);
  };
  return guardSend(s3, describe, guard);
}

export function guardSecretsClient(secrets: SecretsManagerClient, guard: PolicyGuard, arns: LocalArns): SecretsManagerClient {
  const describe = (command: unknown): AuthorizationRequest[] => {
    if (command instanceof GetSecretValueCommand) {
      return [{ action: 'secretsmanager:GetSecretValue', resource: arns.secretArn(command.input.SecretId ?? '') }];
    }
    return unknownCall('Secrets Manager', command);
  };
  return guardSend(secrets, describe, guard);
}
