import { extname } from 'node:path';
import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { AlertMetricImagesTable } from '../../platform/db/schema.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import { RuleError } from '../../platform/errors.ts';
import { publicLinkProblem } from '../../platform/outbound-url.ts';
import { safeFileName } from '../../platform/storage/avatars.ts';
import {
  detectImageType, IMAGE_CONTENT_TYPES, imageTypeOfExtension, localFileStore, type FileStore, type UploadedFile,
} from '../../platform/storage/uploads.ts';
import { sentence } from '../notes/system-notes.ts';
import { REMOVE_STORED_FILE } from '../uploads/uploads.service.ts';

// Metric images of an alert (gitlab-areas.md §8): a safe image of at most 1 MB, checked by its extension and by its
// content (magic bytes), with an optional public link and its text. The file is kept under the project's uploads
// (so it goes with the project) behind the file store interface, and served back at `file_path` to whoever reads
// the alert, with the detected type.

export type MetricImageRow = Selectable<AlertMetricImagesTable>;

/** The reference's MAX_FILE_SIZE for metric images: 1 MB. */
export const MAX_METRIC_IMAGE_BYTES = 1024 * 1024;
/** Gitlab::FileTypeDetection::SAFE_IMAGE_EXT. */
export const SAFE_IMAGE_EXT = ['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico', 'webp'];
const URL_MAX = 255;
const URL_TEXT_MAX = 128;

export const metricImageStore = (deps: ServiceDeps): FileStore => localFileStore(deps.config.dataDir);

/** Where an image's file lives in the store. */
export function metricImageKey(image: Pick<MetricImageRow, 'id' | 'project_id' | 'filename'>): string[] {
  return ['project', String(image.project_id), 'alert_metric_image', String(image.id), image.filename];
}

/** The path below the external URL that serves the file, as the reference lays it out. */
export function metricImagePath(image: Pick<MetricImageRow, 'id' | 'filename'>): string {
  return `/uploads/-/system/alert_metric_image/file/${image.id}/${encodeURIComponent(image.filename)}`;
}

/** The model's messages for `url` and `url_text` ("Url is too long ...", "Url is blocked: ..."). */
function linkMessages(url: string | null | undefined, urlText: string | null | undefined): string[] {
  const out: string[] = [];
  if (url) {
    if (url.length > URL_MAX) out.push(`Url is too long (maximum is ${URL_MAX} characters)`);
    const problem = publicLinkProblem(url);
    if (problem) out.push(`Url is blocked: ${problem}`);
  }
  if (urlText && urlText.length > URL_TEXT_MAX) out.push(`Url text is too long (maximum is ${URL_TEXT_MAX} characters)`);
  return out;
}

/** The file's messages, and its detected type when it is a safe image whose content matches its extension. */
async function fileCheck(file: UploadedFile | undefined): Promise<{ messages: string[]; contentType: string | null }> {
  if (!file) return { messages: ["File can't be blank"], contentType: null };
  const ext = extname(safeFileName(file.filename)).slice(1).toLowerCase();
  if (!SAFE_IMAGE_EXT.includes(ext)) return { messages: [`File does not have a supported extension. Only ${sentence(SAFE_IMAGE_EXT)} are supported`], contentType: null };
  const detected = file.size > 0 ? await detectImageType(file.path) : null;
  if (!detected || detected !== imageTypeOfExtension(ext)) return { messages: [`File content is not a ${ext} image`], contentType: null };
  return { messages: [], contentType: IMAGE_CONTENT_TYPES[detected] };
}

export function metricImagesQuery(db: Db, alertId: number) {
  return db.selectFrom('alert_metric_images').selectAll().where('alert_id', '=', alertId).orderBy('created_at', 'asc').orderBy('id', 'asc');
}

export async function findMetricImage(db: Db, alertId: number, id: number): Promise<MetricImageRow> {
  const row = fitsIntColumn(id)
    ? await db.selectFrom('alert_metric_images').selectAll().where('alert_id', '=', alertId).where('id', '=', id).executeTakeFirst()
    : undefined;
  if (!row) throw new RuleError('not_found', 'Metric image not found');
  return row;
}

export async function metricImageById(db: Db, id: number): Promise<MetricImageRow | undefined> {
  if (!fitsIntColumn(id)) return undefined;
  return db.selectFrom('alert_metric_images').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Stores a metric image: the row and the file's move into the store in one transaction (a failed commit takes the
 * file out again; a kill in between leaves only a file no row names, which is never served). Validation failures
 * answer 400 with the model's full messages joined by ", ", as the reference.
 */
export async function createMetricImage(deps: ServiceDeps, alert: { id: number; project_id: number }, input: { file?: UploadedFile; url?: string; url_text?: string }): Promise<MetricImageRow> {
  const { messages, contentType } = await fileCheck(input.file);
  messages.push(...linkMessages(input.url, input.url_text));
  if (messages.length) throw new RuleError('bad_request', messages.join(', '));
  const file = input.file!;
  const store = metricImageStore(deps);
  const now = deps.clock.now();
  let placed: string[] | null = null;
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const row = await trx.insertInto('alert_metric_images').values({
        alert_id: alert.id, project_id: alert.project_id, filename: safeFileName(file.filename), content_type: contentType!, size: file.size,
        url: input.url || null, url_text: input.url_text || null, created_at: now, updated_at: now,
      }).returningAll().executeTakeFirstOrThrow();
      const key = metricImageKey(row);
      await store.put(file, key);
      placed = key;
      return row;
    });
  } catch (e) {
    if (placed) await store.remove(placed).catch(() => {});
    throw e;
  }
}

/** `url` and `url_text`; a refusal is the reference's 422 "Metric image could not be updated". */
export async function updateMetricImage(deps: ServiceDeps, image: MetricImageRow, input: { url?: string; url_text?: string }): Promise<MetricImageRow> {
  if (linkMessages(input.url, input.url_text).length) throw new RuleError('unprocessable', 'Metric image could not be updated');
  const set: Partial<MetricImageRow> = { updated_at: deps.clock.now() };
  if (input.url !== undefined) set.url = input.url || null;
  if (input.url_text !== undefined) set.url_text = input.url_text || null;
  return deps.db.updateTable('alert_metric_images').set(set).where('id', '=', image.id).returningAll().executeTakeFirstOrThrow();
}

/**
 * Removes the row, and with it queues the file's removal (so a process killed after the commit still removes it),
 * then removes the file at once; the queued job finds nothing left unless that failed.
 */
export async function deleteMetricImage(deps: ServiceDeps, image: MetricImageRow): Promise<void> {
  const key = metricImageKey(image);
  const removed = await deps.db.transaction().execute(async (trx) => {
    const res = await trx.deleteFrom('alert_metric_images').where('id', '=', image.id).executeTakeFirst();
    if (Number(res.numDeletedRows) !== 1) return false;
    await deps.jobs.enqueue(trx, REMOVE_STORED_FILE, { key }, { uniqueKey: `${REMOVE_STORED_FILE}:${key.join('/')}` });
    return true;
  });
  if (!removed) throw new RuleError('unprocessable', 'Metric image could not be deleted');
  await metricImageStore(deps).remove(key).catch(() => { /* the queued job tries again */ });
}
