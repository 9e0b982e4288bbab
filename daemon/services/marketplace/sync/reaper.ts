// The upload reaper: a cron job that aborts multipart sessions (and deletes unconfirmed one-shot
// objects) idle longer than the documented idle time, so abandoned uploads stop billing; each
// sweep also re-reads the parts of open sessions, so the bill follows what the store holds.
import { CronJob } from 'cron';
import { blobKey } from '../../../../src/sync-objects/store.js';
import type { UploadSession } from '../../../../src/store/sync-billing.js';
import type { StorageContext } from './storage-context.js';

/** Every ten minutes, at second 0. */
export const DEFAULT_REAPER_SCHEDULE = '0 */10 * * * *';
const BATCH = 500;

type ReaperContext = Pick<StorageContext, 'store' | 'objects' | 'clock' | 'limits' | 'logger'>;

/** Records the parts the object store holds for an open session (they bill until it ends). */
export async function recordStoredParts(c: Pick<StorageContext, 'store' | 'objects'>, s: UploadSession): Promise<void> {
  if (s.state !== 'open' || !s.store_upload_id) return;
  const parts = await c.objects.listParts(blobKey(s.app_id, s.user_id, s.hash), s.store_upload_id);
  await c.store.recordParts(s.id, parts.map((p) => ({ part_number: p.partNumber, size_bytes: p.size, etag: p.etag })));
}

/** Re-reads the stored parts of every open session. */
export async function refreshOpenParts(c: ReaperContext): Promise<void> {
  let after = '';
  for (;;) {
    const open = await c.store.openUploads(BATCH, after);
    for (const s of open) await recordStoredParts(c, s);
    if (open.length < BATCH) return;
    after = open[open.length - 1]!.id;
  }
}

/** One sweep; returns how many sessions it reaped. */
export async function reapIdleUploads(c: ReaperContext): Promise<number> {
  const before = c.clock.now() - c.limits.uploadIdleMs;
  let reaped = 0;
  for (;;) {
    const idle = await c.store.idleUploads(before, BATCH);
    for (const s of idle) {
      const key = blobKey(s.app_id, s.user_id, s.hash);
      // The state moves first: a racing complete or confirm then finds the session gone, not half-deleted.
      if (!(await c.store.moveUpload(s.id, [s.state], 'reaped', c.clock.now()))) continue;
      try {
        if (s.state === 'open' && s.store_upload_id) await c.objects.abortMultipart(key, s.store_upload_id);
        else if (s.state === 'single' && !(await c.store.blob(s.app_id, s.user_id, s.hash))) await c.objects.delete(key);
      } catch (err) {
        c.logger.warn({ upload_id: s.id, err: (err as Error).message }, 'reaper could not release an upload');
      }
      reaped++;
    }
    if (idle.length < BATCH) break;
  }
  if (reaped > 0) c.logger.info({ reaped }, 'reaped idle uploads');
  return reaped;
}

export function startReaper(c: ReaperContext, schedule: string): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const job = CronJob.from({
    cronTime: schedule,
    start: true,
    onTick: () => {
      // One sweep at a time; a slow sweep makes the next tick a no-op.
      if (running) return;
      running = reapIdleUploads(c)
        .then(() => refreshOpenParts(c))
        .catch((err: unknown) => c.logger.error({ err: (err as Error).message }, 'upload reaper failed'))
        .finally(() => (running = undefined));
    },
  });
  return {
    async stop() {
      await job.stop();
      await running;
    },
  };
}
