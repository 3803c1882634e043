import { randomFillSync } from 'node:crypto';
import { ID_PREFIX, type IdKind } from '../../shared/ids.ts';

const ID_BYTES = 12;
// One randomFillSync per 341 ids instead of one per id: ids are made on every request.
const pool = Buffer.alloc(ID_BYTES * 341);
let offset = pool.length;

/** 96 random bits: unguessable and collision-free at any volume this service sees. */
export function newId(kind: IdKind): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return ID_PREFIX[kind] + id;
}
