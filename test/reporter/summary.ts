/**
 * A node:test reporter that closes the run with what it really covered. node's own summary counts
 * skipped tests but not skipped suites, whose tests never run and are counted nowhere: a machine
 * without Chromium was green with no browser test run at all. This one lists every skipped suite
 * and test with its reason, ends with the plain line "N passed, N failed, N skipped" (a skipped
 * suite counts once), and under CI fails the run when something was skipped that CI can run.
 *
 * Used beside the spec reporter: `--test-reporter=spec --test-reporter=./test/reporter/summary.ts`.
 */

/**
 * What no machine of this project can run, so CI may skip it: the Electron binary cannot be
 * downloaded here (and without it, nor a display). Anything else skipped under CI means a tool
 * .ci/run installs is missing, or a test gave up: the run fails.
 */
const MAY_SKIP_IN_CI: readonly RegExp[] = [/Electron binary/, /Electron is installed but there is no display/];

interface TestEventData {
  name: string;
  file?: string;
  skip?: string | boolean;
  todo?: string | boolean;
  details?: { type?: 'suite' | 'test'; error?: { failureType?: string } };
}

interface TestEvent {
  type: string;
  data: TestEventData;
}

interface Skipped {
  kind: 'suite' | 'test';
  name: string;
  file: string;
  reason: string;
}

const ROOT = new URL('../../', import.meta.url).pathname;
const relative = (file: string | undefined): string => (file ?? '?').replace(ROOT, '');
const reasonOf = (skip: string | boolean | undefined): string => (typeof skip === 'string' && skip !== '' ? skip : 'no reason given');

export default async function* summary(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  let passed = 0;
  let failed = 0;
  const skipped: Skipped[] = [];
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    const kind = data.details?.type === 'suite' ? 'suite' : 'test';
    if (data.skip !== undefined && data.skip !== false) {
      skipped.push({ kind, name: data.name, file: relative(data.file), reason: reasonOf(data.skip) });
      continue;
    }
    if (data.todo !== undefined && data.todo !== false) continue;
    if (kind === 'test') {
      if (event.type === 'test:pass') passed++;
      else failed++;
    } else if (event.type === 'test:fail' && data.details?.error?.failureType !== 'subtestsFailed') {
      // A suite that failed on its own (a before() hook, say): its tests did not get to fail.
      failed++;
    }
  }
  const lines: string[] = [''];
  const suites = skipped.filter((s) => s.kind === 'suite');
  if (skipped.length > 0) {
    lines.push(`skipped: ${suites.length} suite(s), whose tests did not run, and ${skipped.length - suites.length} test(s):`);
    for (const s of skipped) lines.push(`  - ${s.kind} "${s.name}" (${s.file}): ${s.reason}`);
  }
  if (process.env['CI']) {
    const mustRun = skipped.filter((s) => !MAY_SKIP_IN_CI.some((allowed) => allowed.test(s.reason)));
    if (mustRun.length > 0) {
      lines.push(`error: under CI, ${mustRun.length} skipped suite(s) or test(s) could have run here (see above); the run fails`);
      process.exitCode = 1;
    }
  }
  lines.push(`${passed} passed, ${failed} failed, ${skipped.length} skipped`, '');
  yield lines.join('\n');
}
