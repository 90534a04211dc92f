import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { appendFile, copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * Bucket versioning and Object Lock for s3rver, which has neither: a Koa
 * middleware in front of s3rver's router that keeps every version of every
 * object of a versioned bucket, the way S3 keeps them.
 *
 * s3rver's own store stays the "current version" view (what a GET without a
 * version id, a HEAD, ListObjectsV2 and GetObjectAttributes see), so nothing
 * that reads the latest version changes. Beside it, under
 * `<s3 directory>/.versions/<bucket>/`, each bucket has `bucket.json` (its
 * versioning and Object Lock configuration), `journal.jsonl` (one line per
 * version or delete marker added, and per version removed) and `objects/`
 * (one file per version's bytes). A restart replays the journal.
 *
 * What S3 does and this does too:
 * - a PUT adds a version (`x-amz-version-id`); an existing key keeps its earlier versions;
 * - GET/HEAD with `versionId`; GET/HEAD without one of a key whose latest version is a
 *   delete marker is 404 NoSuchKey with `x-amz-delete-marker: true`;
 * - ListObjectVersions (`?versions`: prefix, key-marker, version-id-marker, max-keys);
 * - DELETE without a version id adds a delete marker and removes nothing;
 * - DELETE with a version id removes that version, unless it is under retention:
 *   COMPLIANCE never, GOVERNANCE only with `x-amz-bypass-governance-retention: true`
 *   (no IAM here to check s3:BypassGovernanceRetention); otherwise 403 AccessDenied;
 *   a delete marker has no retention and can always be removed;
 * - a bucket's default retention (PutObjectLockConfiguration, or `lockedBuckets` at
 *   start) is applied to every new version; `x-amz-object-lock-mode` and
 *   `x-amz-object-lock-retain-until-date` on a PUT override it;
 * - a PUT into a bucket with default retention, or with Object Lock headers, must
 *   carry Content-MD5 or an `x-amz-checksum-*` header (or trailer): otherwise 400
 *   InvalidRequest;
 * - GetObjectRetention, GetObjectLockConfiguration, Get/PutBucketVersioning;
 * - CreateBucket with `x-amz-bucket-object-lock-enabled: true` turns on versioning and Object Lock.
 *
 * What it does not: legal holds, PutObjectRetention, lifecycle expiry of noncurrent
 * versions, DeleteObjects on a versioned bucket (refused as NotImplemented rather
 * than letting s3rver remove objects outright), suspended versioning, MFA delete.
 */

const require = createRequire(import.meta.url);
type S3ErrorClass = new (code: string, message: string, detail?: Record<string, unknown>) => Error & { status: number };
const S3Error = require('s3rver/lib/models/error') as S3ErrorClass;
const S3Object = require('s3rver/lib/models/object') as new (
  bucket: string,
  key: string,
  content: Buffer | null,
  metadata: Record<string, unknown>,
) => object;
const authentication = require('s3rver/lib/middleware/authentication') as () => KoaMiddleware;

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  headers: Record<string, string | string[] | undefined>;
  params: Record<string, string | undefined>;
  state: Record<string, unknown>;
  req: NodeJS.ReadableStream;
  status: number;
  body: unknown;
  length?: number;
  type: string;
  set(field: string, value: string): void;
}
type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

/** The part of s3rver's FilesystemStore this layer uses. */
interface S3rverStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  getMetadata(bucket: string, key: string): Promise<Record<string, string | number>>;
  existsObject(bucket: string, key: string): Promise<boolean>;
  deleteObject(bucket: string, key: string): Promise<void>;
  putObject(object: object): Promise<{ size: number; md5: string }>;
  getBucket(bucket: string): Promise<unknown>;
  listBuckets(): Promise<Array<{ name: string }>>;
  listObjects(bucket: string, options: { prefix?: string; maxKeys?: number }): Promise<{ objects: Array<{ key: string }> }>;
}

export const VERSIONS_FOLDER = '.versions';

export type RetentionMode = 'COMPLIANCE' | 'GOVERNANCE';

export interface DefaultRetention {
  mode: RetentionMode;
  days: number;
}

/** A bucket created with Object Lock (and so versioning) enabled, with an optional default retention. */
export interface LockedBucket {
  name: string;
  defaultRetention?: DefaultRetention;
}

const BucketConfig = z.strictObject({
  versioning: z.literal('Enabled'),
  objectLock: z.boolean(),
  defaultRetention: z.strictObject({ mode: z.enum(['COMPLIANCE', 'GOVERNANCE']), days: z.number().int().positive() }).optional(),
});
type BucketConfig = z.infer<typeof BucketConfig>;

const VersionRecord = z.strictObject({
  key: z.string(),
  versionId: z.string(),
  deleteMarker: z.boolean(),
  lastModified: z.string(),
  size: z.number().int().min(0).optional(),
  etag: z.string().optional(),
  /** The headers s3rver stored with the object (content type, user metadata). */
  metadata: z.record(z.string(), z.string()).optional(),
  retention: z.strictObject({ mode: z.enum(['COMPLIANCE', 'GOVERNANCE']), until: z.string() }).optional(),
});
type VersionRecord = z.infer<typeof VersionRecord>;

const JournalLine = z.discriminatedUnion('op', [
  VersionRecord.extend({ op: z.literal('add') }),
  z.strictObject({ op: z.literal('remove'), key: z.string(), versionId: z.string() }),
]);

interface BucketState {
  config: BucketConfig;
  dir: string;
  /** Versions of each key, oldest first. */
  keys: Map<string, VersionRecord[]>;
}

/** A version id S3 could have issued: 32 URL-safe characters. */
const newVersionId = () => randomBytes(24).toString('base64url');
/** The version id S3 reports for an object stored before versioning was enabled. */
const NULL_VERSION = 'null';

export class ObjectVersions {
  private readonly buckets = new Map<string, BucketState>();
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: S3rverStore,
    private readonly root: string,
  ) {
    mkdirSync(root, { recursive: true });
    for (const name of readdirSync(root)) this.load(name);
  }

  /** Versioning and Object Lock on (idempotent); a later call may set or change the default retention. */
  async lock(bucket: LockedBucket): Promise<void> {
    await this.configure(bucket.name, {
      versioning: 'Enabled',
      objectLock: true,
      ...(bucket.defaultRetention ? { defaultRetention: bucket.defaultRetention } : {}),
    });
  }

  /** The configuration of a versioned bucket; undefined for one without versioning. */
  config(bucket: string): BucketConfig | undefined {
    return this.buckets.get(bucket)?.config;
  }

  private load(name: string): void {
    const dir = join(this.root, name);
    const configFile = join(dir, 'bucket.json');
    if (!existsSync(configFile)) return;
    const parsed = BucketConfig.safeParse(JSON.parse(readFileSync(configFile, 'utf8')));
    if (!parsed.success) {
      throw new Error(
        `${configFile}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}; fix or remove the file`,
      );
    }
    const state: BucketState = { config: parsed.data, dir, keys: new Map() };
    const journal = join(dir, 'journal.jsonl');
    const lines = existsSync(journal) ? readFileSync(journal, 'utf8').split('\n') : [];
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (error) {
        // A crash while appending leaves at most a torn last line: that version was never acknowledged.
        if (i >= lines.length - 2) return;
        throw new Error(`${journal} line ${i + 1}: ${(error as Error).message}`);
      }
      const entry = JournalLine.parse(json);
      const versions = state.keys.get(entry.key) ?? [];
      if (entry.op === 'remove') {
        const remaining = versions.filter((v) => v.versionId !== entry.versionId);
        if (remaining.length > 0) state.keys.set(entry.key, remaining);
        else state.keys.delete(entry.key);
      } else {
        const { op: _op, ...record } = entry;
        versions.push(record);
        state.keys.set(entry.key, versions);
      }
    });
    this.buckets.set(name, state);
  }

  private async configure(bucket: string, config: BucketConfig): Promise<BucketState> {
    const dir = join(this.root, bucket);
    mkdirSync(join(dir, 'objects'), { recursive: true });
    await writeFile(join(dir, 'bucket.json'), `${JSON.stringify(config, null, 2)}\n`);
    const state = this.buckets.get(bucket) ?? { config, dir, keys: new Map<string, VersionRecord[]>() };
    state.config = config;
    this.buckets.set(bucket, state);
    return state;
  }

  /** One operation at a time per key, so a version and the current view never disagree. */
  private serial<T>(bucket: string, key: string, run: () => Promise<T>): Promise<T> {
    const id = `${bucket}\u0000${key}`;
    const previous = this.locks.get(id) ?? Promise.resolve();
    const result = previous.then(run, run);
    const settled = result.catch(() => undefined);
    this.locks.set(id, settled);
    void settled.then(() => {
      if (this.locks.get(id) === settled) this.locks.delete(id);
    });
    return result;
  }

  private async record(state: BucketState, entry: z.infer<typeof JournalLine>): Promise<void> {
    await appendFile(join(state.dir, 'journal.jsonl'), `${JSON.stringify(entry)}\n`);
  }

  private objectFile(state: BucketState, versionId: string): string {
    return join(state.dir, 'objects', versionId);
  }

  /** Copies what s3rver now holds as the key's current object into a new version. */
  private async snapshot(state: BucketState, bucket: string, key: string, versionId: string, retention?: VersionRecord['retention']) {
    const metadata = await this.store.getMetadata(bucket, key);
    await copyFile(this.store.getResourcePath(bucket, key, 'object'), this.objectFile(state, versionId));
    const kept: Record<string, string> = {};
    for (const [name, value] of Object.entries(metadata)) {
      if (!['etag', 'last-modified', 'content-length'].includes(name)) kept[name] = String(value);
    }
    const record: VersionRecord = {
      key,
      versionId,
      deleteMarker: false,
      lastModified: new Date().toISOString(),
      size: Number(metadata['content-length']),
      etag: String(metadata['etag']),
      metadata: kept,
      ...(retention ? { retention } : {}),
    };
    await this.record(state, { op: 'add', ...record });
    const versions = state.keys.get(key) ?? [];
    versions.push(record);
    state.keys.set(key, versions);
    return record;
  }

  /** An object s3rver held before its bucket was versioned becomes the key's "null" version, as in S3. */
  private async adoptUnversioned(state: BucketState, bucket: string, key: string): Promise<void> {
    if (state.keys.has(key) || !(await this.store.existsObject(bucket, key))) return;
    await this.snapshot(state, bucket, key, NULL_VERSION);
  }

  /** Makes s3rver's current object the latest real version again (or none, under a delete marker). */
  private async restoreCurrent(state: BucketState, bucket: string, key: string): Promise<void> {
    const latest = state.keys.get(key)?.at(-1);
    if (!latest || latest.deleteMarker) {
      if (await this.store.existsObject(bucket, key)) await this.store.deleteObject(bucket, key);
      return;
    }
    const content = await readFile(this.objectFile(state, latest.versionId));
    await this.store.putObject(new S3Object(bucket, key, content, { ...latest.metadata }));
  }

  middleware(): KoaMiddleware {
    const authenticate = authentication();
    return async (ctx, next) => {
      const [bucketSegment, ...keySegments] = ctx.path.replace(/^\//, '').split('/');
      const bucket = decodeURIComponent(bucketSegment ?? '');
      const key = keySegments.length > 0 ? decodeURIComponent(keySegments.join('/')) : '';
      if (!bucket) return next();
      const q = ctx.query;
      const state = this.buckets.get(bucket);
      const handle = (run: () => Promise<void>) => {
        ctx.params = { ...(ctx.params ?? {}), bucket, ...(key ? { key } : {}) };
        return authenticate(ctx, async () => {
          if (!(await this.store.getBucket(bucket))) {
            throw new S3Error('NoSuchBucket', 'The specified bucket does not exist', { BucketName: bucket });
          }
          await run();
        });
      };
      if (!key) {
        if (ctx.method === 'GET' && 'versions' in q) return handle(() => this.listVersions(ctx, bucket));
        if (ctx.method === 'GET' && 'versioning' in q) return handle(async () => this.getVersioning(ctx, bucket));
        if (ctx.method === 'PUT' && 'versioning' in q) return handle(() => this.putVersioning(ctx, bucket));
        if (ctx.method === 'GET' && 'object-lock' in q) return handle(async () => this.getLockConfiguration(ctx, bucket));
        if (ctx.method === 'PUT' && 'object-lock' in q) return handle(() => this.putLockConfiguration(ctx, bucket));
        if (ctx.method === 'POST' && 'delete' in q && state) {
          // s3rver's DeleteObjects removes current objects outright: on a versioned bucket it would bypass the lock.
          return handle(async () => {
            throw new S3Error('NotImplemented', 'DeleteObjects on a versioned bucket is not implemented by the local S3; use DeleteObject');
          });
        }
        if (ctx.method === 'PUT' && Object.keys(q).length === 0 && header(ctx, 'x-amz-bucket-object-lock-enabled') === 'true') {
          await next();
          if (ctx.status < 300) await this.lock({ name: bucket });
          return;
        }
        return next();
      }
      const versionId = typeof q['versionId'] === 'string' ? q['versionId'] : undefined;
      if ((ctx.method === 'GET' || ctx.method === 'HEAD') && 'retention' in q)
        return handle(() => this.getRetention(ctx, bucket, key, versionId));
      if (!state) {
        // An unversioned bucket has only the "null" version, which s3rver serves.
        if (versionId !== undefined && versionId !== NULL_VERSION) {
          return handle(async () => {
            throw new S3Error('InvalidArgument', 'Invalid version id specified', { ArgumentName: 'versionId', ArgumentValue: versionId });
          });
        }
        return next();
      }
      const method = ctx.method;
      const plainObjectRequest = !Object.keys(q).some((name) => name !== 'versionId' && name !== 'x-id');
      if (method === 'PUT' && Object.keys(q).every((name) => name === 'x-id')) {
        return this.serial(bucket, key, () => this.put(ctx, state, bucket, key, next));
      }
      if (method === 'POST' && 'uploadId' in q) {
        return this.serial(bucket, key, async () => {
          await this.adoptUnversioned(state, bucket, key);
          await next();
          if (ctx.status < 300)
            ctx.set('x-amz-version-id', (await this.snapshot(state, bucket, key, newVersionId(), this.retentionFor(ctx, state))).versionId);
        });
      }
      if ((method === 'GET' || method === 'HEAD') && plainObjectRequest) {
        if (versionId !== undefined) return handle(() => this.getVersion(ctx, state, key, versionId));
        return this.getLatest(ctx, state, key, next);
      }
      if (method === 'DELETE' && plainObjectRequest) {
        return handle(() => this.serial(bucket, key, () => this.delete(ctx, state, bucket, key, versionId)));
      }
      return next();
    };
  }

  private retentionFor(ctx: KoaContext, state: BucketState): VersionRecord['retention'] | undefined {
    const mode = header(ctx, 'x-amz-object-lock-mode');
    const until = header(ctx, 'x-amz-object-lock-retain-until-date');
    if (mode || until) {
      if ((mode !== 'COMPLIANCE' && mode !== 'GOVERNANCE') || !until || Number.isNaN(Date.parse(until))) {
        throw new S3Error(
          'InvalidRequest',
          'x-amz-object-lock-mode (COMPLIANCE or GOVERNANCE) and x-amz-object-lock-retain-until-date must be given together',
        );
      }
      if (!state.config.objectLock) throw new S3Error('InvalidRequest', 'Bucket is missing Object Lock Configuration');
      return { mode, until: new Date(until).toISOString() };
    }
    const rule = state.config.defaultRetention;
    if (!state.config.objectLock || !rule) return undefined;
    return { mode: rule.mode, until: new Date(Date.now() + rule.days * 86_400_000).toISOString() };
  }

  private async put(ctx: KoaContext, state: BucketState, bucket: string, key: string, next: () => Promise<void>): Promise<void> {
    const retention = this.retentionFor(ctx, state);
    // S3's rule: a PUT that will carry a retention period must let S3 check the bytes it locks.
    if (retention && !hasChecksum(ctx)) {
      throw new S3Error(
        'InvalidRequest',
        'Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters',
      );
    }
    await this.adoptUnversioned(state, bucket, key);
    await next();
    if (ctx.status >= 300) return;
    const record = await this.snapshot(state, bucket, key, newVersionId(), retention);
    ctx.set('x-amz-version-id', record.versionId);
  }

  private async getLatest(ctx: KoaContext, state: BucketState, key: string, next: () => Promise<void>): Promise<void> {
    const latest = state.keys.get(key)?.at(-1);
    if (latest?.deleteMarker) {
      ctx.set('x-amz-delete-marker', 'true');
      ctx.set('x-amz-version-id', latest.versionId);
    }
    await next();
    if (latest && !latest.deleteMarker && ctx.status < 300) {
      ctx.set('x-amz-version-id', latest.versionId);
      setRetentionHeaders(ctx, latest);
    }
  }

  private async getVersion(ctx: KoaContext, state: BucketState, key: string, versionId: string): Promise<void> {
    const version = state.keys.get(key)?.find((v) => v.versionId === versionId);
    if (!version) {
      throw new S3Error('NoSuchVersion', 'The specified version does not exist.', { Key: key, VersionId: versionId });
    }
    ctx.set('x-amz-version-id', version.versionId);
    if (version.deleteMarker) {
      ctx.set('x-amz-delete-marker', 'true');
      ctx.set('Last-Modified', new Date(version.lastModified).toUTCString());
      throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.', {
        Method: ctx.method,
        ResourceType: 'DeleteMarker',
      });
    }
    for (const [name, value] of Object.entries(version.metadata ?? {})) ctx.set(name, value);
    if (version.etag) ctx.set('ETag', version.etag);
    ctx.set('Last-Modified', new Date(version.lastModified).toUTCString());
    ctx.set('Accept-Ranges', 'bytes');
    setRetentionHeaders(ctx, version);
    const content = await readFile(this.objectFile(state, version.versionId));
    ctx.status = 200;
    // Koa sends no body for a HEAD, only the length.
    ctx.body = content;
    if (version.metadata?.['content-type']) ctx.type = version.metadata['content-type'];
  }

  private async delete(ctx: KoaContext, state: BucketState, bucket: string, key: string, versionId: string | undefined): Promise<void> {
    if (versionId === undefined) {
      await this.adoptUnversioned(state, bucket, key);
      const marker: VersionRecord = { key, versionId: newVersionId(), deleteMarker: true, lastModified: new Date().toISOString() };
      await this.record(state, { op: 'add', ...marker });
      state.keys.set(key, [...(state.keys.get(key) ?? []), marker]);
      if (await this.store.existsObject(bucket, key)) await this.store.deleteObject(bucket, key);
      ctx.set('x-amz-delete-marker', 'true');
      ctx.set('x-amz-version-id', marker.versionId);
      ctx.status = 204;
      ctx.body = null;
      return;
    }
    const versions = state.keys.get(key) ?? [];
    const version = versions.find((v) => v.versionId === versionId);
    if (!version) {
      throw new S3Error('InvalidArgument', 'Invalid version id specified', { ArgumentName: 'versionId', ArgumentValue: versionId });
    }
    const retention = version.retention;
    if (!version.deleteMarker && retention && Date.parse(retention.until) > Date.now()) {
      const bypass = retention.mode === 'GOVERNANCE' && header(ctx, 'x-amz-bypass-governance-retention') === 'true';
      if (!bypass) throw new S3Error('AccessDenied', 'Access Denied because object protected by object lock.');
    }
    await this.record(state, { op: 'remove', key, versionId });
    const remaining = versions.filter((v) => v !== version);
    if (remaining.length > 0) state.keys.set(key, remaining);
    else state.keys.delete(key);
    if (!version.deleteMarker) await rm(this.objectFile(state, versionId), { force: true });
    if (versions.at(-1) === version) await this.restoreCurrent(state, bucket, key);
    ctx.set('x-amz-version-id', versionId);
    if (version.deleteMarker) ctx.set('x-amz-delete-marker', 'true');
    ctx.status = 204;
    ctx.body = null;
  }

  private async getRetention(ctx: KoaContext, bucket: string, key: string, versionId: string | undefined): Promise<void> {
    const state = this.buckets.get(bucket);
    if (!state?.config.objectLock) throw new S3Error('InvalidRequest', 'Bucket is missing Object Lock Configuration');
    const versions = state.keys.get(key) ?? [];
    const version = versionId === undefined ? versions.at(-1) : versions.find((v) => v.versionId === versionId);
    if (!version || (versionId === undefined && version.deleteMarker)) {
      throw versionId === undefined
        ? new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: key })
        : new S3Error('NoSuchVersion', 'The specified version does not exist.', { Key: key, VersionId: versionId });
    }
    if (!version.retention) {
      const error = new S3Error('NoSuchObjectLockConfiguration', 'The specified object does not have a ObjectLock configuration');
      error.status = 404;
      throw error;
    }
    ctx.body = {
      Retention: {
        '@': { xmlns: 'http://s3.amazonaws.com/doc/2006-03-01/' },
        Mode: version.retention.mode,
        RetainUntilDate: version.retention.until,
      },
    };
  }

  private getVersioning(ctx: KoaContext, bucket: string): void {
    const config = this.buckets.get(bucket)?.config;
    ctx.body = {
      VersioningConfiguration: {
        '@': { xmlns: 'http://s3.amazonaws.com/doc/2006-03-01/' },
        ...(config ? { Status: config.versioning } : {}),
      },
    };
  }

  private async putVersioning(ctx: KoaContext, bucket: string): Promise<void> {
    const body = await readBody(ctx);
    const status = /<Status>\s*([A-Za-z]+)\s*<\/Status>/.exec(body)?.[1];
    const current = this.buckets.get(bucket)?.config;
    if (status === 'Enabled') {
      if (!current) await this.configure(bucket, { versioning: 'Enabled', objectLock: false });
    } else if (status === 'Suspended') {
      if (current?.objectLock) {
        throw new S3Error(
          'InvalidBucketState',
          'An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.',
        );
      }
      throw new S3Error('NotImplemented', 'Suspended versioning is not implemented by the local S3');
    } else {
      throw new S3Error('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
    }
    ctx.status = 200;
    ctx.body = '';
  }

  private getLockConfiguration(ctx: KoaContext, bucket: string): void {
    const config = this.buckets.get(bucket)?.config;
    if (!config?.objectLock) {
      const error = new S3Error('ObjectLockConfigurationNotFoundError', 'Object Lock configuration does not exist for this bucket', {
        BucketName: bucket,
      });
      error.status = 404;
      throw error;
    }
    const rule = config.defaultRetention;
    ctx.body = {
      ObjectLockConfiguration: {
        '@': { xmlns: 'http://s3.amazonaws.com/doc/2006-03-01/' },
        ObjectLockEnabled: 'Enabled',
        ...(rule ? { Rule: { DefaultRetention: { Mode: rule.mode, Days: rule.days } } } : {}),
      },
    };
  }

  private async putLockConfiguration(ctx: KoaContext, bucket: string): Promise<void> {
    const body = await readBody(ctx);
    const current = this.buckets.get(bucket)?.config;
    if (!current) {
      throw new S3Error('InvalidBucketState', "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration");
    }
    if (!/<ObjectLockEnabled>\s*Enabled\s*<\/ObjectLockEnabled>/.test(body)) {
      throw new S3Error('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
    }
    const mode = /<Mode>\s*(COMPLIANCE|GOVERNANCE)\s*<\/Mode>/.exec(body)?.[1] as RetentionMode | undefined;
    const days = /<Days>\s*(\d+)\s*<\/Days>/.exec(body)?.[1];
    const years = /<Years>\s*(\d+)\s*<\/Years>/.exec(body)?.[1];
    if (/<Rule>/.test(body) && (!mode || (days === undefined) === (years === undefined))) {
      throw new S3Error('MalformedXML', 'DefaultRetention needs a Mode and exactly one of Days or Years');
    }
    const period = days !== undefined ? Number(days) : years !== undefined ? Number(years) * 365 : undefined;
    await this.configure(bucket, {
      versioning: 'Enabled',
      objectLock: true,
      ...(mode && period ? { defaultRetention: { mode, days: period } } : {}),
    });
    ctx.status = 200;
    ctx.body = '';
  }

  private async listVersions(ctx: KoaContext, bucket: string): Promise<void> {
    const q = ctx.query;
    const text = (name: string) => (typeof q[name] === 'string' ? (q[name] as string) : '');
    const prefix = text('prefix');
    const keyMarker = text('key-marker');
    const versionIdMarker = text('version-id-marker');
    const maxKeys = q['max-keys'] !== undefined ? Number(text('max-keys')) : 1000;
    if (!Number.isInteger(maxKeys) || maxKeys < 0) {
      throw new S3Error('InvalidArgument', 'Provided max-keys not an integer or within integer range', { ArgumentName: 'max-keys' });
    }
    const state = this.buckets.get(bucket);
    const byKey = new Map<string, VersionRecord[]>();
    for (const [key, versions] of state?.keys ?? []) if (key.startsWith(prefix)) byKey.set(key, versions);
    // Objects s3rver holds that have no version (stored before versioning, or an unversioned bucket): the "null" version.
    const current = await this.store.listObjects(bucket, { prefix });
    for (const object of current.objects) {
      if (byKey.has(object.key)) continue;
      const metadata = await this.store.getMetadata(bucket, object.key);
      byKey.set(object.key, [
        {
          key: object.key,
          versionId: NULL_VERSION,
          deleteMarker: false,
          lastModified: new Date(String(metadata['last-modified'])).toISOString(),
          size: Number(metadata['content-length']),
          etag: String(metadata['etag']),
        },
      ]);
    }
    const entries: Array<{ record: VersionRecord; latest: boolean }> = [];
    for (const key of [...byKey.keys()].sort()) {
      const versions = byKey.get(key)!;
      versions
        .slice()
        .reverse()
        .forEach((record, i) => {
          entries.push({ record, latest: i === 0 });
        });
    }
    let start = 0;
    if (keyMarker) {
      const markerIndex = versionIdMarker
        ? entries.findIndex((e) => e.record.key === keyMarker && e.record.versionId === versionIdMarker)
        : -1;
      start = markerIndex >= 0 ? markerIndex + 1 : entries.findIndex((e) => e.record.key > keyMarker);
      if (start < 0) start = entries.length;
    }
    const page = entries.slice(start, start + maxKeys);
    const truncated = start + page.length < entries.length;
    const owner = { ID: '75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a', DisplayName: 'S3rver' };
    const last = page.at(-1)?.record;
    ctx.body = {
      ListVersionsResult: {
        '@': { xmlns: 'http://s3.amazonaws.com/doc/2006-03-01/' },
        Name: bucket,
        Prefix: prefix,
        KeyMarker: keyMarker,
        VersionIdMarker: versionIdMarker,
        MaxKeys: maxKeys,
        IsTruncated: truncated,
        ...(truncated && last ? { NextKeyMarker: last.key, NextVersionIdMarker: last.versionId } : {}),
        Version: page
          .filter((e) => !e.record.deleteMarker)
          .map(({ record, latest }) => ({
            Key: record.key,
            VersionId: record.versionId,
            IsLatest: latest,
            LastModified: record.lastModified,
            ETag: record.etag ?? '""',
            Size: record.size ?? 0,
            StorageClass: 'STANDARD',
            Owner: owner,
          })),
        DeleteMarker: page
          .filter((e) => e.record.deleteMarker)
          .map(({ record, latest }) => ({
            Key: record.key,
            VersionId: record.versionId,
            IsLatest: latest,
            LastModified: record.lastModified,
            Owner: owner,
          })),
      },
    };
  }
}

function header(ctx: KoaContext, name: string): string | undefined {
  const value = ctx.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Content-MD5, or an x-amz-checksum-<algorithm> value in a header or announced as a trailer. */
function hasChecksum(ctx: KoaContext): boolean {
  if (header(ctx, 'content-md5')) return true;
  if (Object.keys(ctx.headers).some((name) => name.startsWith('x-amz-checksum-') && name !== 'x-amz-checksum-type')) return true;
  return (header(ctx, 'x-amz-trailer') ?? '').toLowerCase().startsWith('x-amz-checksum-');
}

function setRetentionHeaders(ctx: KoaContext, version: VersionRecord): void {
  if (!version.retention) return;
  ctx.set('x-amz-object-lock-mode', version.retention.mode);
  ctx.set('x-amz-object-lock-retain-until-date', version.retention.until);
}

async function readBody(ctx: KoaContext): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Puts the versioning layer in front of s3rver's router (s3rver is a Koa app;
 * its middleware list is composed when it starts listening) and hides the
 * versions folder from ListBuckets.
 */
export function installObjectVersions(server: unknown, directory: string): ObjectVersions {
  const app = server as { middleware: KoaMiddleware[]; store: S3rverStore };
  const versions = new ObjectVersions(app.store, join(directory, VERSIONS_FOLDER));
  // The last middleware is s3rver's router; the ones before it encode XML bodies and resolve the bucket.
  app.middleware.splice(app.middleware.length - 1, 0, versions.middleware());
  const listBuckets = app.store.listBuckets.bind(app.store);
  app.store.listBuckets = async () => (await listBuckets()).filter((b) => b.name !== VERSIONS_FOLDER);
  return versions;
}
