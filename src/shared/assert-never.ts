/** Exhaustiveness guard for switches over unions: a new member becomes a type error here. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
