import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { Browser } from '@playwright/test';
import type { ServeProcess } from './helpers/processes.ts';
import { buildConsole, chooseLanguage, CHROMIUM, launchChromium, openConsole, startServe, stopServe, waitFor } from './helpers/console-session.ts';
import { js } from './helpers/console-page.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/** The first-run screen ("Get started") of a console with nothing set up, in Chromium. */
describe('the first-run screen: its steps, and a header that fits before anything is set up', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  before(async () => {
    buildConsole();
    ({ server } = await startServe());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
  });

  it('shows every step with whether it is done, and says plainly that an empty knowledge base hands every question over', async () => {
    const page = await openConsole(browser, server, { width: 1280, height: 800 });
    await page.click('nav [data-view="start"]');
    const steps = page.locator('.first-run ol.steps > li');
    await steps.nth(3).waitFor();
    const read = () => steps.locator('h3').allTextContents();
    // Nothing is set up: the whole path shows, each step with its state, the later ones saying what they wait for.
    assert.deepEqual(await read(), ['1. Add a client, To do', '2. Add answers to the knowledge base, To do', '3. Configure your integration, To do', '4. Send a test message, To do']);
    const empty = page.getByTestId('kb-empty');
    assert.equal(await empty.textContent(), 'The knowledge base is empty: every question will be handed to you.');
    assert.equal(await page.getByRole('heading', { level: 3, name: '2. Add answers to the knowledge base, To do' }).count(), 1, 'the state is part of the heading, read with a pause');
    // The way to fix it: the knowledge base, and back.
    await page.getByRole('button', { name: 'Add entries or import a file in Knowledge base' }).click();
    await page.locator('input[aria-label="Question"]').fill('Do you ship to Norway?');
    await page.locator('textarea[aria-label="Answer"]').fill('Yes, within 5 days.');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.waitForSelector('td:has-text("Do you ship to Norway?")');
    await page.click('nav [data-view="start"]');
    await page.getByRole('button', { name: 'Open the knowledge base' }).waitFor();
    assert.equal(await page.getByTestId('kb-empty').count(), 0);
    assert.equal(await steps.nth(1).getAttribute('data-state'), 'done');
    assert.equal(await steps.nth(1).getByTestId('step-state').textContent(), 'Done');
    await chooseLanguage(page, 'zh-CN');
    assert.equal(await steps.nth(1).locator('h3').textContent(), '2. 在知识库中添加答案, 已完成');
    await chooseLanguage(page, 'en');
    assert.equal(await steps.nth(3).locator('.after').textContent(), 'Comes after step 1.');
    await page.close();
  });

  it('fits the header on one row at 1280 and 1024 px with "Get started" and "Set operator", and stops saying no client is set up once one is', async () => {
    const page = await openConsole(browser, server, { width: 1280, height: 800 });
    await page.waitForSelector('nav [data-view="start"]');
    await page.waitForSelector('header.top .operator.signin');
    const wrapped = async (): Promise<string[]> =>
      (
        await js<{ h1: number; wrapped: string[] }>(
          page,
          `(() => { const nav = document.querySelector('header.top nav').getBoundingClientRect();
            const wrapped = [...document.querySelectorAll('header.top > *')].filter((el) => el.getClientRects().length && el.getBoundingClientRect().top >= nav.bottom).map((el) => el.outerHTML.slice(0, 60));
            return { h1: nav.bottom, wrapped }; })()`,
        )
      ).wrapped;
    assert.deepEqual(await wrapped(), [], 'nothing on a second row');
    await page.setViewportSize({ width: 1024, height: 700 });
    // The fold follows the resize in the next frame (a ResizeObserver), before anything is painted.
    await waitFor('one row at 1024 px (the header folds its end into "⋯")', async () => (await wrapped()).length === 0);
    // Folded: "Settings" opens them under itself; Esc closes them and gives the focus back to it.
    const more = page.getByRole('button', { name: 'Settings', exact: true });
    assert.equal(await more.getAttribute('title'), 'Sound, keyboard shortcuts, theme, language');
    assert.equal(await page.getByRole('button', { name: 'Dark theme' }).count(), 0, 'folded away');
    await more.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Dark theme' }).waitFor();
    const box = await js<{ button: number; top: number; right: number; edge: number }>(
      page,
      `(() => { const b = document.querySelector('.more-prefs').getBoundingClientRect(); const p = document.querySelector('#header-prefs').getBoundingClientRect();
        return { button: b.bottom, top: p.top, right: p.right, edge: b.right }; })()`,
    );
    assert.ok(box.top >= box.button && box.top - box.button < 12 && Math.abs(box.right - box.edge) < 2, `under its button: ${JSON.stringify(box)}`);
    await page.getByRole('combobox', { name: 'Language' }).focus();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Dark theme' }).waitFor({ state: 'hidden' });
    await waitFor('the focus back on "⋯"', async () => js<boolean>(page, `document.activeElement === document.querySelector('.more-prefs')`));
    // Shift+? from inside it: the shortcut sheet takes over, and on its close the focus comes back to "⋯".
    await more.click();
    await page.getByRole('button', { name: 'Dark theme' }).focus();
    await page.keyboard.press('?');
    await page.locator('[data-testid=shortcut-sheet]').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('[data-testid=shortcut-sheet]').waitFor({ state: 'detached' });
    await waitFor('the focus on "⋯" after the sheet', async () => js<boolean>(page, `document.activeElement === document.querySelector('.more-prefs')`));
    // Open while the window grows past the need to fold (their words take more room than icons did): it closes and the settings are back in the row.
    await more.click();
    await page.setViewportSize({ width: 1680, height: 900 });
    await waitFor('the popover closed as the row unfolds', async () => !(await js<boolean>(page, `document.querySelector('#header-prefs').matches(':popover-open')`)));
    await page.getByRole('button', { name: 'Dark theme' }).waitFor();
    await waitFor('one row at 1680 px, unfolded', async () => (await wrapped()).length === 0);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.click('nav [data-view="start"]');
    assert.match((await page.locator('[data-testid=start-intro]').textContent()) ?? '', /No client is set up yet/);
    await page.getByRole('textbox', { name: 'New client ID' }).fill('shop');
    await page.getByRole('button', { name: 'Add client' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'I have stored it' }).click();
    // The knowledge base has the entry the test above added; the test message is still to send.
    assert.equal(await page.locator('[data-testid=start-intro]').textContent(), 'shop is set up: 3 of 4 steps done.');
    assert.deepEqual(await page.locator('.first-run [data-testid=step-state]').allTextContents(), ['Done', 'Done', 'Done', 'To do']);
  });


  it('one person alone has no Agents tab: the team starts from their name\'s dialog, and the tab joins the nav once there is an agent', async () => {
    const page = await openConsole(browser, server, { width: 1280, height: 800 });
    await page.waitForSelector('nav [data-view="conversations"]');
    assert.equal(await page.locator('nav [data-view="agents"]').count(), 0, 'the nav of one person on one desktop, as before team mode');
    await page.locator('header.top .operator').click();
    await page.getByTestId('operator-dialog').waitFor();
    // Adding an agent is recorded under the owner's name: they say who they are first, as for a reply.
    await page.getByTestId('operator-dialog').getByLabel('Operator ID').fill('olga');
    await page.getByTestId('operator-dialog').getByLabel('Display name').fill('Olga');
    await page.getByTestId('operator-dialog').getByRole('button', { name: 'Save' }).click();
    await page.locator('header.top [data-testid=operator]').click();
    await page.getByTestId('open-agents').click();
    await page.getByTestId('operator-dialog').waitFor({ state: 'detached' });
    await page.locator('nav [data-view="agents"][aria-current="page"]').waitFor();
    await page.getByLabel('Account ID').fill('ann');
    await page.getByLabel('Display name').fill('Ann Lee');
    await page.getByRole('button', { name: 'Add agent' }).click();
    await page.getByTestId('sign-in-link').getByRole('button', { name: 'Done' }).click();
    await page.click('nav [data-view="conversations"]');
    await page.locator('nav [data-view="agents"]').waitFor();
    await page.close();
  });
});
