import { randomBytes } from 'node:crypto';
import { ID_PREFIX, type IdKind } from '../../shared/ids.ts';

/** 96 random bits: unguessable and collision-free at any volume this service sees. */
export function newId(kind: IdKind): string {
  return ID_PREFIX[kind] + randomBytes(12).toString('base64url');
}
