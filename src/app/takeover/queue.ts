import { writeIdentity } from '../../domain/claim.js';
import type { Services } from '../services.js';
import type { ItemState } from '../guarded-write/state.js';
import { evidenceKey } from '../ports/evidence.js';
import { log } from '../../observability/telemetry.js';
import type { OpenResult, TakeoverEntry } from '../ports/takeovers.js';
import { html, joinHtml } from '../../http/html.js';
import type { KnownFacts } from '../../domain/known-facts.js';

/**
 * Putting an item in the human takeover queue and telling operators. The
 * queue is where the machine hands over what it refused to decide, with the
 * evidence a person needs to decide instead.
 */

/** The last step of the guarded path that left a result in the workflow state. */
export function stageReached(state: ItemState): string {
  if (state.compensation) return 'compensation';
  if (state.readback) return 'readback';
  if (state.write || state.writeError) return 'write';
  if (state.approval) return 'approval';
  if (state.snapshot) return 'snapshot';
  if (state.claim) return 'claim';
  return 'routing';
}

/** Every evidence object of the item: what the state carries plus what failed steps stored but could not pass on. */
async function evidenceOf(s: Services, state: ItemState): Promise<string[]> {
  const carried = [...(state.snapshot?.evidence ?? []), ...(state.write?.evidence ?? []), ...(state.readback?.evidence ?? [])].map(
    (e) => e.key,
  );
  // A failed write stores its screenshot and trace before throwing; only the bucket knows about them.
  const stored = await s.evidence.list(evidenceKey(state.item, '')).catch(() => [] as string[]);
  return [...new Set([...carried, ...stored])].sort();
}

export interface EnqueueInput {
  state: ItemState;
  executionArn: string;
  claimVersion: number;
  reason: string;
  /** What the reason says, as fields (src/domain/reason.ts). */
  known?: KnownFacts;
  errorName: string | null;
}

/**
 * Opens (or reopens) the item's queue entry and notifies operators once per
 * round. Safe to run again for the same execution: nothing changes and a
 * notification that already went out is not repeated.
 */
export async function enqueueTakeover(s: Services, input: EnqueueInput): Promise<OpenResult> {
  const { state } = input;
  const { item } = state;
  const opened = await s.takeovers.open({
    ...writeIdentity(item),
    reason: input.reason,
    ...(input.known ? { known: input.known } : {}),
    errorName: input.errorName,
    tier: state.write?.tier ?? item.tier,
    stage: stageReached(state),
    degraded: state.readback?.degraded ?? false,
    evidence: await evidenceOf(s, state),
    evidenceBucket: s.evidence.bucket,
    executionArn: input.executionArn,
    claimVersion: input.claimVersion,
  });
  if (opened.entry.status === 'OPEN' && opened.entry.notifiedAt === undefined) await notifyOperators(s, opened.entry);
  return opened;
}

export function evidenceLink(entry: Pick<TakeoverEntry, 'evidenceBucket'>, key: string): string {
  return `s3://${entry.evidenceBucket}/${key}`;
}

/** One WARN log line (CloudWatch Logs on AWS) and a mail to operators.notify; a mail failure is recorded, never fatal. */
export async function notifyOperators(s: Services, entry: TakeoverEntry): Promise<{ notified: string[]; error?: string }> {
  log().warn(
    `takeover ${entry.round > 1 ? `reopened (round ${entry.round})` : 'opened'}: ${entry.tenant} ${entry.billNo} ${entry.action}: ${entry.reason}`,
    { tenant: entry.tenant, idempotencyKey: entry.key, billNo: entry.billNo, action: entry.action, round: entry.round },
  );
  const recipients = s.config.operators.notify;
  if (recipients.length === 0) {
    await s.takeovers.recordNotification(entry.key, entry.round, []);
    return { notified: [] };
  }
  const lines = [
    `租户 Tenant: ${entry.tenant}`,
    `单号 Bill: ${entry.billNo}`,
    `动作 Action: ${entry.action}`,
    `身份 Identity: ${entry.identity}`,
    `原因 Reason: ${entry.reason}`,
    `错误 Error: ${entry.errorName ?? '—'}`,
    `停在 Stopped after: ${entry.stage} (tier ${entry.tier}${entry.degraded ? ', degraded readback' : ''})`,
    `幂等键 Key: ${entry.key}`,
    `执行 Execution: ${entry.executionArn}`,
  ];
  const links = entry.evidence.map((key) => evidenceLink(entry, key));
  const commands = [
    `paperclip takeover show ${entry.key}`,
    `paperclip takeover resolve ${entry.key} --as done|retry|abandon --note "<what you checked or did>" --operator <your email>`,
  ];
  try {
    await s.mail.send({
      to: recipients,
      subject: `[Paperclip] 人工接管 Takeover: ${entry.tenant} ${entry.billNo} ${entry.action}`,
      text: `${lines.join('\n')}\n\n证据 Evidence:\n${links.join('\n') || '—'}\n\n处理 Resolve:\n${commands.join('\n')}\n`,
      html:
        html`<p>${joinHtml(lines, html`<br>`)}</p>`.value +
        html`<p>证据 Evidence:<br>${links.length ? joinHtml(links, html`<br>`) : '—'}</p>`.value +
        html`<p>处理 Resolve:<br><code>${joinHtml(commands, html`</code><br><code>`)}</code></p>`.value,
    });
    await s.takeovers.recordNotification(entry.key, entry.round, recipients);
    return { notified: recipients };
  } catch (error) {
    const message = `${(error as Error).name}: ${(error as Error).message}`;
    log().warn(`takeover: could not mail ${recipients.join(', ')}: ${message}`, { tenant: entry.tenant, idempotencyKey: entry.key });
    await s.takeovers.recordNotification(entry.key, entry.round, [], message);
    return { notified: [], error: message };
  }
}
