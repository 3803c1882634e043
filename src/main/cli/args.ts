export class UsageError extends Error {}

export function parsePort(value: string, flag: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new UsageError(`${flag} must be a port number 0..65535 (0 picks a free port), got "${value}"`);
  return n;
}
