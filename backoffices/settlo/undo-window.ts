import { randomBytes } from 'node:crypto';
import type { SettloAction } from './schemas.js';

/** A write the page accepted optimistically and holds in its undo window; nothing is committed yet. */
export interface HeldWrite {
  id: string;
  sid: string;
  billNo: string;
  action: Extract<SettloAction, 'settle' | 'reopen'>;
  note?: string;
  /** When the undo window ends: the page may send the write from then on, not before. */
  sendableAt: number;
  /** After this nobody sends it any more: a page that left never will. */
  expiresAt: number;
  state: 'held' | 'undone' | 'sent';
}

/** How long after its window a held write may still be sent (a slow page, a busy machine). */
const SEND_GRACE_MS = 60_000;

/**
 * The portal's optimistic writes. 确认处理 only registers the write and shows it as done in the page with an
 * 撤销 button; the page sends the write (POST .../send) when the undo window has passed, if it was not undone
 * and the page is still open. A page closed inside the window never sends it: the write is lost, and the
 * journal has nothing. The server refuses a send before the window ended or after an undo.
 */
export class UndoWindow {
  private readonly held = new Map<string, HeldWrite>();

  hold(write: Omit<HeldWrite, 'id' | 'sendableAt' | 'expiresAt' | 'state'>, windowSeconds: number, now = Date.now()): HeldWrite {
    this.prune(now);
    const entry: HeldWrite = {
      ...write,
      id: randomBytes(9).toString('base64url'),
      sendableAt: now + windowSeconds * 1000,
      expiresAt: now + windowSeconds * 1000 + SEND_GRACE_MS,
      state: 'held',
    };
    this.held.set(entry.id, entry);
    return entry;
  }

  get(id: string, sid: string, now = Date.now()): HeldWrite | undefined {
    const entry = this.held.get(id);
    if (!entry || entry.sid !== sid || entry.expiresAt < now) return undefined;
    return entry;
  }

  /** Held writes neither sent nor undone (for the control API's state). */
  open(now = Date.now()): number {
    this.prune(now);
    return [...this.held.values()].filter((w) => w.state === 'held').length;
  }

  clear(): void {
    this.held.clear();
  }

  private prune(now: number): void {
    for (const [id, w] of this.held) if (w.expiresAt < now) this.held.delete(id);
  }
}
