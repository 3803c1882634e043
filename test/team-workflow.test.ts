import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { Browser, BrowserContext, Page } from '@playwright/test';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { listen, signedInAgent } from './helpers/team.ts';
import { buildConsole, CHROMIUM, chooseLanguage, launchChromium, listRow, ROOT, SHOTS, useTheme, waitFor } from './helpers/console-session.ts';
import { ALERT_SPY, js } from './helpers/console-page.ts';
import { seriousViolations } from './helpers/integrate-panel.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/**
 * Two agents, Ann and Omar, signed in at once in two Chromium contexts against one service (its
 * clock moved by hand): what a team sees as it works one queue together.
 */
describe('two agents work one queue in the browser console', { skip }, () => {
  let h: Harness;
  let server: Server;
  let base: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let ann: Page;
  let omar: Page;
  const visitor = 'Visitor Vera';
  const visit = (content: string, who = 'vera', nickname = visitor) => h.post({ event_type: 'website_dialog', msg_id: mid('tw'), from_user_id: who, nickname, content });

  /** A console signed in with an agent's session: the token put where the page keeps it (the sign-in page is another's work). */
  async function consoleAs(token: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    contexts.push(context);
    await context.grantPermissions(['notifications'], { origin: base });
    await context.addInitScript(`localStorage.setItem('sb.consoleToken', ${JSON.stringify(token)}); localStorage.setItem('sb.notify', 'on'); ${ALERT_SPY}`);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${base}/`);
    await page.locator('[data-testid=presence-button]').waitFor();
    return page;
  }
  const head = (page: Page) => page.locator('[data-testid=transcript] .conv-head');
  const open = async (page: Page, who: string) => {
    await listRow(page, who).click();
    await head(page).locator(`h2:has-text("${who}")`).waitFor();
  };
  const notes = (page: Page) => js<Array<{ title: string; body: string }>>(page, 'window.__notes');
  const liveText = (page: Page) => page.locator('[data-testid=live-region]').textContent();
  /** axe on what is on screen now, in the light and the dark theme. */
  const axe = async (page: Page, what: string) => {
    for (const theme of ['light', 'dark'] as const) {
      await useTheme(page, theme);
      assert.deepEqual(await seriousViolations(page), [], `${what}, ${theme}`);
    }
    await useTheme(page, 'light');
  };
  const shoot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `team-${name}.png`) });

  before(async () => {
    buildConsole();
    mkdirSync(SHOTS, { recursive: true });
    h = await startHarness({ clockStart: Date.now() });
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
    h.admin.accounts.setOwner({ id: 'boss', name: 'Boss', now: h.clock.now() });
    ({ server, base } = await listen(h.service, join(ROOT, 'out', 'renderer')));
    const annToken = await signedInAgent(base, h.admin, 'ann', 'Ann', h.clock.now());
    const omarToken = await signedInAgent(base, h.admin, 'omar', 'Omar', h.clock.now());
    browser = await launchChromium();
    ann = await consoleAs(annToken);
    omar = await consoleAs(omarToken);
    // Both consoles are on the event stream: the service counts both agents online.
    await waitFor('both online', async () => (await h.service.console.team.members()).filter((m) => m.presence === 'online').length === 2);
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    server?.closeAllConnections();
    server?.close();
    await h?.stop();
  });

  it('both see a new conversation within 1 s, and auto-assignment gives it to one of them', async (t) => {
    const sent = Date.now();
    assert.equal((await visit('I was charged twice, can a person help?')).status, 200);
    await Promise.all([listRow(ann, visitor).waitFor(), listRow(omar, visitor).waitFor()]);
    const tookMs = Date.now() - sent;
    assert.ok(tookMs < 1000, `both lists showed it ${tookMs} ms after it was sent`);
    t.diagnostic(`both lists showed the new conversation ${tookMs} ms after the request was answered`);
    // Equal load: Ann (first by id). Both rows name her, with her presence.
    for (const page of [ann, omar]) await listRow(page, visitor).locator('[data-testid=row-assignee][data-assignee=ann]').waitFor();
    // Mine / Unassigned / All, as docs/console.md names them; the state chips under them have no second "All".
    assert.deepEqual(await ann.locator('[data-testid=assignment-tabs] button').evaluateAll((bs) => bs.map((b) => b.getAttribute('data-assignment'))), ['mine', 'unassigned', 'all']);
    const filterNames = await ann.locator('.list .filters button').allTextContents();
    assert.equal(filterNames.filter((n) => n.trim() === 'All').length, 1, filterNames.join(' | '));
    // Without desktop alerts too, Ann sees it: a toast naming the conversation, with Open, and a mark on its row.
    const notice = ann.locator('[data-testid=team-notices] [data-kind=assigned]');
    assert.match((await notice.textContent()) ?? '', new RegExp(`Assigned to you: ${visitor}`));
    await listRow(ann, visitor).locator('[data-testid=row-mark][data-mark=assigned]').waitFor();
    assert.equal(await omar.locator('[data-testid=team-notices]').count(), 0, 'Omar was assigned nothing');
    assert.equal(await js(ann, `document.activeElement?.closest('[data-testid=team-notices]') == null`), true, 'the toast takes no focus');
    await axe(ann, 'assigned-to-you toast and row mark');
    // The row's assignee is initials, so the customer's name keeps its room; the whole name is its title.
    const chip = listRow(ann, visitor).locator('[data-testid=row-assignee]');
    assert.equal(await chip.getAttribute('title'), 'Assigned to Ann (Online)');
    assert.ok((await chip.boundingBox())!.width < 48, 'the assignee chip is small');
    await ann.click('[data-testid=assignment-tabs] [data-assignment=mine]');
    await listRow(ann, visitor).waitFor();
    await omar.click('[data-testid=assignment-tabs] [data-assignment=mine]');
    await omar.locator('[data-testid=conversation-list] .empty:has-text("Nothing is assigned to you.")').waitFor();
    await axe(omar, 'Mine, empty');
    await omar.click('[data-testid=assignment-tabs] [data-assignment=all]');
    await ann.click('[data-testid=assignment-tabs] [data-assignment=all]');
    await waitFor('Ann told of it', async () => (await liveText(ann))?.includes(`Assigned to you: ${visitor}`));
    assert.equal((await liveText(omar))?.includes('Assigned to you'), false);
    await shoot(ann, 'list');
    await axe(ann, 'list with tabs, assignee and presence');
  });

  it('Omar sees "Ann is typing a reply" on the conversation and in the list', async () => {
    await open(omar, visitor);
    await open(ann, visitor);
    await head(omar).locator('[data-testid=activity]:has-text("Ann is viewing")').waitFor();
    // Viewing is an eye: the hollow circle is "offline".
    await head(omar).locator('[data-testid=activity] [data-testid=viewing-eye]').waitFor();
    await listRow(omar, visitor).locator('[data-testid=activity] [data-testid=viewing-eye]').waitFor();
    // Opened: Ann's toast and row mark are gone.
    assert.equal(await ann.locator('[data-testid=team-notices]').count(), 0);
    assert.equal(await listRow(ann, visitor).locator('[data-testid=row-mark]').count(), 0);
    await ann.locator('[data-testid=compose] textarea').fill('Hi Vera, I am looking at your');
    await ann.locator('[data-testid=compose] textarea').press('Space');
    await head(omar).locator('[data-testid=activity]:has-text("Ann is typing a reply")').waitFor();
    await listRow(omar, visitor).locator('[data-testid=activity]:has-text("Ann is typing a reply")').waitFor();
    // Ann is told that Omar looks on, never about herself.
    await head(ann).locator('[data-testid=activity]:has-text("Omar is viewing")').waitFor();
    assert.doesNotMatch((await head(ann).locator('[data-testid=activity]').textContent()) ?? '', /Ann/);
    await shoot(omar, 'typing');
    await axe(omar, 'conversation with a colleague typing');
  });

  it('a second reply gets the conflict prompt with what arrived, and goes only on "Send anyway"', async () => {
    const box = omar.locator('[data-testid=compose] textarea');
    await box.fill('Hello Vera, Omar here.');
    await ann.locator('[data-testid=compose] textarea').fill('Hi Vera, I am looking at your charge now.');
    await ann.locator('[data-testid=compose] .reply button[type=submit]').click();
    await omar.locator('[data-testid=transcript] .entry:has-text("I am looking at your charge now")').waitFor();
    // Sent: Ann is no longer typing, only looking.
    await head(omar).locator('[data-testid=activity]:has-text("Ann is viewing")').waitFor();
    await box.press('Control+Enter');
    const prompt = omar.locator('[data-testid=conflict-prompt]');
    await prompt.waitFor();
    assert.match((await prompt.textContent()) ?? '', /Ann \(staff\).*I am looking at your charge now/s);
    assert.equal(await omar.locator('[data-testid=transcript] .entry:has-text("Omar here")').count(), 0, 'nothing sent');
    assert.equal(await js(omar, `document.activeElement?.dataset.testid === 'conflict-prompt'`), true, 'the prompt takes the focus');
    await shoot(omar, 'conflict');
    await axe(omar, 'conflict prompt');
    await prompt.getByRole('button', { name: 'Send anyway' }).click();
    await omar.locator('[data-testid=transcript] .entry.operator:has-text("Omar here")').waitFor();
    await prompt.waitFor({ state: 'detached' });
  });

  it('"Review" closes the conflict prompt and puts the cursor back in the draft', async () => {
    const box = ann.locator('[data-testid=compose] textarea');
    await box.fill('One more thing, Vera:');
    await box.press('Space');
    assert.equal((await visit('Is the refund on its way?')).status, 200);
    await ann.locator('[data-testid=transcript] .entry:has-text("Is the refund on its way?")').waitFor();
    await box.press('Control+Enter');
    const prompt = ann.locator('[data-testid=conflict-prompt]');
    await prompt.waitFor();
    await prompt.getByRole('button', { name: 'Review' }).click();
    await prompt.waitFor({ state: 'detached' });
    assert.equal(await js(ann, `document.activeElement === document.querySelector('[data-testid=compose] textarea')`), true, 'the focus is back in the draft');
    assert.equal(await box.inputValue(), 'One more thing, Vera: ');
    await box.fill('');
  });

  it('a note with @omar (picked from the list by keyboard) is a private line, and alerts Omar only', async () => {
    await omar.click('nav [data-view="needs_you"]');
    const before = (await notes(ann)).length;
    const outbox = h.service.store.deliveries.countByState();
    await ann.click('[data-testid=note-mode]');
    const box = ann.locator('[data-testid=compose] textarea');
    await box.fill('');
    await box.pressSequentially('@om');
    const picker = ann.locator('[data-testid=mention-picker]');
    await picker.locator('[data-member=omar][aria-selected=true]').waitFor();
    await axe(ann, 'note box with the mention list');
    await box.press('Enter');
    assert.equal(await box.inputValue(), '@omar ');
    await box.pressSequentially('can you refund the second charge?');
    await shoot(ann, 'note-mode');
    await box.press('Control+Enter');
    const note = ann.locator('[data-testid=transcript] [data-testid=note-entry]:has-text("can you refund the second charge?")');
    await note.waitFor();
    assert.match((await note.textContent()) ?? '', /Private note/);
    await waitFor('Omar notified', async () => (await notes(omar)).some((n) => n.title === `Ann mentioned you in a note on ${visitor}`));
    assert.equal((await notes(ann)).length, before, 'Ann is not notified of her own note');
    // In the console too, not only as a desktop notification: who, where, and Open.
    const toast = omar.locator('[data-testid=team-notices] [data-kind=mention]');
    assert.match((await toast.textContent()) ?? '', new RegExp(`Ann mentioned you in a note on ${visitor}`));
    await axe(omar, 'mention toast');
    assert.equal(await ann.locator('[data-testid=team-notices] [data-kind=mention]').count(), 0);
    assert.deepEqual(h.service.store.deliveries.countByState(), outbox, 'the note made no outbox row');
    await axe(ann, 'transcript with a note');
    await toast.getByRole('button', { name: 'Open' }).click();
    await omar.locator('[data-testid=transcript] [data-testid=note-entry]:has-text("@Omar")').waitFor();
    await toast.waitFor({ state: 'detached' });
  });

  it("Omar's unread count is his own: the list badge and the window title", async () => {
    // Another customer, given to Omar (Ann has one open already); he opens it. Ann keeps Vera open.
    assert.equal((await visit('Where is my parcel?', 'walt', 'Visitor Walt')).status, 200);
    await listRow(omar, 'Visitor Walt').locator('[data-testid=row-assignee][data-assignee=omar]').waitFor();
    await listRow(omar, 'Visitor Walt').locator('[data-testid=row-mark][data-mark=assigned]').waitFor();
    await open(omar, 'Visitor Walt');
    assert.equal(await listRow(omar, 'Visitor Walt').locator('[data-testid=row-mark]').count(), 0, 'opened: no mark');
    // His own: "you", not his name cut short.
    assert.equal(await head(omar).locator('[data-testid=assign-button] .ellipsis').textContent(), 'You');
    await head(omar).getByRole('button', { name: /^Assigned to you, Online$/i }).waitFor();
    await listRow(omar, 'Visitor Walt').locator('[data-testid=row-assignee]:has-text("O")').waitFor();
    assert.equal((await visit('Thank you! Also, my address changed.')).status, 200);
    await ann.locator('[data-testid=transcript] .entry:has-text("my address changed")').waitFor();
    await listRow(omar, visitor).locator('.badge.unread:has-text("1")').waitFor();
    await waitFor('Omar: Vera\'s line is unread', async () => (await omar.title()).startsWith('(1) '));
    // Ann read Vera's line (she has it open); what is unread for her is Walt's, whom she never opened.
    await waitFor('Ann: Walt\'s line is unread', async () => (await ann.title()).startsWith('(1) '));
    // Her console marks Vera's new line read once it shows it (a request after the render): wait for that, never just look.
    await waitFor('Ann: Vera\'s line read', async () => (await listRow(ann, visitor).locator('.badge.unread').count()) === 0);
    await listRow(ann, 'Visitor Walt').locator('.badge.unread:has-text("1")').waitFor();
    await open(omar, visitor);
    await waitFor('Omar read it', async () => !(await omar.title()).startsWith('('));
    assert.ok((await ann.title()).startsWith('(1) '), "Omar's reading is not Ann's");
  });

  it('at 1280×800 an assigned, paused conversation keeps its header on one row', async () => {
    await omar.setViewportSize({ width: 1280, height: 800 });
    // A colleague with a long name has it, and a reply of Omar's paused the auto-reply.
    await signedInAgent(base, h.admin, 'annabel', 'Annabel Leigh-Whitfield', h.clock.now(), { capacity: 0 });
    // An IM conversation: a reply from the console pauses its auto-reply.
    assert.equal((await h.post({ event_type: 'auto_dialog', msg_id: mid('tw'), from_user_id: 'li-wei', from_user_type: 2, content: 'My order never came.' })).status, 200);
    await listRow(omar, 'li-wei').click();
    await head(omar).locator('h2').waitFor();
    await omar.locator('[data-testid=compose] textarea').fill('Your parcel left the depot this morning.');
    await omar.locator('[data-testid=compose] textarea').press('Control+Enter');
    await omar.locator('[data-testid=transcript] .entry.operator:has-text("left the depot")').waitFor();
    await omar.click('[data-testid=presence-button]');
    await omar.locator('[data-testid=presence-menu] [data-member=annabel]').waitFor();
    await omar.keyboard.press('Escape');
    const li = (await listRow(omar, 'li-wei').getAttribute('data-conversation'))!;
    await h.service.console.asOwner.assignConversation({ conversationId: li, agentId: 'annabel' });
    await head(omar).getByTestId('assign-button').locator('text=Annabel').waitFor();
    await head(omar).locator('.badge.paused').waitFor();
    const middles = await head(omar).evaluate((el) =>
      [...el.children].filter((k) => k.getBoundingClientRect().width > 1 && !k.classList.contains('activity-status')).map((k) => {
        const r = k.getBoundingClientRect();
        return { what: `${k.className} ${Math.round(r.width)}px`, middle: Math.round((r.top + r.bottom) / 2) };
      }),
    );
    const ys = middles.map((m) => m.middle);
    assert.ok(Math.max(...ys) - Math.min(...ys) <= 8, `one row: ${JSON.stringify(middles)}`);
    await head(omar).getByRole('button', { name: 'Assigned to Annabel Leigh-Whitfield, Offline', exact: true }).waitFor();
    await shoot(omar, 'header-1280');
    await axe(omar, 'header with a long assignee and a pause');
    await omar.setViewportSize({ width: 1280, height: 860 });
  });

  it('presence shows next to every name; the header sets away; the team list shows everyone', async () => {
    const fold = await omar.locator('header.top').getAttribute('data-fold');
    await omar.click('[data-testid=presence-button]');
    const menu = omar.locator('[data-testid=presence-menu]');
    await menu.locator('[data-member=ann] [data-presence=online]').waitFor();
    await menu.locator('[data-member=boss] [data-presence=offline]').waitFor();
    await shoot(omar, 'team');
    await axe(omar, 'presence menu and team list');
    await menu.getByRole('radio', { name: 'Away' }).check();
    await ann.locator('[data-testid=row-assignee] [data-presence]').first().waitFor();
    await waitFor('Ann sees Omar away', async () => (await h.service.console.team.members()).find((m) => m.id === 'omar')?.presence === 'away');
    await menu.getByRole('radio', { name: 'Online' }).check();
    await omar.keyboard.press('Escape');
    // Back online, the header is as it was: the open menu under it was not a second row to fold for.
    assert.equal(await omar.locator('header.top').getAttribute('data-fold'), fold);
    await omar.locator('[data-testid=presence-button] .label:text("Online")').waitFor();
    await head(omar).getByTestId('assign-button').click();
    await omar.locator('[data-testid=assign-menu] button:has-text("Assign to me")').waitFor();
    await axe(omar, 'assign menu');
    await omar.keyboard.press('Escape');
  });

  it('Ann goes offline: after 90 s she shows offline, and after 2 minutes more her waiting conversation returns to the queue and to Omar', async () => {
    // Still in Needs you (a customer wrote after the replies), and Ann's.
    const vera = h.service.store.conversations.byKey('acme', 'web', 'u:vera')!;
    assert.equal(vera.needsHuman, true);
    assert.equal(h.service.store.team.assigneeOf(vera.id), 'ann');
    const streams = h.service.console.events.size;
    await contexts[0]!.close();
    // The service sees her stream close (the clock counts her 90 s from there).
    await waitFor('her stream closed', async () => h.service.console.events.size < streams);
    h.clock.advance(90_000);
    await h.quiesce();
    await listRow(omar, visitor).locator('[data-testid=row-assignee][data-assignee=ann] [data-presence=offline]').waitFor();
    h.clock.advance(119_000);
    await h.quiesce();
    assert.equal(await listRow(omar, visitor).locator('[data-assignee=ann]').count(), 1, 'offline 1:59: still hers');
    h.clock.advance(1000);
    await h.quiesce();
    await listRow(omar, visitor).locator('[data-testid=row-assignee][data-assignee=omar]').waitFor();
    await waitFor('Omar told', async () => (await liveText(omar))?.includes(`Assigned to you: ${visitor}`));
  });

  it('ten minutes without input make an agent away, by themselves; a key brings them back', async () => {
    const token = await signedInAgent(base, h.admin, 'lee', 'Lee', h.clock.now(), { capacity: 0 });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    contexts.push(context);
    await context.addInitScript(`localStorage.setItem('sb.consoleToken', ${JSON.stringify(token)})`);
    const lee = await context.newPage();
    await lee.clock.install();
    await lee.goto(`${base}/`);
    await lee.locator('[data-testid=presence-button]').waitFor();
    const presence = async () => (await h.service.console.team.members()).find((m) => m.id === 'lee')?.presence;
    await waitFor('Lee online', async () => (await presence()) === 'online');
    // Focus counts as input: the page's own focus, arriving late on a loaded machine, would move the
    // ten minutes. Focused first, then one key: the last input is known.
    await lee.bringToFront();
    await waitFor('Lee focused', async () => (await lee.evaluate('document.hasFocus()')) === true);
    await lee.keyboard.press('Shift');
    await lee.clock.fastForward('09:59');
    assert.equal(await presence(), 'online', 'nine minutes and 59 seconds: still here');
    await lee.clock.fastForward('00:31');
    await waitFor('Lee away', async () => (await presence()) === 'away');
    await lee.locator('[data-testid=presence-button] [data-presence=away]').waitFor();
    await lee.keyboard.press('Shift');
    await waitFor('Lee back', async () => (await presence()) === 'online');
  });

  it('the @ list leaves out an agent disabled since the console loaded the team', async () => {
    await omar.click('[data-testid=presence-button]');
    await omar.locator('[data-testid=presence-menu] [data-member=annabel]').waitFor();
    await omar.keyboard.press('Escape');
    await h.service.console.asOwner.setAgentDisabled({ id: 'annabel', disabled: true });
    await open(omar, visitor);
    await omar.click('[data-testid=note-mode]');
    const box = omar.locator('[data-testid=compose] textarea');
    await box.fill('');
    await box.pressSequentially('@an');
    const picker = omar.locator('[data-testid=mention-picker]');
    await picker.locator('[data-member=ann]').waitFor();
    await waitFor('annabel gone from the list', async () => (await picker.locator('[data-member=annabel]').count()) === 0);
    assert.deepEqual(await picker.locator('[data-member]').evaluateAll((els) => els.map((e) => e.getAttribute('data-member'))), ['ann']);
    await box.fill('');
  });

  it("an admin's audit log: auto-assignments came from the service, an empty side is nobody, the conversation by its name", async () => {
    const ada = await consoleAs(await signedInAgent(base, h.admin, 'ada', 'Ada Admin', h.clock.now(), { role: 'admin', capacity: 0 }));
    await listRow(ada, visitor).waitFor();
    await ada.click('nav [data-view="agents"]');
    await ada.getByRole('tab', { name: 'Audit log' }).click();
    await ada.getByLabel('Action').selectOption('assign');
    const auto = ada.locator('tr[data-action=assign]:has-text("by: auto-assignment")').first();
    await auto.waitFor();
    assert.match((await auto.locator('td.detail').textContent()) ?? '', /^from: nobody · to: /);
    // No operator: the service did it. The owner without an address: the desktop window.
    const whereFrom = await ada.locator('tr[data-action=assign]').evaluateAll((rows) => rows.map((r) => `${r.children[1]!.textContent} @ ${r.querySelector('td.address')!.textContent}`));
    const bad = whereFrom.filter((w) => (w.startsWith('(no account)') && !w.endsWith('@ the service')) || (w.startsWith('Boss') && !w.endsWith('@ desktop window')));
    assert.deepEqual(bad, [], whereFrom.join('\n'));
    assert.ok(whereFrom.some((w) => w.startsWith('Boss')) && whereFrom.some((w) => w.startsWith('(no account)')), whereFrom.join('\n'));
    await ada.locator(`tr[data-action=assign] [data-testid=audit-conversation]:text("${visitor}")`).first().waitFor();
    await axe(ada, 'audit log of assignments');
  });

  it('in Chinese too: the team views pass axe in both themes', async () => {
    await chooseLanguage(omar, 'zh-CN');
    await omar.locator('[data-testid=assignment-tabs] [data-assignment=mine]:has-text("我的")').waitFor();
    await omar.click('[data-testid=note-mode]');
    await omar.locator('[data-testid=compose] textarea[aria-label^="内部备注"]').waitFor();
    await axe(omar, 'Chinese: list, conversation, note mode');
    await omar.click('[data-testid=presence-button]');
    await axe(omar, 'Chinese: presence menu');
    await shoot(omar, 'zh');
  });
});
