/* report.js - the `heapscope html` page: reads the profile data embedded
 * as JSON (see src/analyse/an_html.c for its layout) and draws the
 * summary, the heap/RSS timeline (drag to select a time range), the
 * flamegraph (canvas, pruned below a pixel, click to zoom), paged sortable
 * tables and the size histogram.
 *
 * The time range keeps the stacks whose last COUNTERS snapshot (the last
 * time they allocated or freed) falls inside it; their figures stay the
 * whole run's (the profile keeps only each stack's latest snapshot).
 * For tests and links, the URL's hash may preset the view:
 * #cost=leaked&range=T0,T1 (ns).  When everything is drawn, <body> gets
 * data-status="ok"; any script error goes to #errors and sets "error". */
(function () {
  'use strict';
  var errs = document.getElementById('errors');
  window.onerror = function (msg, src, line) {
    errs.textContent += 'script error: ' + msg + ' (line ' + line + ')\n';
    document.body.setAttribute('data-status', 'error');
  };
  var D = JSON.parse(document.getElementById('data').textContent);
  var N = D.ids.length;
  var COSTS = ['allocations', 'bytes', 'leaked', 'peak', 'temporary'];
  var CLASSES = ['program', 'libc', 'libstdc++', 'other'];
  var range = null, cost = 1;

  function fig(i, k) { return D.figs[i * 6 + k]; }
  function fmtN(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function plural(n, noun) { return fmtN(n) + ' ' + noun + (n === 1 ? '' : 's'); }
  function fmtB(n) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], k = 0;
    while (n >= 1024 && k < 4) { n /= 1024; k++; }
    return (k ? n.toFixed(1) : String(n)) + ' ' + u[k];
  }
  function fmtT(ns) { return ns >= 1e9 ? (ns / 1e9).toFixed(3) + ' s' : (ns / 1e6).toFixed(2) + ' ms'; }
  function fmtCost(k, v) { return k === 0 || k === 4 ? fmtN(v) : fmtB(v); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var a in attrs) e.setAttribute(a, attrs[a]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function name(code) { return D.names[code >> 2]; }
  function inRange(i) { return !range || (fig(i, 5) >= range[0] && fig(i, 5) <= range[1]); }
  /* the innermost frame of the program's own code, else the innermost */
  function site(i) {
    var s = D.stacks[i];
    for (var k = s.length - 1; k >= 0; k--) if ((s[k] & 3) === 0) return s[k];
    return s.length ? s[s.length - 1] : -1;
  }

  (function parseHash() {
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var p = kv.split('=');
      if (p[0] === 'cost' && COSTS.indexOf(p[1]) >= 0) cost = COSTS.indexOf(p[1]);
      if (p[0] === 'range') {
        var r = p[1].split(',').map(Number);
        if (r.length === 2 && r[0] <= r[1]) range = r;
      }
    });
  })();

  /* ---- page skeleton ---- */
  var app = document.getElementById('app');
  app.textContent = '';
  app.appendChild(el('h1', {}, D.title));
  app.appendChild(el('div', { 'class': 'sub' }, (D.exe || '?') + (D.summary.final ? '' : ' (profile not final: live blocks may not be leaks)')));

  /* ---- summary ---- */
  app.appendChild(el('h2', {}, 'Summary'));
  var sum = el('div', { 'class': 'sum', id: 'summary' });
  var S = D.summary;
  [['stacks', 'stacks', fmtN(N)], ['allocations', 'allocations', fmtN(S.allocations)],
   ['frees', 'frees', fmtN(S.frees)], ['bytes', 'bytes allocated', fmtB(S.bytes_allocated)],
   ['peak', 'peak heap', fmtB(S.peak_bytes) + ' at ' + fmtT(S.peak_t)],
   ['leaked', 'leaked', fmtB(S.leaked_bytes) + ' in ' + plural(S.leaked_allocations, 'block')],
   ['temporary', 'temporary allocations', fmtN(S.temporary)], ['rss', 'peak RSS', fmtB(S.rss_peak)],
   ['time', 'run time', fmtT(S.run_time_ns)], ['threads', 'threads', fmtN(S.threads)]
  ].forEach(function (f) {
    var d = el('div', {}, f[1]);
    var b = el('b', { id: 'sum-' + f[0] }, f[2]);
    d.insertBefore(b, d.firstChild);
    sum.appendChild(d);
  });
  app.appendChild(sum);

  /* ---- timeline ---- */
  app.appendChild(el('h2', {}, 'Heap and RSS over time'));
  var tl = el('canvas', { id: 'timeline', width: 1200, height: 180 });
  app.appendChild(tl);
  var rinfo = el('div', { 'class': 'ctl' });
  var rtext = el('span', { id: 'range-info' });
  var rclear = el('button', { id: 'range-clear' }, 'Whole run');
  rinfo.appendChild(rtext); rinfo.appendChild(el('span', {}, ' ')); rinfo.appendChild(rclear);
  app.appendChild(rinfo);
  var tmax = 1;
  for (var i = 0; i < D.samples.length; i += 3) tmax = Math.max(tmax, D.samples[i]);
  for (i = 0; i < N; i++) tmax = Math.max(tmax, fig(i, 5));
  tmax = Math.max(tmax, S.run_time_ns || 0);
  var drag = null;
  function drawTimeline() {
    var c = tl.getContext('2d'), W = tl.width, H = tl.height, vmax = 1, k;
    c.clearRect(0, 0, W, H);
    for (k = 0; k < D.samples.length; k += 3) vmax = Math.max(vmax, D.samples[k + 1], D.samples[k + 2]);
    var sel = drag || (range && [range[0] / tmax * W, range[1] / tmax * W]);
    if (sel) { c.fillStyle = 'rgba(80,120,255,0.18)'; c.fillRect(Math.min(sel[0], sel[1]), 0, Math.abs(sel[1] - sel[0]) + 1, H); }
    [[1, '#c33', 'heap'], [2, '#36c', 'RSS']].forEach(function (s, n) {
      c.strokeStyle = s[1]; c.beginPath();
      for (var k = 0; k < D.samples.length; k += 3) {
        var x = D.samples[k] / tmax * W, y = H - 14 - D.samples[k + s[0]] / vmax * (H - 30);
        if (k) c.lineTo(x, y); else c.moveTo(x, y);
      }
      c.stroke(); c.fillStyle = s[1]; c.fillText(s[2], 8 + n * 50, 12);
    });
    c.fillStyle = '#444';
    c.fillText('max ' + fmtB(vmax) + '; ' + plural(D.samples.length / 3, 'sample') + ' over ' + fmtT(tmax) +
               (D.samples.length ? '' : ' (none: the run was shorter than the sample period)'), 120, 12);
    rtext.textContent = range ? 'Range ' + fmtT(range[0]) + ' - ' + fmtT(range[1]) + ': stacks last active in it. ' :
      'Drag across the chart to keep only the stacks last active (allocating or freeing) in a time range. ';
  }
  function tAt(e) { var b = tl.getBoundingClientRect(); return Math.max(0, Math.min(tl.width, (e.clientX - b.left) * tl.width / b.width)); }
  tl.addEventListener('mousedown', function (e) { drag = [tAt(e), tAt(e)]; drawTimeline(); });
  tl.addEventListener('mousemove', function (e) { if (drag) { drag[1] = tAt(e); drawTimeline(); } });
  window.addEventListener('mouseup', function () {
    if (!drag) return;
    var a = Math.min(drag[0], drag[1]), b = Math.max(drag[0], drag[1]);
    drag = null;
    range = b - a < 2 ? null : [a / tl.width * tmax, b / tl.width * tmax];
    refresh();
  });
  rclear.addEventListener('click', function () { range = null; refresh(); });

  /* ---- flamegraph ---- */
  app.appendChild(el('h2', {}, 'Flamegraph'));
  var fctl = el('div', { 'class': 'ctl' });
  var csel = el('select', { id: 'cost' });
  COSTS.forEach(function (c, k) { var o = el('option', { value: k }, c); csel.appendChild(o); });
  var freset = el('button', { id: 'flame-reset' }, 'Reset zoom');
  var fpath = el('span', { id: 'flame-path', 'class': 'sub' });
  fctl.appendChild(el('span', {}, 'cost ')); fctl.appendChild(csel); fctl.appendChild(freset); fctl.appendChild(fpath);
  app.appendChild(fctl);
  var fc = el('canvas', { id: 'flame', width: 1200, height: 100 });
  app.appendChild(fc);
  var tip = el('div', { 'class': 'tip' });
  document.body.appendChild(tip);
  var tree = null, zoom = null, drawn = [];
  var PAL = [[205, 80, 40, 50, 110, 30], [80, 130, 200, 50, 60, 55], [70, 170, 70, 60, 60, 50], [150, 140, 170, 50, 40, 50]];
  function colour(node) {
    var h = 2166136261, s = D.names[node.n];
    for (var k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), 16777619) >>> 0;
    var p = PAL[node.c], v = h % 1000, w = ((h / 1000) >>> 0) % 1000;
    return 'rgb(' + (p[0] + (v * p[3] / 1000 | 0)) + ',' + (p[1] + (w * p[4] / 1000 | 0)) + ',' + (p[2] + (v * p[5] / 1000 | 0)) + ')';
  }
  /* merge the stacks in range by function name, root first */
  function buildTree() {
    var root = { n: -1, c: 3, v: 0, ch: new Map(), p: null };
    for (var i = 0; i < N; i++) {
      var v = fig(i, cost);
      if (!v || !inRange(i)) continue;
      var node = root, s = D.stacks[i];
      root.v += v;
      for (var k = 0; k < s.length; k++) {
        var key = s[k] >> 2, ch = node.ch.get(key);
        if (!ch) { ch = { n: key, c: s[k] & 3, v: 0, ch: new Map(), p: node }; node.ch.set(key, ch); }
        ch.v += v;
        node = ch;
      }
    }
    return root;
  }
  function label(node) { return node.n < 0 ? 'all' : D.names[node.n]; }
  function drawFlame() {
    var W = fc.width, RH = 16, top = zoom || tree;
    drawn = [];
    var anc = [];
    for (var a = top.p; a; a = a.p) anc.unshift(a);
    /* layout: ancestors full width, then the zoomed subtree, pruned < 1 px */
    anc.forEach(function (n, d) { drawn.push([0, d * RH, W, n]); });
    var d0 = anc.length, maxd = d0;
    function lay(node, x, d, w) {
      drawn.push([x, d * RH, w, node]);
      if (d > maxd) maxd = d;
      var kids = Array.from(node.ch.values()).sort(function (p, q) { return q.v - p.v || (label(p) < label(q) ? -1 : 1); });
      for (var k = 0; k < kids.length; k++) {
        var cw = kids[k].v / node.v * w;
        if (cw < 1) break; /* sorted: the rest are narrower still */
        lay(kids[k], x, d + 1, cw);
        x += cw;
      }
    }
    if (top.v) lay(top, 0, d0, W);
    fc.height = (maxd + 1) * RH + 2;
    var c = fc.getContext('2d');
    c.font = '11px monospace';
    c.textBaseline = 'middle';
    drawn.forEach(function (r, k) {
      c.fillStyle = k < d0 ? '#ddd' : (r[3].n < 0 ? '#bbb' : colour(r[3]));
      c.fillRect(r[0], r[1], Math.max(r[2] - 0.5, 0.5), RH - 1);
      var n = Math.floor((r[2] - 6) / 6.6), t = label(r[3]);
      if (n >= 3) { c.fillStyle = '#000'; c.fillText(t.length <= n ? t : t.slice(0, n - 2) + '..', r[0] + 3, r[1] + RH / 2); }
    });
    fc.setAttribute('data-total', tree.v);
    fc.setAttribute('data-drawn', drawn.length);
    fc.setAttribute('data-frames', JSON.stringify(drawn.slice(0, 200).map(function (r) { return [label(r[3]), r[3].v]; })));
    fpath.textContent = zoom ? ' zoomed on ' + label(zoom) + ' (' + fmtCost(cost, zoom.v) + ')' : ' ' + COSTS[cost] + ': ' + fmtCost(cost, tree.v) + ' total';
  }
  function hit(e) {
    var b = fc.getBoundingClientRect(), x = (e.clientX - b.left) * fc.width / b.width, y = e.clientY - b.top;
    for (var k = drawn.length - 1; k >= 0; k--) {
      var r = drawn[k];
      if (x >= r[0] && x < r[0] + r[2] && y >= r[1] && y < r[1] + 16) return r[3];
    }
    return null;
  }
  fc.addEventListener('mousemove', function (e) {
    var n = hit(e);
    if (!n) { tip.style.display = 'none'; return; }
    tip.textContent = label(n) + ' [' + CLASSES[n.c] + ']\n' + COSTS[cost] + ': ' + fmtCost(cost, n.v) +
      ' (' + (tree.v ? (100 * n.v / tree.v).toFixed(2) : '0') + '%)';
    tip.style.display = 'block'; tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px';
  });
  fc.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  fc.addEventListener('click', function (e) { var n = hit(e); if (n) { zoom = n.p ? n : null; drawFlame(); } });
  freset.addEventListener('click', function () { zoom = null; drawFlame(); });
  csel.addEventListener('change', function () { cost = +csel.value; zoom = null; tree = buildTree(); drawFlame(); });

  /* ---- tables ---- */
  var COLS = [['stack', function (i) { return D.ids[i]; }, fmtN]];
  COSTS.forEach(function (c, k) { COLS.push([c, function (i) { return fig(i, k); }, k === 0 || k === 4 ? fmtN : fmtB]); });
  COLS.push(['last active', function (i) { return fig(i, 5); }, fmtT]);
  COLS.push(['site', function (i) { var s = site(i); return s < 0 ? '' : name(s); }, String]);
  var PAGE = 50;
  function Table(id, title, keep, sortCol) {
    app.appendChild(el('h2', {}, title));
    var pager = el('div', { 'class': 'pager' });
    var prev = el('button', {}, '< prev'), next = el('button', {}, 'next >'), info = el('span', { id: id + '-count' });
    pager.appendChild(prev); pager.appendChild(next); pager.appendChild(info);
    app.appendChild(pager);
    var tbl = el('table', { id: id }), thead = el('thead'), tbody = el('tbody');
    tbl.appendChild(thead); tbl.appendChild(tbody); app.appendChild(tbl);
    var rows = [], page = 0, sort = sortCol, open = {};
    var hr = el('tr');
    COLS.forEach(function (c, k) {
      var th = el('th', { 'class': k === COLS.length - 1 ? 'fn' : '' }, c[0]);
      th.addEventListener('click', function () { sort = k; page = 0; fill(); });
      hr.appendChild(th);
    });
    thead.appendChild(hr);
    function fill() {
      rows = [];
      for (var i = 0; i < N; i++) if (keep(i) && inRange(i)) rows.push(i);
      var key = COLS[sort][1], asc = sort === 0 || sort === COLS.length - 1;
      var kv = new Map();
      rows.forEach(function (i) { kv.set(i, key(i)); });
      rows.sort(function (a, b) {
        var x = kv.get(a), y = kv.get(b);
        if (x !== y) return (x < y ? -1 : 1) * (asc ? 1 : -1);
        return D.ids[a] - D.ids[b];
      });
      Array.prototype.forEach.call(hr.children, function (th, k) { th.classList.toggle('sorted', k === sort); });
      show();
    }
    function show() {
      var pages = Math.max(1, Math.ceil(rows.length / PAGE));
      page = Math.min(page, pages - 1);
      tbody.textContent = '';
      rows.slice(page * PAGE, page * PAGE + PAGE).forEach(function (i) {
        var tr = el('tr', { 'class': 'row', 'data-stack': D.ids[i] });
        COLS.forEach(function (c, k) { tr.appendChild(el('td', { 'class': k === COLS.length - 1 ? 'fn' : '' }, c[2](c[1](i)))); });
        tr.addEventListener('click', function () { open[i] = !open[i]; show(); });
        tbody.appendChild(tr);
        if (open[i]) {
          var fr = el('tr', { 'class': 'frames' }), td = el('td', { colspan: COLS.length });
          var s = D.stacks[i];
          for (var k = s.length - 1; k >= 0; k--) {
            var line = el('div', { 'class': 'c' + (s[k] & 3) }, '#' + (s.length - 1 - k) + '  ' + name(s[k]) + '  [' + CLASSES[s[k] & 3] + ']');
            td.appendChild(line);
          }
          fr.appendChild(td); tbody.appendChild(fr);
        }
      });
      info.textContent = ' rows ' + (rows.length ? page * PAGE + 1 : 0) + '-' + Math.min(rows.length, page * PAGE + PAGE) + ' of ' + fmtN(rows.length);
      info.setAttribute('data-rows', rows.length);
    }
    prev.addEventListener('click', function () { if (page > 0) { page--; show(); } });
    next.addEventListener('click', function () { if ((page + 1) * PAGE < rows.length) { page++; show(); } });
    return { fill: fill };
  }

  var tables = [
    Table('tbl-stacks', 'Top stacks', function () { return true; }, 2),
    Table('tbl-leaks', 'Leaks (live at exit)', function (i) { return fig(i, 2) > 0; }, 3),
    Table('tbl-temp', 'Temporary allocations', function (i) { return fig(i, 4) > 0; }, 5)
  ];

  /* ---- histogram ---- */
  app.appendChild(el('h2', {}, 'Requested sizes (whole run)'));
  var ht = el('table', { id: 'hist' }), hmax = 1;
  ht.appendChild(el('tr')).innerHTML = '<th>sizes</th><th>allocations</th><th>bytes</th><th class="fn"></th>';
  D.hist.forEach(function (h) { hmax = Math.max(hmax, h[2]); });
  D.hist.forEach(function (h) {
    var tr = el('tr', { 'class': 'hist' });
    tr.appendChild(el('td', {}, h[0] === h[1] ? fmtN(h[0]) : fmtN(h[0]) + ' - ' + fmtN(h[1])));
    tr.appendChild(el('td', {}, fmtN(h[2])));
    tr.appendChild(el('td', {}, fmtB(h[3])));
    var td = el('td', { 'class': 'fn' }), bar = el('div', { 'class': 'bar' });
    bar.style.width = Math.max(1, 400 * h[2] / hmax) + 'px';
    td.appendChild(bar); tr.appendChild(td); ht.appendChild(tr);
  });
  app.appendChild(ht);

  var status = el('div', { id: 'status', 'class': 'sub' });
  app.appendChild(status);

  function refresh() {
    drawTimeline();
    zoom = null;
    tree = buildTree();
    drawFlame();
    tables.forEach(function (t) { t.fill(); });
    var shown = 0;
    for (var i = 0; i < N; i++) if (inRange(i)) shown++;
    document.getElementById('sum-stacks').setAttribute('data-shown', shown);
  }
  csel.value = cost;
  refresh();
  var ms = performance.now();
  status.textContent = 'drawn ' + plural(N, 'stack') + ' in ';
  status.appendChild(el('span', { id: 'load-ms' }, ms.toFixed(0)));
  status.appendChild(document.createTextNode(' ms after navigation start'));
  if (document.body.getAttribute('data-status') !== 'error') document.body.setAttribute('data-status', 'ok');
})();
