import type { z } from 'zod';

type Issue = z.ZodError['issues'][number];

/** What a value must be, in words an operator reads without knowing zod or the schema. */
export function describeIssue(issue: Issue, value: unknown): string {
  switch (issue.code) {
    case 'too_big': {
      const max = String(issue.maximum);
      if (issue.origin === 'string') return `must be at most ${max} characters`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${max} items`;
      return `must be at most ${max}`;
    }
    case 'too_small': {
      const min = String(issue.minimum);
      if (issue.origin === 'string') return issue.minimum === 1 ? 'must not be empty' : `must be at least ${min} characters`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at least ${min} items`;
      return `must be at least ${min}`;
    }
    case 'invalid_type':
      if (value === undefined) return 'is required';
      if (issue.expected === 'int') return 'must be a whole number';
      return `must be a ${issue.expected}`;
    case 'invalid_format':
      return issue.format === 'url' ? 'must be an absolute URL (http://host:port/path)' : `must be a valid ${issue.format}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    default:
      return issue.message;
  }
}

/**
 * Schema issues as CLI errors: each names the flag the operator typed (`--base-url`), never the
 * schema key (`baseUrl`), with the value given when it is short enough to read back.
 * `flagOf` maps a schema key to its flag name (without dashes); `given` holds the raw flag values.
 */
export function flagIssues(issues: readonly Issue[], flagOf: Readonly<Record<string, string>>, given: Readonly<Record<string, unknown>>, input: Readonly<Record<string, unknown>> = {}): string {
  return issues
    .map((issue) => {
      const [key, ...rest] = issue.path;
      const flag = typeof key === 'string' ? flagOf[key] : undefined;
      if (flag === undefined) return issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
      const what = describeIssue(issue, input[key as string]);
      const item = typeof rest[0] === 'number' ? ` (item ${rest[0] + 1})` : '';
      const raw = given[flag];
      const got = typeof raw === 'string' && raw.length <= 80 && what !== 'is required' ? `, got "${raw}"` : '';
      return `--${flag}${item} ${what}${got}`;
    })
    .join('; ');
}
