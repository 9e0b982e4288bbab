// The upload reaper: a cron job that aborts multipart sessions (and deletes unconfirmed one-shot
// objects) idle longer than the documented idle time, so abandoned uploads stop billing; settles
// one-shot grants once their URL has expired (releasing their reservation); and re-reads the
// parts of open sessions, so the bill follows what the store holds. With several instances on
// one database, each period's sweep runs on one of them only (startReaper).
import { CronJob } from 'cron';
import type { SqlDatabase } from '../../../../src/store/sql.js';
import type { UploadSession } from '../../../../src/store/sync-billing.js';
import type { StorageContext } from './storage-context.js';
import { grantTarget, moveUpload, recordParts, uploadObject } from './uploads.js';

/** Every ten minutes, at second 0. */
export const DEFAULT_REAPER_SCHEDULE = '0 */10 * * * *';
/** A PUT that started before its URL expired may still be arriving this long after. */
export const EXPIRED_GRACE_MS = 15 * 60 * 1000;
const BATCH = 500;

type ReaperContext = Pick<StorageContext, 'store' | 'objects' | 'clock' | 'limits' | 'logger'>;

/** Records the parts the object store holds for an open session (they bill until it ends). */
export async function recordStoredParts(c: Pick<StorageContext, 'store' | 'objects'>, s: UploadSession): Promise<void> {
  if (s.state !== 'open' || !s.store_upload_id) return;
  const parts = await c.objects.listParts(uploadObject(s), s.store_upload_id);
  await recordParts(c.store, s.id, parts.map((p) => ({ part_number: p.partNumber, size_bytes: p.size, etag: p.etag })));
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

/** Deletes what an ended upload wrote; never a legacy upload's object while its blob is recorded there. */
async function release(c: ReaperContext, s: UploadSession, was: UploadSession['state']): Promise<void> {
  if (was === 'open' && s.store_upload_id) return c.objects.abortMultipart(uploadObject(s), s.store_upload_id);
  if (!s.object_key) {
    if (!(await c.store.blob(s.app_id, s.user_id, s.hash))) await c.objects.delete(uploadObject(s));
    return;
  }
  if (was === 'single' || was === 'rejected' || was === 'promoting') await c.objects.delete(grantTarget(s));
  await c.objects.delete(uploadObject(s));
}

async function reap(c: ReaperContext, s: UploadSession): Promise<boolean> {
  // The state moves first: a racing complete or confirm then finds the session gone, not half-deleted.
  if (!(await moveUpload(c.store, s.id, [s.state], 'reaped', c.clock.now()))) return false;
  try {
    await release(c, s, s.state);
  } catch (err) {
    c.logger.warn({ upload_id: s.id, err: (err as Error).message }, 'reaper could not release an upload');
  }
  return true;
}

/**
 * Settles uploads nothing can confirm any more: grants whose URL expired (plus grace) with no
 * bytes stored, grants and completed sessions of a blob another upload confirmed, and uploads
 * refused at confirm. Their reservations end; their objects are deleted. Confirmed grants lose
 * their staged copy once their URL has expired.
 */
export async function settleUploads(c: ReaperContext): Promise<number> {
  const before = c.clock.now() - EXPIRED_GRACE_MS;
  let settled = 0;
  let after = '';
  for (;;) {
    const batch = await c.store.settleCandidates(before, BATCH, after);
    for (const s of batch) {
      if (s.state === 'confirmed') {
        // The blob lives in the upload's own object; the staged copy its URL wrote can go.
        if (s.object_key) await c.objects.delete(grantTarget(s));
        await c.store.clearExpiry(s.id);
        continue;
      }
      const confirmed = (await c.store.blob(s.app_id, s.user_id, s.hash)) !== undefined;
      const done = s.state === 'rejected' || confirmed || (s.state === 'single' && !(await c.objects.head(grantTarget(s))));
      if (done && (await reap(c, s))) settled++;
    }
    if (batch.length < BATCH) break;
    after = batch[batch.length - 1]!.id;
  }
  return settled;
}

/** One sweep; returns how many uploads it reaped (idle ones, then settled ones). */
export async function reapIdleUploads(c: ReaperContext): Promise<number> {
  const before = c.clock.now() - c.limits.uploadIdleMs;
  let reaped = 0;
  for (;;) {
    const idle = await c.store.idleUploads(before, BATCH);
    let moved = 0;
    for (const s of idle) if (await reap(c, s)) moved++;
    reaped += moved;
    if (idle.length < BATCH || moved === 0) break;
  }
  reaped += await settleUploads(c);
  if (reaped > 0) c.logger.info({ reaped }, 'reaped idle uploads');
  return reaped;
}

/** The job name under which instances take turns running the reaper (SqlDatabase.exclusive). */
export const REAPER_JOB = 'sync-upload-reaper';

/**
 * One sweep a period across every instance: each instance's cron fires, and the sweep runs only
 * where `exclusive` holds the job's lock and claims the period (the tick's scheduled time), both
 * on the database, so nothing about it lives in one process.
 */
export function startReaper(c: ReaperContext, schedule: string, sql: Pick<SqlDatabase, 'exclusive'>): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const sweep = (period: number): Promise<boolean> =>
    sql.exclusive(
      REAPER_JOB,
      async () => {
        c.logger.debug({ job: REAPER_JOB, period: new Date(period).toISOString() }, 'upload reaper run');
        await reapIdleUploads(c);
        await refreshOpenParts(c);
      },
      { period },
    );
  // The scheduled time of the coming tick: every instance names a period by it, whenever its timer fires.
  let upcoming = 0;
  const job = CronJob.from({
    cronTime: schedule,
    start: false,
    onTick: () => {
      const period = upcoming;
      // A timer that fires a little early still sees this tick as next: take the first one after it.
      upcoming = job.nextDates(2).map((d) => d.toMillis()).find((t) => t > period) ?? period + 1;
      // One sweep at a time; a slow sweep makes the next tick a no-op.
      if (running) return;
      running = sweep(period)
        .catch((err: unknown) => c.logger.error({ err: (err as Error).message }, 'upload reaper failed'))
        .finally(() => (running = undefined));
    },
  });
  upcoming = job.nextDate().toMillis();
  job.start();
  return {
    async stop() {
      await job.stop();
      await running;
    },
  };
}
