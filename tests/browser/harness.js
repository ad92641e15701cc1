/* The checks of the browser tests: one "ok - NAME" or "FAIL - NAME: why" line each, as the
 * shell tests print them; finish() exits 1 when any check failed. */
let failures = 0;

function ok(name) { console.log('ok - ' + name); }
function fail(name, why) { failures++; console.log('FAIL - ' + name + ': ' + String(why).split('\n')[0]); }
async function check(name, fn) {
  try { await fn(); ok(name); } catch (e) { fail(name, e && e.message ? e.message : e); }
}
function expect(cond, why) { if (!cond) throw new Error(why); }

/* Runs the async body, then exits: 0 when every check passed; a body that throws is one
 * failure named `what`. */
function finish(body, what) {
  body().then(() => process.exit(failures ? 1 : 0), (e) => { fail(what, e && e.stack ? e.stack : e); process.exit(1); });
}

module.exports = { ok, fail, check, expect, finish };
