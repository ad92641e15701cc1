// lab_gallery.test.js - a lab run's gallery/index.html in headless Chromium (Debian chromium,
// driven by npm playwright-core), opened from its file:
//   - every drawing and both plots are <img> elements that load from their files;
//   - the drawings with <script>, a wrong root, a truncated body or an entity bomb are
//     marked invalid next to their image, the valid one valid;
//   - nothing runs: the planted SVG's script would retitle or navigate the page, the
//     answer's <script> is text; no request leaves the results directory.
// Usage: node lab_gallery.test.js GALLERY_HTML. With PACER_SHOTS=DIR, a full-page screenshot
// goes to DIR/lab-gallery.png and the two plots to DIR/lab-plot-*.png.
// Prints "ok - NAME" or "FAIL - NAME: WHY" per check.
'use strict';
const path = require('path');
const { chromium } = require('playwright-core');
const { ok, fail, check, expect, finish } = require('./harness');

const FILE = path.resolve(process.argv[2]);
const SHOTS = process.env.PACER_SHOTS || '';

async function run() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const requests = [], dialogs = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  await page.goto('file://' + FILE);
  await page.waitForLoadState('load');
  await page.waitForTimeout(300);

  await check('gallery: every drawing and plot is an <img> that loaded from its file', async () => {
    const imgs = await page.$$eval('img', (els) => els.map((e) => ({ src: e.getAttribute('src'), w: e.naturalWidth })));
    expect(imgs.length === 8, 'images: ' + imgs.length);
    const plots = imgs.filter((i) => i.src.startsWith('../plots/'));
    expect(plots.length === 2 && plots.every((i) => i.w > 0), 'plots: ' + JSON.stringify(plots));
    const good = imgs.filter((i) => /pelicans\/draw-(f16|q8_0)-1\.svg$/.test(i.src));
    expect(good.length === 2 && good.every((i) => i.w > 0), 'valid drawings loaded: ' + JSON.stringify(imgs));
    expect((await page.$$('svg')).length === 0, 'an SVG is inlined');
  });
  await check('gallery: the bad drawings are marked invalid, the good one valid', async () => {
    const marks = await page.$$eval('article', (as) => as.map((a) => [a.id, (a.querySelector('p.ok, p.bad') || {}).className || '']));
    for (const [id, cls] of marks) {
      if (/^r1-draw-(script|trunc|root|bomb)$/.test(id)) expect(cls === 'bad', id + ' is ' + cls);
      if (/^r1-draw-(f16|q8_0)$/.test(id)) expect(cls === 'ok', id + ' is ' + cls);
    }
    const script = await page.textContent('article[id="r1-draw-script"] p.bad');
    expect(/script/.test(script), script);
  });
  await check('gallery: no script runs (planted SVG script, answer <script>), no request leaves the directory', async () => {
    expect(!/pwned/.test(await page.title()), 'title: ' + await page.title());
    expect(!/pwned/.test(page.url()), 'url: ' + page.url());
    expect(dialogs.length === 0, 'dialogs: ' + dialogs.join(','));
    const dir = 'file://' + path.dirname(path.dirname(FILE));
    const out = requests.filter((u) => !u.startsWith(dir));
    expect(out.length === 0, 'requests: ' + out.join(' '));
    const answer = await page.textContent('article[id="r1-markup-f16"] pre');
    expect(answer.includes('<script>document.title="pwned"</script>'), 'answer text: ' + answer);
  });
  if (SHOTS) {
    await page.screenshot({ path: path.join(SHOTS, 'lab-gallery.png'), fullPage: true });
    await page.locator('img[src$="decode.svg"]').screenshot({ path: path.join(SHOTS, 'lab-plot-decode.png') });
    await page.locator('img[src$="length-time.svg"]').screenshot({ path: path.join(SHOTS, 'lab-plot-length-time.png') });
  }
  await browser.close();
}

finish(run, 'gallery browser run');
