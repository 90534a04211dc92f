/**
 * The AWS twin as the product's CLI sees it: the emulators a data folder is opened on without the embedded runtime
 * (DynamoDB, S3, KMS) and the local SES inbox's address. The one module of twin/aws that src/ may import
 * (.dependency-cruiser.mjs, "product-reaches-scaffolding-through-entry-points").
 */
export { awsClientConfig } from './aws-config.js';
export { createTables, startLocalDynamoDb } from './dynamodb.js';
export { localKmsSigner, startLocalKms } from './kms.js';
export { startLocalS3 } from './s3.js';
export { inboxAddress, type StoredEmail } from './ses.js';
