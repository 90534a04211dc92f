import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, TableEncryption, type Attribute } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { TABLES, tableName, type TableDefinition } from '../../src/contracts/table-definitions.js';
import type { TableId } from './function-access.js';

function attribute(key: TableDefinition['partitionKey']): Attribute {
  return { name: key.name, type: key.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER };
}

function pascal(id: string): string {
  return id.replace(/(^|-)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
}

/**
 * The DynamoDB tables, built from the shared definitions so the deployed keys
 * and indexes cannot drift from the ones the local stack creates.
 */
export class PaperclipTables extends Construct {
  readonly byId: Readonly<Record<TableId, Table>>;

  constructor(scope: Construct, id: string, props: { prefix: string }) {
    super(scope, id);
    const tables = {} as Record<TableId, Table>;
    for (const definition of TABLES) {
      const table = new Table(this, pascal(definition.id), {
        tableName: tableName(props.prefix, definition.id),
        partitionKey: attribute(definition.partitionKey),
        sortKey: definition.sortKey ? attribute(definition.sortKey) : undefined,
        billingMode: BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        // Claims and the audit chain are the record of what was done to money: never drop them with a stack.
        deletionProtection: true,
        removalPolicy: RemovalPolicy.RETAIN,
        encryption: TableEncryption.AWS_MANAGED,
        timeToLiveAttribute: definition.ttlAttribute,
      });
      for (const index of definition.indexes) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: index.sortKey ? attribute(index.sortKey) : undefined,
        });
      }
      tables[definition.id] = table;
    }
    this.byId = tables;
  }
}
