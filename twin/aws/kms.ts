import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign, verify } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { z } from 'zod';
import { closeServer, LOCAL_HOST, listen } from '../../src/http/listen.js';
import { BodyTooLargeError, readBody } from '../../src/http/read-body.js';
import { stopOnce } from './stop-once.js';

/**
 * A local stand-in for AWS KMS's asymmetric signing keys: the JSON 1.1
 * protocol (`X-Amz-Target: TrentService.<Operation>`) for Sign, Verify,
 * GetPublicKey and DescribeKey, so @aws-sdk/client-kms works against it
 * unchanged. Keys are ECC_NIST_P256 (ECDSA_SHA_256, DER signatures, as KMS).
 *
 * The private keys never leave this endpoint: no operation returns them. Sign
 * is answered only for the signer's access key id (the one credential the
 * stack hands to the function that may sign); every other caller gets
 * AccessDeniedException, as a role without kms:Sign in the key policy would on
 * AWS. GetPublicKey, Verify and DescribeKey are open, like a key policy that
 * lets auditors read the public half. Only the access key id of the request's
 * SigV4 Authorization header is read, not its signature: like the rest of the
 * local stack this demonstrates the split of roles, it is not a boundary (the
 * key file in the data folder is readable by anyone with a shell).
 */

export interface LocalKmsOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Keys and the signer's credential persist in `<directory>/keys.json`; omitted: in memory. */
  directory?: string;
  /** Aliases (`alias/<name>`) that must exist after start; each gets its own key the first time. */
  aliases: readonly string[];
  region: string;
  accountId: string;
}

export interface LocalKms {
  endpoint: string;
  /** The credential Sign accepts; hand it only to the function that signs. */
  signer: { accessKeyId: string; secretAccessKey: string };
  /** alias -> key ARN. */
  keyArns: Record<string, string>;
  stop(): Promise<void>;
}

const KeyFile = z.object({
  version: z.literal(1),
  signer: z.object({ accessKeyId: z.string().min(16), secretAccessKey: z.string().min(16) }),
  keys: z.array(
    z.object({ keyId: z.string().uuid(), alias: z.string().startsWith('alias/'), privateKeyPem: z.string(), createdAt: z.string() }),
  ),
});
type KeyFile = z.infer<typeof KeyFile>;

const SIGNING_ALGORITHM = 'ECDSA_SHA_256';
/** KMS's own limit on a RAW message. */
const MAX_RAW_MESSAGE_BYTES = 4096;

class KmsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

function loadOrCreate(path: string | undefined, aliases: readonly string[]): KeyFile {
  let file: KeyFile | undefined;
  if (path && existsSync(path)) {
    const parsed = KeyFile.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (!parsed.success)
      throw new Error(`local KMS: ${path} is not a key file (${parsed.error.issues[0]?.message}); move it away to start anew`);
    file = parsed.data;
  }
  file ??= {
    version: 1,
    signer: {
      accessKeyId: `AKIALOCALSIGNER${randomBytes(6).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(24).toString('base64'),
    },
    keys: [],
  };
  // Written only when a key is created: a reader (verify on a folder without a key) leaves the folder as it was.
  let changed = false;
  for (const alias of aliases) {
    if (file.keys.some((k) => k.alias === alias)) continue;
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    file.keys.push({
      keyId: randomUUID(),
      alias,
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      createdAt: new Date().toISOString(),
    });
    changed = true;
  }
  if (path && changed) {
    writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
  }
  return file;
}

/** The access key id a SigV4-signed request was made with (`Credential=<id>/<date>/...`). */
function accessKeyIdOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization ?? '';
  return /Credential=([^/,\s]+)\//.exec(header)?.[1];
}

export async function startLocalKms(options: LocalKmsOptions): Promise<LocalKms> {
  if (options.directory) mkdirSync(options.directory, { recursive: true });
  const file = loadOrCreate(options.directory ? join(options.directory, 'keys.json') : undefined, options.aliases);
  const arnOf = (keyId: string) => `arn:aws:kms:${options.region}:${options.accountId}:key/${keyId}`;
  const keys = file.keys.map((k) => {
    const privateKey = createPrivateKey(k.privateKeyPem);
    return { ...k, arn: arnOf(k.keyId), privateKey, publicKey: createPublicKey(privateKey) };
  });

  const find = (keyId: unknown) => {
    if (typeof keyId !== 'string' || keyId === '') throw new KmsError('ValidationException', 'KeyId is required');
    const aliasName = keyId.startsWith('arn:') && keyId.includes(':alias/') ? keyId.slice(keyId.indexOf(':alias/') + 1) : keyId;
    const key = keys.find((k) => k.alias === aliasName || k.keyId === keyId || k.arn === keyId);
    if (!key) throw new KmsError('NotFoundException', `Key '${keyId}' does not exist`);
    return key;
  };
  const message = (body: Record<string, unknown>): Buffer => {
    if (body['MessageType'] !== undefined && body['MessageType'] !== 'RAW') {
      throw new KmsError('ValidationException', 'this local KMS signs RAW messages only (MessageType RAW)');
    }
    if (body['SigningAlgorithm'] !== SIGNING_ALGORITHM) {
      throw new KmsError('InvalidKeyUsageException', `the key signs with ${SIGNING_ALGORITHM} only`);
    }
    const bytes = Buffer.from(String(body['Message'] ?? ''), 'base64');
    if (bytes.length === 0 || bytes.length > MAX_RAW_MESSAGE_BYTES) {
      throw new KmsError('ValidationException', `Message must be 1 to ${MAX_RAW_MESSAGE_BYTES} bytes`);
    }
    return bytes;
  };
  const metadata = (key: (typeof keys)[number]) => ({
    AWSAccountId: options.accountId,
    Arn: key.arn,
    KeyId: key.keyId,
    CreationDate: Date.parse(key.createdAt) / 1000,
    Enabled: true,
    KeyState: 'Enabled',
    KeyUsage: 'SIGN_VERIFY',
    KeySpec: 'ECC_NIST_P256',
    CustomerMasterKeySpec: 'ECC_NIST_P256',
    SigningAlgorithms: [SIGNING_ALGORITHM],
    KeyManager: 'CUSTOMER',
    Origin: 'AWS_KMS',
  });

  const operations: Record<string, (body: Record<string, unknown>, req: IncomingMessage) => unknown> = {
    Sign(body, req) {
      const key = find(body['KeyId']);
      if (accessKeyIdOf(req) !== file.signer.accessKeyId) {
        throw new KmsError('AccessDeniedException', `the caller is not authorized to perform kms:Sign on ${key.arn}`);
      }
      const signature = sign('sha256', message(body), { key: key.privateKey, dsaEncoding: 'der' });
      return { KeyId: key.arn, Signature: signature.toString('base64'), SigningAlgorithm: SIGNING_ALGORITHM };
    },
    Verify(body) {
      const key = find(body['KeyId']);
      const signature = Buffer.from(String(body['Signature'] ?? ''), 'base64');
      if (!verify('sha256', message(body), { key: key.publicKey, dsaEncoding: 'der' }, signature)) {
        throw new KmsError('KMSInvalidSignatureException', 'the signature is not valid for this key and message');
      }
      return { KeyId: key.arn, SignatureValid: true, SigningAlgorithm: SIGNING_ALGORITHM };
    },
    GetPublicKey(body) {
      const key = find(body['KeyId']);
      return {
        KeyId: key.arn,
        PublicKey: (key.publicKey.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64'),
        KeySpec: 'ECC_NIST_P256',
        CustomerMasterKeySpec: 'ECC_NIST_P256',
        KeyUsage: 'SIGN_VERIFY',
        SigningAlgorithms: [SIGNING_ALGORITHM],
      };
    },
    DescribeKey(body) {
      return { KeyMetadata: metadata(find(body['KeyId'])) };
    },
  };

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const target = String(req.headers['x-amz-target'] ?? '');
        const operation = target.startsWith('TrentService.') ? operations[target.slice('TrentService.'.length)] : undefined;
        if (req.method !== 'POST' || !operation) throw new KmsError('UnknownOperationException', `unsupported operation ${target}`);
        const raw = await readBody(req, 64 * 1024);
        const body = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
        answer(res, 200, operation(body, req));
      } catch (error) {
        if (error instanceof KmsError) answer(res, 400, { __type: error.type, message: error.message });
        else if (error instanceof BodyTooLargeError) answer(res, 413, { __type: 'ValidationException', message: error.message });
        else answer(res, 500, { __type: 'KMSInternalException', message: (error as Error).message });
      }
    })();
  });
  const port = await listen(server, options.port ?? 0);
  return {
    endpoint: `http://${LOCAL_HOST}:${port}`,
    signer: { ...file.signer },
    keyArns: Object.fromEntries(keys.map((k) => [k.alias, k.arn])),
    stop: stopOnce(() => closeServer(server)),
  };
}

/** Reads the signer's credential of a data folder's local KMS without starting it (a CLI on a folder a running stack holds). */
export function localKmsSigner(directory: string): LocalKms['signer'] | undefined {
  const path = join(directory, 'keys.json');
  if (!existsSync(path)) return undefined;
  const parsed = KeyFile.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  return parsed.success ? parsed.data.signer : undefined;
}
