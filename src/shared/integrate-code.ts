/**
 * Code fragments the console's snippets share (integrate-snippets.ts, integrate-receivers.ts): a
 * sender and a receiver sign and verify with the very same canonical JSON.
 */

/** A JSON string literal is a valid string literal in JavaScript and Python alike. */
export const literal = (text: string): string => JSON.stringify(text);

/** RFC 8785 (JCS) in Python's standard library; the senders and the receiver share it. */
export const PYTHON_JCS = [
  '# RFC 8785 (JCS) canonical JSON: what the signature covers.',
  'def _number(x):',
  '    if isinstance(x, int) and abs(x) < 2**53:',
  '        return str(x)',
  '    x = float(x)',
  '    if x != x or x in (float("inf"), float("-inf")):',
  '        raise ValueError("NaN and Infinity are not JSON")',
  '    if x == 0:',
  '        return "0"',
  '    t = Decimal(repr(abs(x))).normalize().as_tuple()',
  '    digits = "".join(map(str, t.digits))',
  '    k, n = len(digits), len(digits) + t.exponent',
  '    if k <= n <= 21:',
  '        s = digits + "0" * (n - k)',
  '    elif 0 < n <= 21:',
  '        s = digits[:n] + "." + digits[n:]',
  '    elif -6 < n <= 0:',
  '        s = "0." + "0" * -n + digits',
  '    else:',
  '        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if n - 1 >= 0 else "-") + str(abs(n - 1))',
  '    return ("-" if x < 0 else "") + s',
  '',
  'def jcs(v):',
  '    if v is None or isinstance(v, bool):',
  '        return json.dumps(v)',
  '    if isinstance(v, (int, float)):',
  '        return _number(v)',
  '    if isinstance(v, str):',
  '        return json.dumps(v, ensure_ascii=False)',
  '    if isinstance(v, list):',
  '        return "[" + ",".join(jcs(x) for x in v) + "]"',
  '    keys = sorted(v, key=lambda k: k.encode("utf-16-be"))',
  '    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(v[k]) for k in keys) + "}"',
];

/** RFC 8785 (JCS) in a few lines of JavaScript; the senders and the receiver share it. */
export const NODE_JCS = [
  '// RFC 8785 (JCS) canonical JSON, what the signature covers: keys sorted by UTF-16 code units;',
  '// JSON.stringify already writes strings and numbers as JCS does (as the `canonicalize` package).',
  'const jcs = (v) =>',
  "  v === null || typeof v !== 'object' ? JSON.stringify(v)",
  "  : Array.isArray(v) ? `[${v.map(jcs).join(',')}]`",
  "  : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`;",
];
