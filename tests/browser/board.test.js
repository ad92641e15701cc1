// board.test.js - the board's website in headless Chromium (Debian chromium, driven by npm
// playwright-core), against a running `pacer board` that tests/integration/board_web.sh
// started and seeded:
//   - the upload flow end to end: the receipt is read in the browser and reviewed, and the
//     board's access log shows no request at all until "Confirm and publish";
//   - the profile cookie's flags; a second upload in the same browser lands on the same
//     profile, a fresh browser context gets a new one;
//   - keyboard navigation of the map reaches a point and opens its receipt;
//   - filters change the map, the counters and the standings;
//   - display names `<script>` and `"><img onerror>` render as text, nothing runs;
//   - a cross-site form post is refused and stores nothing.
// Usage: node board.test.js BOARD_URL WORKDIR BOARD_LOG [EVIL_URL]
//   WORKDIR holds the receipts (up1.json, up2.json, up3.json, xss1.json, xss2.json);
//   BOARD_LOG is the board's stderr (its access log); EVIL_URL serves evil.html, a page of
//   another site that posts a form to the board. With PACER_SHOTS=DIR, screenshots of the
//   dashboard, map, podium, a profile, a receipt and the upload review are written there;
//   with PACER_SHOTS_ONLY=1 too, only the screenshots are taken (bench/board_web.sh).
//   Prints "ok - NAME" or "FAIL - NAME: WHY" per check.
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');
const { ok, fail, check, expect, finish } = require('./harness');

const [BOARD, WORK, LOG, EVIL] = process.argv.slice(2);
const SHOTS = process.env.PACER_SHOTS || '';

/* The access-log lines of the board ("http: METHOD PATH STATUS"). */
function logLines() {
  return fs.readFileSync(LOG, 'utf8').split('\n').filter((l) => l.includes('http: '));
}

/* Fills and confirms the upload form; returns the answer page's state and profile id. */
async function upload(page, file, name) {
  await page.goto(BOARD + '/upload');
  await page.fill('input[name="display_name"]', name);
  await page.setInputFiles('input[type="file"]', path.join(WORK, file));
  await page.waitForSelector('#review:not([hidden])');
  await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  const state = (await page.textContent('#result-state')).trim();
  const href = await page.getAttribute('#result a[href^="/c/"]', 'href');
  return { state, profile: href ? href.replace(/^\/c\//, '').replace(/\?.*$/, '') : '' };
}

async function run() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  if (SHOTS && process.env.PACER_SHOTS_ONLY) {
    await screenshots(browser, '');
    await browser.close();
    return;
  }
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  let first = null;

  await check('upload: review first, nothing sent before confirm, then published', async () => {
    await page.goto(BOARD + '/upload');
    await page.waitForLoadState('networkidle');
    const before = logLines().length;
    await page.fill('input[name="display_name"]', 'Browser Alice');
    await page.setInputFiles('input[type="file"]', path.join(WORK, 'up1.json'));
    await page.waitForSelector('#review:not([hidden])');
    const review = await page.textContent('#review-fields');
    expect(review.includes('org/m'), 'the review names the model: ' + review);
    expect(/tok\/s/.test(review), 'the review shows timings');
    expect(!(await page.isDisabled('button[type="submit"]')), 'confirm is enabled after the review');
    await page.waitForTimeout(500);
    const during = logLines().slice(before);
    expect(during.length === 0, 'requests before confirm: ' + during.join(' | '));
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    const after = logLines().slice(before);
    expect(after.some((l) => /http: POST \/upload 201/.test(l)), 'one POST after confirm: ' + after.join(' | '));
    expect(after.filter((l) => l.includes('POST')).length === 1, 'exactly one POST');
    const state = (await page.textContent('#result-state')).trim();
    expect(state === 'public', 'state ' + state);
    const href = await page.getAttribute('#result-url', 'href');
    expect(/\/r\/s-[0-9a-f]+$/.test(href), 'a result URL: ' + href);
    first = (await page.getAttribute('#result a[href^="/c/"]', 'href')).replace(/^\/c\//, '');
  });

  await check('cookie: HttpOnly, SameSite=Strict, not readable by script (loopback: no Secure)', async () => {
    const cookies = await ctx.cookies(BOARD);
    const p = cookies.find((c) => c.name === 'pacer_profile');
    expect(p, 'a profile cookie');
    expect(p.httpOnly === true, 'HttpOnly');
    expect(p.sameSite === 'Strict', 'SameSite ' + p.sameSite);
    expect(p.secure === false, 'loopback development drops Secure');
    expect(p.expires > Date.now() / 1000 + 86400 * 300, 'remembered for a year');
    const seen = await page.evaluate(() => document.cookie);
    expect(!seen.includes('pacer_profile'), 'script cannot read it: ' + seen);
  });

  await check('second upload in the same browser: same profile', async () => {
    const r = await upload(page, 'up2.json', 'Browser Alice');
    expect(r.state === 'public', 'state ' + r.state);
    expect(first && r.profile === first, r.profile + ' vs ' + first);
    await page.goto(BOARD + '/upload');
    expect((await page.textContent('#uploading-as')).includes('Browser Alice'), 'the form knows the profile');
  });

  await check('fresh browser context: a new profile', async () => {
    const ctx2 = await browser.newContext();
    const p2 = await ctx2.newPage();
    const r = await upload(p2, 'up3.json', 'Browser Bob');
    expect(r.state === 'public', 'state ' + r.state);
    expect(r.profile && r.profile !== first, 'a new profile: ' + r.profile);
    await ctx2.close();
  });

  await check('keyboard: Tab reaches a map point, Enter opens its receipt', async () => {
    await page.goto(BOARD + '/');
    let label = null;
    for (let i = 0; i < 120 && !label; i++) {
      await page.keyboard.press('Tab');
      label = await page.evaluate(() => {
        const a = document.activeElement;
        const t = a && a.closest && a.closest('#map-chart') && a.tagName.toLowerCase() === 'a'
          ? a.querySelector('title') : null;
        return t ? t.textContent : null;
      });
    }
    expect(label, 'no map point reached by Tab');
    expect(/tok\/s/.test(label), 'the point is labelled: ' + label);
    expect(await page.getByRole('link', { name: label }).count() >= 1, 'its accessible name is its label');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(/\/r\/s-[0-9a-f]+$/.test(page.url()), 'opened ' + page.url());
    expect(await page.isVisible('#verdict'), 'the receipt page');
  });

  await check('filters change the map, the counters and the standings', async () => {
    await page.goto(BOARD + '/');
    const count = async () => Number(await page.textContent('dd[data-count="runs"]'));
    const points = async () => page.locator('#map-chart a').count();
    const most = async () => page.locator('#most tbody tr').allTextContents();
    const [r0, p0, m0] = [await count(), await points(), await most()];
    await Promise.all([page.waitForNavigation(), page.selectOption('select[name="model"]', 'org/moe')]);
    expect(/model=org%2Fmoe/.test(page.url()), 'the filter is in the URL: ' + page.url());
    const [r1, p1, m1] = [await count(), await points(), await most()];
    expect(r1 > 0 && r1 < r0, 'results ' + r0 + ' -> ' + r1);
    expect(p1 > 0 && p1 < p0, 'map points ' + p0 + ' -> ' + p1);
    expect(JSON.stringify(m1) !== JSON.stringify(m0), 'standings unchanged');
    const hw = await page.locator('select[name="hardware"] option').allTextContents();
    expect(hw.length >= 2, 'hardware choices');
  });

  for (const [file, name] of [['xss1.json', '<script>window.__xss=1</script>'],
                              ['xss2.json', '"><img src=x onerror="window.__xss=2">']]) {
    await check('display name ' + name + ' renders inert', async () => {
      const c = await browser.newContext();
      const p = await c.newPage();
      const ran = [];
      p.on('dialog', (d) => { ran.push(d.message()); d.dismiss(); });
      const r = await upload(p, file, name);
      expect(r.state === 'public', 'state ' + r.state);
      for (const url of ['/', '/c/' + r.profile]) {
        await p.goto(BOARD + url);
        expect(await p.evaluate(() => window.__xss === undefined), 'script ran on ' + url);
        expect(await p.locator('img').count() === 0, 'an img element on ' + url);
        expect(await p.locator('script').count() === 1, 'only the board script on ' + url);
        expect((await p.textContent('body')).includes(name), 'the name shows as text on ' + url);
      }
      expect(ran.length === 0, 'a dialog opened');
      await c.close();
    });
  }

  if (EVIL) {
    await check('cross-site form post refused, nothing stored', async () => {
      const before = logLines().length;
      const [resp] = await Promise.all([
        page.waitForResponse((r) => r.url().startsWith(BOARD + '/upload') && r.request().method() === 'POST'),
        page.goto(EVIL + '/evil.html'),
      ]);
      expect(resp.status() === 403, 'status ' + resp.status());
      await page.waitForLoadState();
      expect((await page.textContent('h1')).includes('Refused'), 'the refusal page');
      const lines = logLines().slice(before).filter((l) => l.includes('POST'));
      expect(lines.length === 1 && / 403$/.test(lines[0]), lines.join(' | '));
    });
  }

  expect(dialogs.length === 0, 'dialogs: ' + dialogs.join(', '));
  if (SHOTS) await screenshots(browser, first);
  await browser.close();
}

async function screenshots(browser, profile) {
  const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const p = await c.newPage();
  await p.goto(BOARD + '/');
  await p.screenshot({ path: path.join(SHOTS, 'dashboard.png'), fullPage: true });
  await p.locator('#map').screenshot({ path: path.join(SHOTS, 'map.png') });
  await p.locator('#podium').screenshot({ path: path.join(SHOTS, 'podium.png') });
  await p.goto(BOARD + '/?size=active');
  await p.locator('#podium').screenshot({ path: path.join(SHOTS, 'podium-active.png') });
  const top = await p.getAttribute('#most tbody tr:first-child a', 'href');
  await p.goto(BOARD + (top || '/c/' + profile));
  await p.screenshot({ path: path.join(SHOTS, 'profile.png'), fullPage: true });
  await p.goto(BOARD + '/');
  const receipt = await p.getAttribute('#contributions tbody tr:first-child a[href^="/r/"]', 'href');
  await p.goto(BOARD + receipt);
  await p.screenshot({ path: path.join(SHOTS, 'receipt.png'), fullPage: true });
  await p.goto(BOARD + '/upload');
  await p.fill('input[name="display_name"]', 'Screenshot');
  await p.setInputFiles('input[type="file"]', path.join(WORK, 'up1.json'));
  await p.waitForSelector('#review:not([hidden])');
  await p.screenshot({ path: path.join(SHOTS, 'upload-review.png'), fullPage: true });
  await c.close();
  console.log('screenshots in ' + SHOTS);
}

finish(run, 'browser run');
