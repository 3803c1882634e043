import { createHash } from 'node:crypto';

/** Scaled to length 1, so a cosine is a dot product; null for a vector with no direction. */
export function normalized(values: ArrayLike<number>): Float32Array | null {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]! * values[i]!;
  if (!(sum > 0) || !Number.isFinite(sum)) return null;
  const scale = 1 / Math.sqrt(sum);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i]! * scale;
  return out;
}

/** The cosine of two unit vectors of the same length. */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Unit vectors mixed with weights and scaled back to length 1 (a query of several messages). */
export function mix(vectors: readonly Float32Array[], weights: readonly number[]): Float32Array | null {
  const out = new Float32Array(vectors[0]?.length ?? 0);
  vectors.forEach((v, k) => {
    for (let i = 0; i < out.length; i++) out[i] = out[i]! + v[i]! * weights[k]!;
  });
  return normalized(out);
}

/** What identifies a text embedded: its exact characters (a changed text is a new vector). */
export const textHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 32);
