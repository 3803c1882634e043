import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Request } from '@playwright/test';
import { spawnServe, cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { signBody } from './helpers/sign.ts';
import { startReceiver, eventually, type Receiver, type Received } from './helpers/receiver.ts';
import { ALERT_SPY, CHROMIUM, buildConsole, js, launchChromium, shoot } from './helpers/console-page.ts';
import { chooseLanguage, consoleCall, openHeaderPrefs } from './helpers/console-session.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/**
 * The agent's workspace in the browser console, at the smallest supported window (1024×700):
 * answer, canned replies, suggestions, resolve, alerts, keyboard, connection state, who and when.
 */
describe('the agent workspace in Chromium (headless console)', { skip }, () => {
  let server: ServeProcess;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  let dir: string;
  const secrets: Record<string, string> = {};
  const send = (client: string, info: Record<string, unknown>) =>
    fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signBody(client, secrets[client]!, info, Math.floor(Date.now() / 1000))),
    });
  const customer = (from: string, msgId: string, content: string, extra: Record<string, unknown> = {}) =>
    send('acme', { event_type: 'auto_dialog', msg_id: msgId, from_user_id: from, from_user_type: 2, content, ...extra });
  const operatorDeliveries = (): Received[] => receiver.received.filter((r) => r.body.message_info['from_user_type'] === 3);
  /** Opens the conversation whose row mentions `who` (an id; :has-text ignores case, so "alice" finds "Alice Chen"). */
  /** The list is virtual: scrolls it from the top until the row is rendered; false when there is none. */
  const findRow = async (who: string): Promise<boolean> => {
    const row = `[data-conversation]:has-text("${who}")`;
    for (let i = 0; i < 40 && !(await page.$(row)); i++) await js(page, `document.querySelector('[data-testid=conversation-list]').scrollBy(0, ${i === 0 ? -1e6 : 300})`);
    return (await page.$(row)) !== null;
  };
  const open = async (who: string): Promise<void> => {
    await findRow(who);
    await page.click(`[data-conversation]:has-text("${who}")`);
    await page.waitForSelector(`[data-testid=transcript] h2:has-text("${who}")`);
  };
  const blur = () => js(page, 'document.activeElement && document.activeElement.blur()');
  const state = () => page.textContent('[data-testid=auto-reply-state]');
  const reply = () => page.getByRole('textbox', { name: 'Reply to the customer' });
  /**
   * A picked canned reply places the caret a frame later; fill('') selects all, then deletes, and a caret
   * placed in between leaves the old text. Frame callbacks run in the order asked for: once ours ran, theirs did.
   */
  const nextFrame = () => js(page, 'new Promise((done) => requestAnimationFrame(() => done(true)))');

  before(async () => {
    buildConsole();
    receiver = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), 'sb-work-'));
    secrets['acme'] = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', receiver.url).stdout);
    // Replies wait ten minutes: a stop always finds them still pending.
    secrets['slow'] = secretFrom(cli(dir, 'clients', 'add', 'slow', '--send-url', receiver.url, '--quiet-seconds', '600', '--quiet-max-seconds', '3600').stdout);
    secrets['nourl'] = secretFrom(cli(dir, 'clients', 'add', 'nourl').stdout);
    cli(dir, 'kb', 'add', '--question', 'Where is my parcel?', '--answer', 'Track it with the link in your confirmation email.');
    server = await spawnServe(dir);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1024, height: 700 }, locale: 'en-US' });
    await context.addInitScript(ALERT_SPY);
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // Page time flows as usual but can jump: the 5 s undo and the offline threshold without waiting.
    await page.clock.install();
    await page.goto(server.console);
    await page.waitForSelector('text=No conversations yet');
  });
  after(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    await server?.exit();
    await receiver?.close();
  });

  it('names the customer by nickname, with an avatar and the time, in time order', async () => {
    await customer('alice', 'ws-1', 'Where is my parcel?', { nickname: 'Alice Chen' });
    await open('alice');
    const line = page.locator('[data-entry="ws-1"]');
    assert.equal(await line.locator('.who').textContent(), 'Alice Chen');
    assert.equal(await line.locator('.avatar').textContent(), 'AC');
    const datetime = await line.locator('time').getAttribute('datetime');
    assert.match(datetime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The auto reply (kb, after the 2 s quiet period): answered is green, its source names the KB question.
    await page.waitForSelector('[data-entry="ws-1"] [data-testid=why][data-outcome=answered].tone-ok', { timeout: 10_000 });
    await page.waitForSelector('[data-testid=sources] button:has-text("“Where is my parcel?”")');
    const times = await js<number[]>(page, `[...document.querySelectorAll('.entries > li time')].map((t) => Date.parse(t.dateTime))`);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'strictly in time order');
  });

  it('asks who the operator is before the first reply, and shows who is signed in', async () => {
    await page.waitForSelector('text=Before you answer customers, say who you are.');
    await page.fill('input[autocomplete=username]', 'ann');
    await page.fill('input[autocomplete=name]', 'Ann Lee');
    await page.click('.operator-first button:has-text("Save")');
    await page.waitForSelector('[data-testid=operator]:has-text("Ann Lee")');
    await reply().waitFor();
  });

  it('Ctrl+Enter sends an operator reply: the receiver gets it, the transcript shows it delivered', async () => {
    await reply().fill('Hello Alice, your parcel left our warehouse today.');
    await reply().press('Control+Enter');
    const got = await eventually(() => operatorDeliveries().find((r) => r.body.message_info['content'] === 'Hello Alice, your parcel left our warehouse today.'), 'the operator reply', 10_000);
    const info = got.body.message_info;
    assert.deepEqual(info['operator'], { id: 'ann', name: 'Ann Lee' });
    assert.equal(info['to_user_id'], 'alice');
    assert.equal(info['event_type'], 'auto_dialog');
    const entry = page.locator(`[data-entry="${String(info['msg_id'])}"]`);
    await entry.locator('[data-testid=delivery][data-state=sent]').waitFor();
    assert.equal(await entry.locator('.who').textContent(), 'Ann Lee');
    assert.equal(await reply().inputValue(), '', 'the box is empty after sending');
    // Cmd+Enter on a Mac does the same.
    await reply().fill('Anything else I can do?');
    await reply().press('Meta+Enter');
    await eventually(() => operatorDeliveries().find((r) => r.body.message_info['content'] === 'Anything else I can do?'), 'the Cmd+Enter reply', 10_000);
    // The receiver can have it before the console has the answer to its send: wait for the box to empty,
    // or the next Ctrl+Enter lands while that send is still in flight and is ignored.
    await eventually(async () => (await reply().inputValue()) === '', 'the box empty after Cmd+Enter', 10_000);
    // What the operator types while a reply is on its way stays in the box when the send completes.
    await page.route('**/api/sendReply', async (route) => {
      await new Promise((done) => setTimeout(done, 500));
      await route.continue();
    });
    await reply().fill('One more thing.');
    await reply().press('Control+Enter');
    await page.getByRole('button', { name: 'Sending…' }).waitFor();
    await reply().fill('Typed while it was sending');
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    await page.unroute('**/api/sendReply');
    await eventually(() => operatorDeliveries().find((r) => r.body.message_info['content'] === 'One more thing.'), 'the reply sent meanwhile', 10_000);
    assert.equal(await reply().inputValue(), 'Typed while it was sending');
    await reply().fill('');
  });

  it('a refused reply turns dead with a Retry button; a failing one shows retrying', async () => {
    receiver.respond = () => ({ status: 400 });
    await reply().fill('This one bounces.');
    await reply().press('Control+Enter');
    const dead = page.locator('[data-testid=delivery][data-state=dead]');
    await dead.waitFor();
    receiver.respond = () => ({ status: 200 });
    await dead.getByRole('button', { name: 'Retry delivery' }).click();
    await eventually(() => operatorDeliveries().filter((r) => r.body.message_info['content'] === 'This one bounces.').length === 2, 'the retried reply', 10_000);
    receiver.respond = () => ({ status: 503 });
    await customer('bob', 'ws-bob', 'hello?');
    await open('bob');
    await reply().fill('Hi Bob!');
    await reply().press('Control+Enter');
    await page.waitForSelector('[data-testid=delivery][data-state=retrying]:has-text("retrying after 1 failed attempt")');
    receiver.respond = () => ({ status: 200 });
  });

  it('canned replies: added in the manager, inserted with / and with the button', async () => {
    await open('alice');
    await page.click('button:has-text("Canned replies")');
    await page.click('[data-testid=canned-picker] button:has-text("Manage…")');
    const manager = page.getByRole('dialog', { name: 'Canned replies' });
    await manager.getByLabel('Title').fill('Returns');
    await manager.getByLabel('Text').fill('You can return any item within 30 days.');
    await manager.getByRole('button', { name: 'Add canned reply' }).click();
    await manager.locator('.canned-list >> text=Returns').waitFor();
    await manager.getByLabel('Title').fill('Shipping times');
    await manager.getByLabel('Text').fill('We ship within 2 working days.');
    await manager.getByRole('button', { name: 'Add canned reply' }).click();
    await manager.locator('.canned-list >> text=Shipping times').waitFor();
    await page.keyboard.press('Escape');
    await manager.waitFor({ state: 'detached' });
    await page.keyboard.press('Escape'); // and the picker
    await reply().fill('');
    await reply().pressSequentially('/ret');
    await page.getByRole('option', { name: /Returns/ }).waitFor();
    await reply().press('Enter');
    assert.equal(await reply().inputValue(), 'You can return any item within 30 days.');
    await nextFrame();
    await reply().fill('');
    await page.click('button:has-text("Canned replies")');
    await page.getByRole('combobox', { name: 'Search canned replies' }).fill('ship');
    await shoot(page, 'workspace-canned');
    await page.getByRole('option', { name: /Shipping times/ }).click();
    assert.equal(await reply().inputValue(), 'We ship within 2 working days.');
    await nextFrame();
    await reply().fill('');
  });

  it('a suggestion for the latest customer message, with an instruction: used, edited and sent', async () => {
    const customerLines = () => page.locator('.entries > li.message.customer').count();
    const before = await customerLines();
    await page.getByLabel('Instruction for the suggestion (optional)').fill('be brief');
    await page.click('button:has-text("Suggest a reply")');
    const card = page.locator('[data-testid=suggestion]');
    await card.locator('text=Track it with the link').waitFor();
    assert.match((await card.textContent()) ?? '', /instruction: “be brief”/);
    await card.getByRole('button', { name: 'Use' }).click();
    assert.equal(await reply().inputValue(), 'Track it with the link in your confirmation email.');
    await reply().press('End');
    await reply().pressSequentially(' Thanks for waiting!');
    await shoot(page, 'workspace-suggestion');
    await reply().press('Control+Enter');
    await eventually(
      () => operatorDeliveries().find((r) => r.body.message_info['content'] === 'Track it with the link in your confirmation email. Thanks for waiting!'),
      'the edited suggestion',
      10_000,
    );
    assert.equal(await customerLines(), before, 'asking for a suggestion wrote no customer message');
  });

  it('where there is no send_url, the console says why and offers no send; no stop on a web chat', async () => {
    await send('nourl', { event_type: 'website_dialog', msg_id: 'ws-web', from_user_id: 'visitor-1', content: 'hi there' });
    await open('visitor-1');
    const why = await page.textContent('[data-testid=no-send]');
    assert.match(why ?? '', /^You cannot reply to this visitor from here\. .+Set a default send_url for nourl/);
    assert.equal(await reply().count(), 0, 'no reply box');
    const stop = page.getByRole('button', { name: 'Stop auto-reply' });
    assert.equal(await stop.isDisabled(), true);
    assert.match((await stop.getAttribute('title')) ?? '', /Web chats are answered inside their own request/);
    const stops: string[] = [];
    page.on('request', (r: Request) => r.url().endsWith('/api/stopAutoReply') && stops.push(r.url()));
    await blur();
    await page.keyboard.press('s');
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await page.keyboard.press('Escape');
    assert.deepEqual(stops, [], 's does nothing on a web conversation');
    // No knowledge-base entry fits "hi there": the stored suggestion says so instead of showing the fallback text.
    await page.click('button:has-text("Suggest a reply")');
    const stored = page.locator('[data-testid=transcript] .entry.suggestion .content').last();
    await stored.waitFor();
    assert.equal(await stored.textContent(), 'No confident suggestion for this one.');
  });

  it('alerts: a handoff notifies (once allowed), chimes (when on), is announced, and Resolve records who', async () => {
    assert.equal(await js(page, 'window.__asked'), 0, 'the console never asks for notifications unasked');
    // What the operator answers in the browser's prompt, which a headless browser cannot show.
    await page.context().grantPermissions(['notifications'], { origin: new URL(server.consoleBase).origin });
    await page.click('button:has-text("Enable alerts")');
    await page.waitForSelector('button[aria-pressed=true]:has-text("Desktop alerts")');
    // On a full header the alert tone is with the other settings, behind "⋯".
    const folded = await openHeaderPrefs(page);
    await page.click('button:has-text("Sound")');
    await page.waitForSelector('button[aria-pressed=true]:has-text("Sound")');
    if (folded) await page.keyboard.press('Escape');
    assert.equal(await js(page, `localStorage.getItem('sb.sound')`), 'on');
    await customer('carol', 'ws-carol', 'Can I pay with seashells?');
    const notes = await eventually(async () => {
      const n = await js<Array<{ title: string; body: string }>>(page, 'window.__notes');
      return n.length > 0 && n;
    }, 'a notification', 15_000);
    assert.match(notes[0]!.title, /carol (needs you|was handed to you)/);
    assert.equal(notes[0]!.body, '“Can I pay with seashells?”', 'the customer\'s words, not a second sentence in the service\'s English');
    assert.ok((await js<number>(page, 'window.__tones')) > 0, 'a chime played');
    await page.waitForSelector('[data-testid=live-region]:has-text("carol")');
    await open('carol');
    await page.click('button:has-text("Resolve")');
    const resolved = page.locator('[data-testid=resolved]');
    await resolved.waitFor();
    assert.match((await resolved.textContent()) ?? '', /^Resolved by Ann Lee/);
    assert.match((await resolved.locator('time').getAttribute('datetime')) ?? '', /^\d{4}-/);
    assert.equal(await page.getByRole('button', { name: 'Resolve' }).count(), 0);
  });

  it('the window title counts unread customer messages; opening the conversation reads them', async () => {
    const count = async (): Promise<number> => Number(/^\((\d+)\) /.exec(await page.title())?.[1] ?? 0);
    const start = await count();
    await customer('dave', 'ws-dave-1', 'first');
    await customer('dave', 'ws-dave-2', 'second');
    // The page's CSP forbids eval, so poll the title from here.
    const title = (want: string) => eventually(async () => (await page.title()) === want, `the title "${want}"`, 10_000);
    await title(`(${start + 2}) Switchboard`);
    await open('dave');
    await title(start === 0 ? 'Switchboard' : `(${start}) Switchboard`);
  });

  it('shortcuts ignore Ctrl, Cmd and Alt, and keys typed into fields', async () => {
    await open('alice');
    const before = await state(); // paused: the operator's replies paused auto-reply, as staff messages do
    const stops: string[] = [];
    page.on('request', (r: Request) => r.url().endsWith('/api/stopAutoReply') && stops.push(r.url()));
    await blur();
    for (const key of ['Control+s', 'Meta+s', 'Alt+s', 'Control+Shift+s']) await page.keyboard.press(key);
    await page.getByRole('textbox', { name: 'Reply to the customer' }).focus();
    await page.keyboard.type('s r j k');
    await page.getByLabel('Instruction for the suggestion (optional)').focus();
    await page.keyboard.type('s');
    await page.locator('input[type=search]').first().focus();
    await page.keyboard.type('s');
    await page.locator('input[type=search]').first().fill('');
    // A key that does act, so everything before it has been handled.
    await blur();
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await page.keyboard.press('Escape');
    assert.deepEqual(stops, []);
    assert.equal(await state(), before);
    assert.match(await page.textContent('[data-testid=transcript] h2') ?? '', /Alice Chen/, 'j/k typed in a field moved nothing');
    await reply().fill('');
  });

  it('s stops with an Undo for 5 s; Undo puts back the state the stop found; after 5 s the toast is gone', async () => {
    await blur();
    // Alice is paused by the operator reply sent earlier: Undo must not wake the bot early.
    const before = await state();
    assert.match(before ?? '', /^Paused until/);
    await page.keyboard.press('s');
    await page.waitForSelector('[data-testid=auto-reply-state]:has-text("Stopped")');
    const toast = page.locator('[data-testid=undo-toast]');
    assert.match((await toast.textContent()) ?? '', /Auto-reply stopped for Alice Chen/);
    // The transcript says what happened in words, not as the raw command.
    await page.waitForSelector('[data-testid=transcript] .entry.command >> text=Auto-reply stopped from the console');
    await shoot(page, 'workspace-undo');
    await toast.getByRole('button', { name: 'Undo' }).click();
    await page.waitForSelector(`[data-testid=auto-reply-state]:has-text("${before}")`);
    assert.equal(await toast.count(), 0);
    await blur();
    await page.keyboard.press('s');
    await toast.waitFor();
    // The stop is answered before the page's clock jumps: the jump is instant, the request is not.
    await page.waitForSelector('[data-testid=auto-reply-state]:has-text("Stopped")');
    await page.clock.fastForward(5_100);
    await toast.waitFor({ state: 'detached' });
    assert.equal(await state(), 'Stopped');
    await page.keyboard.press('r');
    await page.waitForSelector('[data-testid=auto-reply-state]:has-text("Active")');
  });

  it('? shows the shortcut sheet as a modal dialog: focus moves in, Escape closes, focus returns', async () => {
    const opener = page.getByRole('button', { name: 'Resume auto-reply (r)' }).or(page.getByRole('button', { name: 'Stop auto-reply (s)' }));
    await opener.focus();
    await page.keyboard.press('?');
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await sheet.waitFor();
    assert.equal(await sheet.getAttribute('aria-modal'), 'true');
    assert.equal(await js(page, `document.querySelector('[data-testid=shortcut-sheet]').contains(document.activeElement)`), true);
    await shoot(page, 'workspace-shortcuts');
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'detached' });
    assert.equal(await js(page, `document.activeElement.textContent`), 'Stop auto-reply (s)');
  });

  it('why-lines take the final outcome\'s colour and are translated in zh-CN', async () => {
    await send('slow', { event_type: 'auto_dialog', msg_id: 'ws-slow', from_user_id: 'erin', from_user_type: 2, content: 'Where is my parcel?' });
    await open('erin');
    await page.waitForSelector('[data-entry="ws-slow"] [data-testid=why][data-outcome=pending].tone-neutral');
    await blur();
    await page.keyboard.press('s');
    const why = page.locator('[data-entry="ws-slow"] [data-testid=why][data-outcome=cancelled]');
    await why.waitFor();
    assert.equal(await why.textContent(), 'Bot reply cancelled (auto-reply stopped by the console before the reply was made)');
    const colours = await js<{ why: string; ok: string }>(
      page,
      `(() => { const probe = document.createElement('span'); probe.style.color = 'var(--ok)'; document.body.append(probe);
        const ok = getComputedStyle(probe).color; probe.remove();
        return { why: getComputedStyle(document.querySelector('[data-entry="ws-slow"] [data-testid=why]')).color, ok }; })()`,
    );
    assert.notEqual(colours.why, colours.ok, 'a cancelled reply is not green');
    await chooseLanguage(page, 'zh-CN');
    await page.waitForSelector('[data-entry="ws-slow"] [data-testid=why]:has-text("机器人回复已取消")');
    assert.match((await why.textContent()) ?? '', /回复生成之前，控制台停止了自动回复/);
    assert.equal(await js(page, 'document.documentElement.lang'), 'zh-CN');
    await shoot(page, 'workspace-zh-CN-why');
    await open('alice');
    await page.waitForSelector('[data-testid=delivery][data-state=sent]:has-text("投递：已送达")');
    await shoot(page, 'workspace-zh-CN');
    await chooseLanguage(page, 'en');
    await page.waitForSelector('[data-testid=delivery]:has-text("Delivery: sent")');
  });

  it('a knowledge-base source opens its entry in the knowledge base', async () => {
    await page.click('[data-testid=sources] button:has-text("“Where is my parcel?”")');
    // The entry's row is highlighted, focused and in view; the search is cleared so no filter can hide it.
    const row = page.locator('[data-testid=kb-table] tr[aria-current=true]');
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Where is my parcel\?.*Track it with the link/);
    assert.equal(await page.inputValue('input[aria-label="Search the knowledge base"]'), '');
    const shown = await js<{ focused: boolean; inView: boolean }>(
      page,
      `(() => { const row = document.querySelector('[data-testid=kb-table] tr[aria-current=true]'); const r = row.getBoundingClientRect();
        return { focused: document.activeElement === row, inView: r.top >= 0 && r.bottom <= innerHeight && r.height > 0 }; })()`,
    );
    assert.deepEqual(shown, { focused: true, inView: true });
    await page.click('nav >> text=Conversations');
  });

  it('fits 1024×700: no sideways scroll, the reply box covers no message, long names ellipsize', async () => {
    const long = `Maximilian Alexander Fitzgerald-Worthington the Third of ${'Very '.repeat(12)}Long Names`;
    await customer('max', 'ws-long', 'A message to scroll to.', { nickname: long });
    // The bot hands Max over after its quiet period: let that alert come now, not in a later test's count of alerts.
    await eventually(async () => (await consoleCall<{ items: Array<{ customerId: string | null }> }>(server, 'listConversations', { view: 'needs_you' })).items.some((c) => c.customerId === 'max'), 'Max in Needs you', 10_000);
    await open('max');
    const layout = await js<{ sideways: boolean; last: number; scrollBottom: number; composeTop: number; title: string | null; clipped: boolean }>(
      page,
      `(() => { const s = document.querySelector('.transcript-scroll'); s.scrollTop = s.scrollHeight;
        const items = s.querySelectorAll('.entries > li'); const h2 = document.querySelector('[data-testid=transcript] h2');
        return { sideways: document.documentElement.scrollWidth > document.documentElement.clientWidth,
          last: items[items.length - 1].getBoundingClientRect().bottom, scrollBottom: s.getBoundingClientRect().bottom,
          composeTop: document.querySelector('[data-testid=compose]').getBoundingClientRect().top,
          title: h2.getAttribute('title'), clipped: h2.scrollWidth > h2.clientWidth }; })()`,
    );
    assert.equal(layout.sideways, false, 'no horizontal scroll at 1024×700');
    assert.ok(layout.last <= layout.scrollBottom && layout.scrollBottom <= layout.composeTop + 0.5, `last message ${layout.last} above the reply box ${layout.composeTop}`);
    assert.equal(layout.title, `${long} (max)`, 'the whole name on hover, with the id');
    assert.equal(layout.clipped, true, 'the long name is cut with an ellipsis');
    await open('alice');
    await shoot(page, 'workspace');
  });

  it('j and k keep the selected conversation scrolled into view', async () => {
    // The slow client's replies wait ten minutes: no answer reorders the list while j and k move.
    for (let i = 0; i < 20; i++) await send('slow', { event_type: 'auto_dialog', msg_id: `ws-crowd-${i}`, from_user_id: `crowd-${i}`, from_user_type: 2, content: `hello ${i}` });
    await page.waitForSelector('[data-conversation]:has-text("crowd-19")');
    await blur();
    const visible = () =>
      js<boolean>(
        page,
        `(() => { const row = document.querySelector('[data-conversation].selected'); const box = document.querySelector('[data-testid=conversation-list]');
          if (!row || !box) return false; const r = row.getBoundingClientRect(), b = box.getBoundingClientRect(); return r.top >= b.top - 1 && r.bottom <= b.bottom + 1; })()`,
      );
    for (let i = 0; i < 30; i++) await page.keyboard.press('j');
    await eventually(visible, 'the selected row in view after j', 3000);
    assert.ok((await js<number>(page, `document.querySelector('[data-testid=conversation-list]').scrollTop`)) > 0, 'the list scrolled down to it');
    for (let i = 0; i < 30; i++) await page.keyboard.press('k');
    await eventually(visible, 'the selected row in view after k', 3000);
    await open('alice');
  });

  it('a customer writing in the open conversation a human has enters Needs you with no tone or notification; elsewhere it alerts', async () => {
    // The alerts test above allowed notifications and turned the sound on.
    assert.equal(await js(page, `localStorage.getItem('sb.sound')`), 'on');
    assert.equal(await js(page, `document.visibilityState === 'visible' && document.hasFocus()`), true, 'the operator looks at the page');
    const wendy = (msgId: string, content: string) => send('slow', { event_type: 'auto_dialog', msg_id: msgId, from_user_id: 'wendy', from_user_type: 2, content, nickname: 'Wendy Wu' });
    // At the top, the list shows a new conversation as it arrives.
    await js(page, `document.querySelector('[data-testid=conversation-list]').scrollTo(0, 0)`);
    await wendy('ws-wendy-1', 'Hello, a question about my order');
    await page.waitForSelector('[data-conversation]:has-text("wendy")');
    await open('wendy');
    // A live chat: the operator's reply pauses auto-reply, so Wendy's next line waits for a human.
    await reply().fill('Hi Wendy, I am here.');
    await reply().press('Control+Enter');
    await eventually(() => operatorDeliveries().find((r) => r.body.message_info['content'] === 'Hi Wendy, I am here.'), 'the operator reply', 10_000);
    await page.waitForSelector('[data-testid=auto-reply-state]:has-text("Paused until")');
    const tones = await js<number>(page, 'window.__tones');
    const notes = (await js<unknown[]>(page, 'window.__notes')).length;
    await wendy('ws-wendy-2', 'Thanks! And the invoice?');
    await page.waitForSelector('[data-entry="ws-wendy-2"]');
    const needsYou = async () => (await consoleCall<{ items: Array<{ customerId: string | null }> }>(server, 'listConversations', { view: 'needs_you' })).items.map((c) => c.customerId);
    await eventually(async () => (await needsYou()).includes('wendy'), 'Wendy in Needs you', 5000);
    // Xena, stopped from the console and not on screen, writes: that alerts as ever, after Wendy's alert on the same stream.
    await send('slow', { event_type: 'auto_dialog', msg_id: 'ws-xena-0', from_user_id: 'xena', from_user_type: 2, content: 'Hi' });
    const xena = (await consoleCall<{ items: Array<{ id: string; customerId: string | null }> }>(server, 'listConversations', {})).items.find((c) => c.customerId === 'xena')!.id;
    await consoleCall(server, 'stopAutoReply', { conversationId: xena });
    await send('slow', { event_type: 'auto_dialog', msg_id: 'ws-xena-1', from_user_id: 'xena', from_user_type: 2, content: 'Hello?' });
    const fresh = await eventually(async () => {
      const all = await js<Array<{ title: string; body: string }>>(page, 'window.__notes');
      return all.length > notes && all.slice(notes);
    }, 'a notification', 10_000);
    assert.deepEqual(fresh.map((n) => n.body), ['“Hello?”'], 'none for Wendy; the body is what she said, the title says the rest');
    assert.match(fresh[0]!.title, /wrote while a human has the conversation$/);
    assert.equal((await js<number>(page, 'window.__tones')) - tones, 2, 'one chime (its two tones), for Xena only');
    assert.ok((await needsYou()).includes('xena'));
    await open('alice');
  });

  it('across a server restart the indicator goes reconnecting, offline, then live, and what arrived meanwhile shows', async () => {
    await page.waitForSelector('[data-testid=connection][data-state=live]');
    await reply().fill('Typed while the service restarts');
    // Hold the console's stream down until the test lets it reconnect: the new message cannot come as an event.
    await page.route('**/api/events', (route) => route.abort());
    const port = new URL(server.consoleBase).port;
    server.child.kill('SIGTERM');
    await server.exit();
    await page.waitForSelector('[data-testid=connection][data-state=reconnecting]:has-text("Reconnecting…")');
    const sendButton = page.getByRole('button', { name: 'Send', exact: true });
    assert.equal(await sendButton.isDisabled(), true, 'no send while reconnecting');
    assert.equal(await sendButton.getAttribute('aria-describedby'), 'connection-reason');
    await page.clock.fastForward(6_000);
    const offline = page.locator('[data-testid=connection][data-state=offline]');
    await offline.waitFor();
    assert.match((await offline.textContent()) ?? '', /Offline since \d\d:\d\d/);
    assert.match((await sendButton.getAttribute('title')) ?? '', /^Offline since \d\d:\d\d: changes are off/);
    await shoot(page, 'workspace-offline');
    server = await spawnServe(dir, ['--console-port', port]);
    await customer('alice', 'ws-while-away', 'Are you still there?', { nickname: 'Alice Chen' });
    await customer('frank', 'ws-frank', 'New here.');
    await page.unroute('**/api/events');
    // The page also retries by itself on its back-off, and on a loaded machine that retry can
    // reconnect between the unroute and the click (CI saw the button go as it was clicked). The
    // button must work whenever it is still there; either way the page must end up live.
    await page.click('button:has-text("Reconnect now")', { timeout: 5000 }).catch(async (error: unknown) => {
      if (await page.$('[data-testid=connection][data-state=offline]')) throw error;
    });
    await page.waitForSelector('[data-testid=connection][data-state=live]');
    await page.waitForSelector('[data-entry="ws-while-away"]');
    await page.waitForSelector('[data-testid=live-region]:has-text("New message from Alice Chen: Are you still there?")');
    await eventually(() => findRow('frank'), 'the conversation that began while the console was away', 5000);
    assert.equal(await sendButton.isDisabled(), false);
    assert.equal(await reply().inputValue(), 'Typed while the service restarts', 'the draft survived');
  });

  it('a pause that runs out says Active in the header and the list when it ends, with no new data and no reload', async () => {
    await open('wendy');
    const badge = page.locator('[data-testid=auto-reply-state]');
    assert.match((await state()) ?? '', /^Paused until/, 'the operator reply paused Wendy');
    const until = Number(await badge.getAttribute('data-until'));
    const row = page.locator('[data-conversation]:has-text("wendy")');
    assert.equal(await row.locator('.badge.paused').count(), 1);
    // No event comes when a pause simply runs out: the page must change by itself, at that time.
    // To 3 s before its end first (a jump that long makes the page re-check its stream and reload),
    // then just past it: only a timer set for the pause's end can change the page in that step.
    await page.clock.fastForward(Math.max(0, until - (await js<number>(page, 'Date.now()')) - 3_000));
    await page.waitForSelector('[data-testid=connection][data-state=live]');
    await new Promise((r) => setTimeout(r, 500));
    assert.match((await state()) ?? '', /^Paused until/);
    await page.clock.fastForward(Math.max(0, until - (await js<number>(page, 'Date.now()'))) + 200);
    await page.waitForSelector('[data-testid=auto-reply-state]:has-text("Active")', { timeout: 2000 });
    await eventually(async () => (await row.locator('.badge.paused').count()) === 0, 'the row without its Paused badge', 2000);
  });
});
