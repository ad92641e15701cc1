/* board.js - the results board's only script (served at /assets/board.js; the pages' CSP
   allows no inline script). Everything works without it; with it:
   - the upload form reads the chosen receipt in the browser and shows its hardware, model
     and timing fields for review; nothing is sent until "Confirm and publish" is pressed;
   - the filter selects apply as soon as they change.
   Text from the receipt is only ever set as textContent, never parsed as markup. */
'use strict';

(function () {
  function text(el, s) { el.textContent = s; return el; }

  function get(obj, path) {
    var v = obj;
    for (var i = 0; i < path.length; i++) {
      if (v === null || typeof v !== 'object' || !(path[i] in v)) return undefined;
      v = v[path[i]];
    }
    return v;
  }

  function show(v) {
    if (v === undefined || v === null || v === '') return 'unknown';
    if (typeof v === 'number') return String(Math.round(v * 100) / 100);
    return String(v);
  }

  /* The fields a person checks before publishing, from a parsed receipt. */
  function reviewFields(r) {
    var gpus = get(r, ['hardware', 'gpus']);
    var gpu = Array.isArray(gpus) && gpus.length
      ? gpus.map(function (g) { return g && g.name ? g.name : '?'; }).join(', ')
      : 'none reported';
    var rows = [
      ['Model', show(get(r, ['model', 'id']))],
      ['Revision', show(get(r, ['model', 'revision']))],
      ['Suite', show(get(r, ['suite', 'id'])) + ' (rules v' + show(get(r, ['suite', 'rule_version'])) + ')'],
      ['Mode', show(get(r, ['mode'])) + (get(r, ['engine']) ? ' (' + get(r, ['engine']) + ')' : '')],
      ['Backend', show(get(r, ['backend', 'name']))],
      ['Platform', show(get(r, ['platform', 'name']))],
      ['CPU', show(get(r, ['hardware', 'cpu', 'model']))],
      ['GPUs', gpu],
      ['Created', show(get(r, ['created_utc']))]
    ];
    var cells = get(r, ['cells']);
    if (Array.isArray(cells)) {
      cells.forEach(function (c) {
        var a = c && c.aggregates;
        var tok = a && a.stream_tok_s ? a.stream_tok_s.median : null;
        var ft = a && a.first_text_ms ? a.first_text_ms.median : null;
        rows.push([show(c && c.workload) + ' / ' + show(c && c.setting),
          tok === null || tok === undefined ? (c && c.status ? c.status : 'no figures')
            : show(tok) + ' tok/s, first text ' + show(ft) + ' ms']);
      });
    }
    return rows;
  }

  function setupUpload(form) {
    var file = form.querySelector('input[type="file"]');
    var button = form.querySelector('button[type="submit"]');
    var review = document.getElementById('review');
    var list = document.getElementById('review-fields');
    var problem = document.getElementById('review-problem');
    var consent = form.querySelector('.no-js-consent');
    if (!file || !button || !review || !list || !problem) return;
    /* the review replaces the no-script consent box */
    if (consent) {
      consent.querySelector('input').required = false;
      consent.hidden = true;
    }
    text(button, 'Confirm and publish');
    button.disabled = true;
    var limit = parseInt(form.getAttribute('data-max-bytes'), 10) || 0;

    file.addEventListener('change', function () {
      button.disabled = true;
      review.hidden = true;
      text(problem, '');
      while (list.firstChild) list.removeChild(list.firstChild);
      var f = file.files && file.files[0];
      if (!f) return;
      if (limit && f.size > limit) {
        text(problem, 'This file is ' + f.size + ' bytes; the board accepts receipts up to ' + limit + ' bytes.');
        return;
      }
      f.text().then(function (body) {
        var r;
        try { r = JSON.parse(body); } catch (e) {
          text(problem, 'This file is not a receipt (not JSON): ' + e.message);
          return;
        }
        if (!r || typeof r !== 'object' || Array.isArray(r) || !r.suite || !r.cells) {
          text(problem, 'This JSON file is not a pacer receipt (no suite or cells).');
          return;
        }
        reviewFields(r).forEach(function (pair) {
          list.appendChild(text(document.createElement('dt'), pair[0]));
          list.appendChild(text(document.createElement('dd'), pair[1]));
        });
        review.hidden = false;
        button.disabled = false;
      }, function () { text(problem, 'The file could not be read.'); });
    });
  }

  function setupFilters(form) {
    form.querySelectorAll('select').forEach(function (s) {
      s.addEventListener('change', function () { form.submit(); });
    });
    var apply = form.querySelector('.apply');
    if (apply) apply.hidden = true;
  }

  document.addEventListener('DOMContentLoaded', function () {
    var up = document.querySelector('form.upload');
    if (up) setupUpload(up);
    document.querySelectorAll('form.filters').forEach(setupFilters);
  });
})();
