import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { z } from 'zod';

/** A small JSON file of the data folder, checked as it is read: a damaged or hand-edited one counts as absent. */
export function readJsonFile<S extends z.ZodType>(path: string, schema: S): z.infer<S> | null {
  if (!existsSync(path)) return null;
  try {
    const parsed = schema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Written whole (a new file renamed over the old), readable by this user only. */
export function writeJsonFile(path: string, value: unknown): void {
  const next = `${path}.${process.pid}.tmp`;
  writeFileSync(next, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  renameSync(next, path);
}

export function removeFile(path: string): void {
  rmSync(path, { force: true });
}
