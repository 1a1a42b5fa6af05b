// retval ui: the page. Plain JavaScript, no framework, no build step.
// Every byte of the store reaches the page as a JSON string and is shown
// with textContent: nothing here parses data as HTML.
'use strict';
(function () {
  const main = document.getElementById('main');
  const live = document.getElementById('live');
  let generation = 0; // the view shown; answers for an older one are dropped

  // el builds an element: attrs sets properties (text, class, on*, data,
  // aria and other attributes); children are elements or text.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') e.textContent = String(v);
      else if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  async function api(path) {
    const r = await fetch(path, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
    let body = null;
    try { body = await r.json(); } catch (_) { /* not JSON */ }
    if (!r.ok) {
      const msg = body && body.error ? body.error.message + ' (' + body.error.code + ')' : r.status + ' ' + r.statusText;
      throw new Error(msg);
    }
    return body;
  }

  function announce(text) { live.textContent = ''; live.textContent = text; }

  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  function fmtBytes(n) {
    const neg = n < 0;
    let v = Math.abs(n), u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    const s = u === 0 ? String(v) : v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0) + ' ' + units[u];
    return (neg ? '−' : '') + (u === 0 ? s + ' B' : s);
  }
  const fmtInt = (n) => Number(n).toLocaleString('en-US');
  function fmtAge(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    if (d > 0) return d + 'd' + (h ? ' ' + h + 'h' : '');
    if (h > 0) return h + 'h' + (m ? ' ' + m + 'm' : '');
    if (m > 0) return m + 'm';
    return s + 's';
  }
  function fmtTime(iso) {
    const t = new Date(iso);
    if (isNaN(t) || t.getTime() <= 0) return '—';
    return t.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }
  const enc = encodeURIComponent;

  function setNav(which) {
    for (const [id, name] of [['nav-runs', 'runs'], ['nav-savings', 'savings']]) {
      const a = document.getElementById(id);
      if (name === which) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
  }

  function show(title, ...nodes) {
    document.title = title + ' · retval ui';
    main.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined && n !== false));
  }

  function fail(gen, err) {
    if (gen !== generation) return;
    show('Error', el('p', { class: 'error', role: 'alert', text: String(err.message || err) }));
  }

  // The routes: #/ (runs), #/run/R, #/run/R/value/ID, #/savings; a
  // query after "?" holds a view's state.
  function route() {
    const hash = location.hash || '#/';
    if (!hash.startsWith('#/')) return;
    const [path, query] = hash.slice(1).split('?');
    const params = new URLSearchParams(query || '');
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const gen = ++generation;
    if (parts.length === 0) return runsView(gen, params).catch((e) => fail(gen, e));
    if (parts[0] === 'savings') return savingsView(gen, params).catch((e) => fail(gen, e));
    if (parts[0] === 'run' && parts.length === 2) return runView(gen, parts[1], params).catch((e) => fail(gen, e));
    if (parts[0] === 'run' && parts.length === 4 && parts[2] === 'value') return valueView(gen, parts[1], parts[3], params).catch((e) => fail(gen, e));
    fail(gen, new Error('no such page: ' + hash));
  }

  function go(path, params) {
    const q = params && params.toString();
    location.hash = path + (q ? '?' + q : '');
  }

  // ---- Runs ----------------------------------------------------------

  const runColumns = [
    ['run', 'Run', false],
    ['activity', 'Last activity', false],
    ['values', 'Values', true],
    ['bytes', 'Kept on disk', true],
    ['retained', 'Retained', true],
    ['shown', 'Shown to the model', true],
    ['lookups', 'Lookups', true],
    ['status', 'gc', false],
  ];

  async function runsView(gen, params) {
    setNav('runs');
    const sort = params.get('sort') || 'activity';
    const desc = params.has('desc') ? params.get('desc') === '1' : sort !== 'run';
    const q = params.get('q') || '';
    const offset = Number(params.get('offset') || 0);
    const limit = 50;
    const state = { sort, desc, q, offset };
    const url = (extra) => '/api/runs?' + new URLSearchParams({ sort, desc: desc ? '1' : '0', q, offset, limit, ...extra });

    const filter = el('input', { type: 'search', id: 'runs-filter', value: q, placeholder: 'run id or status', 'aria-controls': 'runs' });
    let timer = 0;
    filter.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => go('/', params_({ ...state, q: filter.value, offset: 0 })), 250);
    });
    const refresh = el('button', { type: 'button', id: 'runs-refresh', text: 'Rescan', onclick: () => load({ refresh: '1' }) });
    const status = el('p', { class: 'note', id: 'runs-status', role: 'status' });
    const table = el('table', { id: 'runs' });
    const pager = el('nav', { class: 'pager', 'aria-label': 'Pages of runs' });
    show('Runs', el('h1', { text: 'Runs' }),
      el('div', { class: 'toolbar', role: 'search' }, el('label', { for: 'runs-filter' }, 'Filter', filter), refresh),
      status, el('div', { class: 'table-wrap' }, table), pager);
    if (q) { filter.focus(); filter.setSelectionRange(q.length, q.length); }

    async function load(extra) {
      const page = await api(url(extra));
      if (gen !== generation) return;
      render(page);
      if (page.scanning) {
        // The store is being scanned: this page is in run-id order; the
        // one asked for follows when the scan ends.
        const done = await api(url({ wait: '1' }));
        if (gen !== generation) return;
        render(done);
        announce('Runs sorted by ' + sort);
      }
    }

    function render(page) {
      const sortKey = page.sort;
      const head = el('tr', {}, runColumns.map(([key, label, num]) => {
        const th = el('th', { scope: 'col', class: num ? 'num' : '' });
        if (key === sortKey) th.setAttribute('aria-sort', page.desc ? 'descending' : 'ascending');
        th.append(el('button', {
          type: 'button', dataset: { sort: key }, text: label,
          onclick: () => go('/', params_({ ...state, sort: key, desc: key === sortKey ? !page.desc : key !== 'run', offset: 0 })),
        }));
        return th;
      }));
      const now = Date.now();
      const rows = page.rows.map((r) => el('tr', { dataset: { run: r.run } },
        el('td', { class: 'run' }, el('a', { href: '#/run/' + enc(r.run), text: r.run })),
        el('td', {}, r.last_activity && new Date(r.last_activity).getTime() > 0 ? fmtAge(now - new Date(r.last_activity)) + ' ago' : '—',
          el('span', { class: 'why', text: fmtTime(r.last_activity) })),
        el('td', { class: 'num', text: fmtInt(r.values) }),
        el('td', { class: 'num', text: fmtBytes(r.bytes) }),
        el('td', { class: 'num', text: fmtBytes(r.retained_bytes) }),
        el('td', { class: 'num', text: fmtBytes(r.shown_bytes) }),
        el('td', { class: 'num', text: fmtInt(r.lookups) }),
        el('td', {}, r.status ? el('span', { class: 'badge ' + r.status, text: r.status === 'collect' ? 'collected soon' : r.status }) : el('span', { class: 'note', text: '…' }),
          r.why ? el('span', { class: 'why', text: r.why }) : null)));
      table.replaceChildren(
        el('caption', { class: 'visually-hidden', text: 'Runs of the store, ' + (page.desc ? 'descending' : 'ascending') + ' by ' + sortKey }),
        el('thead', {}, head), el('tbody', {}, rows));
      const from = page.total ? page.offset + 1 : 0, to = page.offset + page.rows.length;
      let text = `${fmtInt(from)}–${fmtInt(to)} of ${fmtInt(page.total)} runs · gc policy: ${page.policy}`;
      if (page.scanning) text += ' · scanning the store' + (page.of ? ` (${fmtInt(page.scanned)} of ${fmtInt(page.of)} runs)` : '') + '…' + (page.sort !== sort ? ' shown by run id until then' : '');
      else if (page.built) text += ' · scanned ' + fmtTime(page.built);
      if (page.problem) text += ' · ' + page.problem;
      status.textContent = text;
      table.dataset.sort = page.sort;
      table.dataset.desc = page.desc ? '1' : '0';
      table.dataset.scanning = page.scanning ? '1' : '0';
      pager.replaceChildren(
        el('button', { type: 'button', text: '← Previous', disabled: page.offset === 0, onclick: () => go('/', params_({ ...state, offset: Math.max(0, page.offset - limit) })) }),
        el('button', { type: 'button', text: 'Next →', disabled: to >= page.total, onclick: () => go('/', params_({ ...state, offset: page.offset + limit })) }));
    }
    await load({});
  }

  function params_(o) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(o)) {
      if (v === '' || v === undefined || v === null) continue;
      if (k === 'offset' && Number(v) === 0) continue;
      p.set(k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
    }
    return p;
  }

  // ---- Charts --------------------------------------------------------

  // lineChart draws series over time with uPlot, and the same numbers as
  // a table for those who do not see the chart.
  function lineChart(title, points, series) {
    const box = el('figure', { class: 'chart-box' });
    const chart = el('div', { class: 'chart', role: 'img', 'aria-label': title });
    box.append(el('figcaption', { class: 'legend-note', text: title }), chart);
    const xs = points.map((p) => new Date(p.time).getTime() / 1000);
    const data = [xs, ...series.map((s) => points.map(s.value))];
    if (xs.length > 0) {
      // The sums start from nothing, a little before the first record.
      const before = xs[0] - Math.max(1, (xs[xs.length - 1] - xs[0]) / 50);
      xs.unshift(before);
      for (const d of data.slice(1)) d.unshift(0);
    }
    const table = el('table', {}, el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Up to' }),
      series.map((s) => el('th', { scope: 'col', class: 'num', text: s.label })))),
      el('tbody', {}, points.map((p) => el('tr', {}, el('td', { text: fmtTime(p.time) }), series.map((s) => el('td', { class: 'num', text: fmtBytes(s.value(p)) }))))));
    box.append(el('details', { class: 'data' }, el('summary', { text: 'The chart as a table' }), el('div', { class: 'table-wrap' }, table)));
    if (points.length === 0) {
      chart.append(el('p', { class: 'note', text: 'Nothing recorded yet.' }));
      return box;
    }
    const draw = () => {
      if (typeof uPlot === 'undefined' || chart.isConnected === false) return;
      const width = Math.max(280, chart.clientWidth || 600);
      const u = new uPlot({
        width, height: 240,
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, value: (_, v) => v == null ? '—' : fmtBytes(v) }))],
        axes: [{}, { values: (_, ticks) => ticks.map(fmtBytes), size: 80 }],
        scales: { x: { time: true } },
      }, data, chart);
      new ResizeObserver(() => u.setSize({ width: Math.max(280, chart.clientWidth), height: 240 })).observe(chart);
    };
    requestAnimationFrame(draw);
    return box;
  }

  function figures(pairs) {
    return el('div', { class: 'figures' }, pairs.map(([k, v, id]) => el('div', { class: 'figure', dataset: id ? { figure: id } : {} },
      el('div', { class: 'k', text: k }), el('div', { class: 'v', text: v }))));
  }

  function ledgerFigures(l, tokens) {
    const ratio = l.stub_bytes + l.lookup_bytes + l.overhead_bytes > 0 ? (l.retained_bytes / (l.stub_bytes + l.lookup_bytes + l.overhead_bytes)).toFixed(1) + '×' : '—';
    const pairs = [
      ['Values retained', fmtInt(l.values), 'values'],
      ['Retained', fmtBytes(l.retained_bytes), 'retained_bytes'],
      ['Stubs shown', fmtBytes(l.stub_bytes), 'stub_bytes'],
      ['Lookups', fmtInt(l.lookups) + ' in ' + fmtInt(l.calls) + ' calls', 'lookups'],
      ['Read back', fmtBytes(l.lookup_bytes), 'lookup_bytes'],
      ['Call overhead', fmtBytes(l.overhead_bytes), 'overhead_bytes'],
      ['Kept out of context', fmtBytes(l.kept_out_bytes), 'kept_out_bytes'],
      ['Retained ÷ cost', ratio, 'ratio'],
      ['Passed through', fmtInt(l.verbatim) + ' (' + fmtBytes(l.verbatim_bytes) + ')', 'verbatim'],
      ['Composed by expand', fmtBytes(l.composed_bytes), 'composed_bytes'],
    ];
    if (tokens) pairs.push(['Tokens kept out (estimate, ' + tokens.method + ')', fmtInt(tokens.kept_out), 'tokens']);
    return figures(pairs);
  }

  const keptVsRead = [
    { label: 'Kept out of context', color: '#0b57d0', value: (p) => p.up_to.kept_out_bytes },
    { label: 'Read back', color: '#c99a00', value: (p) => p.up_to.lookup_bytes },
    { label: 'Stubs shown', color: '#5b636b', value: (p) => p.up_to.stub_bytes },
  ];

  // ---- A run ---------------------------------------------------------

  const opLabel = { stub: 'retained', verbatim: 'passed through', preview: 'not retained (capacity)', '': 'no record' };

  async function runView(gen, run, params) {
    setNav('runs');
    const offset = Number(params.get('offset') || 0);
    const limit = 50;
    const [sum, tl] = await Promise.all([api('/api/runs/' + enc(run)), api('/api/runs/' + enc(run) + '/timeline?offset=' + offset + '&limit=' + limit)]);
    if (gen !== generation) return;
    const facts = el('dl', { class: 'facts' },
      el('dt', { text: 'Values' }), el('dd', { text: fmtInt(sum.values) }),
      el('dt', { text: 'On disk' }), el('dd', { text: fmtBytes(sum.bytes) }),
      el('dt', { text: 'Last activity' }), el('dd', { text: fmtTime(sum.last_activity) + ' (' + fmtAge(new Date(sum.now) - new Date(sum.last_activity)) + ' ago)' }),
      el('dt', { text: 'gc' }), el('dd', {}, sum.status ? el('span', { class: 'badge ' + sum.status, text: sum.status === 'collect' ? 'collected soon' : sum.status }) : '…', sum.why ? ' ' + sum.why : ''));
    const list = el('ol', { class: 'timeline', id: 'timeline' }, tl.calls.map((c) => callItem(run, c)));
    const pager = el('nav', { class: 'pager', 'aria-label': 'Pages of calls' },
      el('span', { class: 'note', text: `calls ${fmtInt(tl.total ? tl.offset + 1 : 0)}–${fmtInt(tl.offset + tl.calls.length)} of ${fmtInt(tl.total)}` }),
      el('button', { type: 'button', text: '← Earlier', disabled: offset === 0, onclick: () => go('/run/' + enc(run), params_({ offset: Math.max(0, offset - limit) })) }),
      el('button', { type: 'button', text: 'Later →', disabled: offset + tl.calls.length >= tl.total, onclick: () => go('/run/' + enc(run), params_({ offset: offset + limit })) }));
    show('Run ' + run,
      el('div', { class: 'crumbs' }, el('a', { href: '#/', text: 'Runs' }), ' / run'),
      el('h1', { text: 'Run ' + run }), facts,
      el('h2', { text: 'What retention saved' }), ledgerFigures(sum.stats.total, sum.stats.tokens),
      lineChart('Bytes kept out of context and bytes read back, over the run', sum.series, keptVsRead),
      el('h2', { id: 'calls-h', text: 'Calls, and the reads that followed' }),
      tl.malformed ? el('p', { class: 'note', text: tl.malformed + ' lines of the read log are not records' }) : null,
      pager, list);
  }

  function callItem(run, c) {
    const head = el('div', { class: 'call-head' },
      el('span', { class: 't', text: fmtTime(c.time) }),
      el('span', { class: 'tool', text: c.tool || (c.value ? '(tool not recorded)' : 'listings') }),
      c.exists ? el('a', { class: 'id', href: '#/run/' + enc(run) + '/value/' + enc(c.value), text: '#' + c.value }) : (c.value ? el('span', { class: 'id', text: '#' + c.value }) : null),
      el('span', { class: 'badge ' + (c.op || 'none'), text: opLabel[c.op] || c.op }),
      c.size ? el('span', { text: fmtBytes(c.size) + (c.lines ? ', ' + fmtInt(c.lines) + ' lines' : '') }) : null,
      c.op ? el('span', { class: 't', text: 'the model was shown ' + fmtBytes(c.shown_bytes) + (c.shown > 1 ? ' (' + c.shown + ' times)' : '') }) : null,
      c.n_reads ? el('span', { class: 't', text: fmtInt(c.n_reads) + ' reads, ' + fmtBytes(c.read_bytes) + ' back' }) : null);
    const t0 = new Date(c.time).getTime();
    const reads = el('ul', { class: 'reads', 'aria-label': 'Reads of ' + (c.value || 'the run') }, c.reads.map((r) => el('li', { class: 'read', dataset: { via: r.via, sel: r.sel || '' } },
      el('span', { class: 't', text: '+' + fmtAge(new Date(r.time).getTime() - t0) }),
      el('span', { text: r.via }),
      el('span', { class: 'sel', text: r.sel || (r.op === 'compose' ? 'composed into a tool call' : r.op === 'refused' ? 'refused: budget' : '') }),
      el('span', { text: fmtBytes(r.bytes) }),
      r.step ? el('span', { class: 't', text: 'step ' + r.step }) : null,
      r.code ? el('span', { class: 'code', text: r.code }) : null)));
    if (c.more_reads) reads.append(el('li', { class: 'note', text: fmtInt(c.more_reads) + ' more reads not listed' }));
    return el('li', { class: 'call', dataset: { value: c.value, op: c.op || 'none' } }, head, c.reads.length ? reads : null);
  }

  // ---- A value -------------------------------------------------------

  async function valueView(gen, run, id, params) {
    setNav('runs');
    const base = '/api/runs/' + enc(run) + '/values/' + enc(id);
    const info = await api(base);
    if (gen !== generation) return;
    const d = info.descriptor;
    const facts = el('dl', { class: 'facts' },
      el('dt', { text: 'Tool' }), el('dd', { text: d.tool || '—' }),
      el('dt', { text: 'Size' }), el('dd', { text: fmtInt(d.size) + ' bytes (' + fmtBytes(d.size) + '), ' + fmtInt(d.lines) + ' lines' }),
      el('dt', { text: 'SHA-256' }), el('dd', { text: d.sha256 }),
      el('dt', { text: 'Complete' }), el('dd', { text: d.complete ? 'yes' : 'no (partial)' }),
      el('dt', { text: 'Created' }), el('dd', { text: fmtTime(d.created) }),
      el('dt', { text: 'Stored' }), el('dd', { text: d.compression + ', ' + fmtBytes(d.stored_bytes) }),
      el('dt', { text: 'Call id' }), el('dd', { text: d.call_id }));
    const stubNote = info.stub_shown_bytes && info.stub_shown_bytes !== new TextEncoder().encode(info.stub).length
      ? el('p', { class: 'note', text: `The read log says the model was shown a stub of ${fmtInt(info.stub_shown_bytes)} bytes: the settings it was rendered with differ from these.` }) : null;
    const stubPane = el('section', { 'aria-labelledby': 'stub-h' }, el('h2', { id: 'stub-h', text: 'What the model saw' }),
      el('pre', { class: 'stub', id: 'stub', tabindex: '0', text: info.stub }), stubNote);
    const viewer = new Viewer(base, d.lines, info.ranges);
    const contentPane = el('section', { 'aria-labelledby': 'content-h' }, el('h2', { id: 'content-h', text: 'The value' }),
      viewer.bar, viewer.box,
      el('p', {}, el('a', { href: base + '/raw', download: id + '.txt', text: 'Download the raw value' }), el('span', { class: 'note', text: ' (' + fmtBytes(d.size) + ')' })));
    const readsList = el('ul', { class: 'reads', id: 'value-reads' }, info.reads.map((r) => el('li', { dataset: { sel: r.sel || '', first: r.first, last: r.last } },
      el('span', { class: 't', text: fmtTime(r.time) }), el('span', { text: r.via }),
      el('span', { class: 'sel', text: r.sel || r.op }), el('span', { text: fmtBytes(r.bytes) }),
      r.code ? el('span', { class: 'code', text: r.code }) : null,
      r.first ? el('button', { type: 'button', text: r.first === r.last ? 'line ' + fmtInt(r.first) : 'lines ' + fmtInt(r.first) + '–' + fmtInt(r.last), onclick: () => viewer.goTo(r.first, true) }) : null)));
    if (info.more_reads) readsList.append(el('li', { class: 'note', text: fmtInt(info.more_reads) + ' more reads not listed' }));
    const n = info.ranges.length;
    const rangesText = n ? (n === 1 ? 'One range' : fmtInt(n) + ' ranges') + ' of lines were read back; they are highlighted in the value.' : 'No line of it was read back.';
    show('Value ' + id,
      el('div', { class: 'crumbs' }, el('a', { href: '#/', text: 'Runs' }), ' / ', el('a', { href: '#/run/' + enc(run), text: run }), ' / value'),
      el('h1', { text: 'Value #' + id }), facts,
      el('div', { class: 'panes' }, stubPane, contentPane),
      el('h2', { text: 'Reads back' }), el('p', { class: 'note', text: rangesText }), readsList,
      searchSection(base, viewer),
      d.json ? treeSection(base, info) : null);
    viewer.start();
    const line = Number(params.get('line') || 0);
    if (line > 0) viewer.goTo(line, true);
  }

  // Viewer shows a value's lines in a window that pages through the API:
  // only the lines in view are in the page, whatever the value's size.
  // Past a few million lines the scroll bar maps its range onto the lines
  // (a browser cannot make an element that tall).
  const LH = 20, MAXPX = 8000000, PAGE = 200;
  class Viewer {
    constructor(base, total, ranges) {
      this.base = base; this.total = total; this.ranges = ranges;
      this.pages = new Map(); this.loading = new Set(); this.target = 0; this.first = 1;
      this.box = el('div', { class: 'viewer', id: 'viewer', tabindex: '0', role: 'region',
        'aria-label': 'The value, ' + total + ' lines; arrow keys, Page Up, Page Down, Home and End scroll', dataset: { total } });
      this.spacer = el('div', { class: 'spacer' });
      this.rows = el('div', { class: 'rows', id: 'rows' });
      this.box.append(this.spacer, this.rows);
      this.exact = total * LH <= MAXPX;
      this.spacer.style.height = Math.max(1, Math.min(total * LH, MAXPX)) + 'px';
      this.box.addEventListener('scroll', () => this.render());
      this.box.addEventListener('keydown', (e) => this.key(e));
      const goto = el('input', { type: 'number', id: 'goto', min: '1', max: String(Math.max(1, total)), inputmode: 'numeric' });
      this.status = el('span', { class: 'note', id: 'viewer-pos', 'aria-live': 'polite' });
      this.bar = el('form', { class: 'viewer-bar', onsubmit: (e) => { e.preventDefault(); const n = Number(goto.value); if (n >= 1) this.goTo(n, true); } },
        el('label', { for: 'goto' }, 'Go to line ', goto), el('button', { type: 'submit', text: 'Go' }),
        el('button', { type: 'button', text: 'Next read', onclick: () => this.nextRead() }),
        this.status);
    }
    start() {
      // A short value takes the room its lines need.
      if (this.total * LH + 24 < this.box.clientHeight) this.box.style.height = (this.total * LH + 24) + 'px';
      new ResizeObserver(() => this.render()).observe(this.box);
      this.render();
    }
    visible() { return Math.max(1, Math.ceil(this.box.clientHeight / LH)); }
    firstLine() {
      const top = this.box.scrollTop;
      if (this.pin && this.pin[0] === top) return this.pin[1];
      if (this.exact) return Math.floor(top / LH) + 1;
      const range = Math.max(1, this.box.scrollHeight - this.box.clientHeight);
      return 1 + Math.round(Math.min(1, top / range) * Math.max(0, this.total - this.visible() + 1));
    }
    goTo(n, mark) {
      n = Math.max(1, Math.min(this.total, n));
      if (mark) this.target = n;
      if (this.exact) this.box.scrollTop = (n - 1) * LH;
      else {
        const range = Math.max(1, this.box.scrollHeight - this.box.clientHeight);
        this.box.scrollTop = Math.round((n - 1) / Math.max(1, this.total - this.visible() + 1) * range);
        // A pixel of the scroll bar spans several lines here: the line
        // asked for stays first until the view scrolls.
        this.pin = [this.box.scrollTop, n];
      }
      this.render();
      if (mark) this.box.focus({ preventScroll: true });
    }
    nextRead() {
      const after = this.firstLine();
      const r = this.ranges.find((r) => r[0] > after) || this.ranges[0];
      if (r) this.goTo(r[0], true);
    }
    key(e) {
      const f = this.firstLine(), vis = this.visible();
      const moves = { ArrowDown: f + 1, ArrowUp: f - 1, PageDown: f + vis - 1, PageUp: f - vis + 1, Home: 1, End: this.total };
      if (!(e.key in moves) || e.altKey || e.ctrlKey || e.metaKey) return;
      e.preventDefault();
      if (e.key === 'End') { this.box.scrollTop = this.box.scrollHeight; this.render(); return; }
      this.goTo(moves[e.key], false);
    }
    isRead(n) {
      let lo = 0, hi = this.ranges.length - 1;
      while (lo <= hi) {
        const m = (lo + hi) >> 1, r = this.ranges[m];
        if (n < r[0]) hi = m - 1; else if (n > r[1]) lo = m + 1; else return true;
      }
      return false;
    }
    line(n) {
      const p = this.pages.get(Math.floor((n - 1) / PAGE));
      return p ? p[(n - 1) % PAGE] : undefined;
    }
    fetch(p) {
      if (this.pages.has(p) || this.loading.has(p)) return;
      this.loading.add(p);
      api(this.base + '/lines?first=' + (p * PAGE + 1) + '&count=' + PAGE).then((page) => {
        this.loading.delete(p);
        this.pages.set(p, page.lines);
        if (this.pages.size > 50) this.pages.delete(this.pages.keys().next().value);
        this.render();
      }, (err) => { this.loading.delete(p); this.status.textContent = String(err.message || err); });
    }
    render() {
      if (this.total === 0) { this.rows.replaceChildren(el('div', { class: 'row note', text: 'The value is empty.' })); return; }
      const first = Math.min(this.firstLine(), this.total), last = Math.min(this.total, first + this.visible());
      this.first = first;
      this.rows.style.top = (this.exact ? (first - 1) * LH : this.box.scrollTop) + 'px';
      const rows = [];
      let missing = false;
      for (let n = first; n <= last; n++) {
        const l = this.line(n);
        if (!l) { missing = true; this.fetch(Math.floor((n - 1) / PAGE)); }
        const cls = 'row' + (this.isRead(n) ? ' read' : '') + (n === this.target ? ' target' : '');
        rows.push(el('div', { class: cls, dataset: { n } },
          el('span', { class: 'no', text: n }),
          el('span', { class: 'tx', text: l ? l.text : '…' }),
          l && l.cut ? el('span', { class: 'cut', text: ' … ' + fmtInt(l.cut) + ' more bytes (download, or peek --bytes)' }) : null,
          this.isRead(n) ? el('span', { class: 'visually-hidden', text: ' (read back)' }) : null));
      }
      this.rows.replaceChildren(...rows);
      this.rows.dataset.first = first;
      this.rows.dataset.last = last;
      this.rows.dataset.loading = missing ? '1' : '0';
      this.status.textContent = `lines ${fmtInt(first)}–${fmtInt(last)} of ${fmtInt(this.total)}`;
    }
  }

  function searchSection(base, viewer) {
    const input = el('input', { type: 'search', id: 'search-q', required: true });
    const regex = el('input', { type: 'checkbox', id: 'search-regex' });
    const icase = el('input', { type: 'checkbox', id: 'search-icase' });
    const out = el('p', { class: 'note', id: 'search-status', role: 'status' });
    const list = el('ul', { class: 'matches', id: 'matches' });
    const more = el('button', { type: 'button', text: 'More matches', hidden: true });
    let next = 0;
    async function run(after) {
      const q = new URLSearchParams({ q: input.value, after });
      if (regex.checked) q.set('regex', '1');
      if (icase.checked) q.set('icase', '1');
      out.textContent = 'Searching…';
      try {
        const page = await api(base + '/query?' + q);
        if (!after) list.replaceChildren();
        for (const m of page.matches) {
          list.append(el('li', {}, el('button', { type: 'button', text: m.n, 'aria-label': 'Go to line ' + m.n, onclick: () => viewer.goTo(m.n, true) }), ' ', m.text));
        }
        next = page.next;
        more.hidden = !next;
        out.textContent = `${fmtInt(page.total)} matching lines` + (page.total ? `; ${fmtInt(page.before + page.shown)} shown` : '');
      } catch (err) { out.textContent = String(err.message || err); }
    }
    more.addEventListener('click', () => run(next));
    const form = el('form', { class: 'toolbar', role: 'search', onsubmit: (e) => { e.preventDefault(); run(0); } },
      el('label', { for: 'search-q' }, 'Search the value (as peek --query)', input),
      el('label', { class: 'check', for: 'search-regex' }, regex, 'RE2 regex'),
      el('label', { class: 'check', for: 'search-icase' }, icase, 'ignore case'),
      el('button', { type: 'submit', text: 'Search' }));
    return el('section', { 'aria-labelledby': 'search-h' }, el('h2', { id: 'search-h', text: 'Search' }), form, out, list, more);
  }

  // ---- The JSON tree -------------------------------------------------

  function treeSection(base, info) {
    const copied = el('output', { class: 'copied', id: 'copied', hidden: true });
    const tree = el('ul', { class: 'tree', role: 'tree', id: 'tree', 'aria-label': 'JSON outline' });
    const sec = el('section', { 'aria-labelledby': 'tree-h' }, el('h2', { id: 'tree-h', text: 'JSON outline' }),
      el('p', { class: 'note', text: 'Each node shows its RFC 6901 pointer; its button copies the retval resolve command that prints it.' }),
      copied, tree);
    const root = { pointer: '', kind: 'object', name: '', pos: 0, command: '' };
    api(base + '/outline?pointer=').then((page) => {
      root.kind = page.kind; root.count = page.count; root.size = page.size; root.command = page.command;
      root.preview = page.preview;
      const item = treeItem(base, root, copied, 1, '(document)');
      tree.append(item);
      if (page.kind === 'object' || page.kind === 'array') expand(base, item, root, page, copied, 1);
    }, (err) => tree.append(el('li', { class: 'error', text: String(err.message || err) })));
    return sec;
  }

  function treeItem(base, n, copied, level, label, parentKind) {
    const container = n.kind === 'object' || n.kind === 'array';
    const li = el('li', { role: 'treeitem', 'aria-level': level, dataset: { pointer: n.pointer, kind: n.kind } });
    if (container) li.setAttribute('aria-expanded', 'false');
    const key = label !== undefined ? label : parentKind === 'object' ? JSON.stringify(n.name || '') : '[' + n.pos + ']';
    const meta = container ? (n.count === 1 ? '1 ' : fmtInt(n.count) + ' ') + (n.kind === 'object' ? 'member' : 'element') + (n.count === 1 ? '' : 's') + ', ' + fmtBytes(n.size) : fmtBytes(n.size);
    const row = el('div', { class: 'node' });
    if (container) {
      row.append(el('button', { type: 'button', class: 'toggle', 'aria-label': 'Open ' + (n.pointer || 'the document'), text: '▸',
        onclick: (e) => toggle(base, li, n, copied, level, e.currentTarget) }));
    } else row.append(el('span', { class: 'spacer-btn' }));
    row.append(el('span', { class: 'key', text: key + (n.name_cut ? '…' : '') }), el('span', { class: 'kind', text: n.kind }),
      el('span', { class: 'kind', text: meta }));
    if (!container && n.preview !== undefined) row.append(el('span', { class: 'preview', text: n.preview + (n.preview_cut ? '…' : '') }));
    row.append(el('code', { class: 'ptr', text: n.pointer === '' ? '""' : n.pointer }));
    if (n.dup) row.append(el('span', { class: 'code', text: 'duplicate name: no pointer selects it alone' }));
    if (n.command) {
      row.append(el('button', { type: 'button', class: 'copy', dataset: { command: n.command }, text: 'Copy resolve command',
        'aria-label': 'Copy the retval resolve command for ' + (n.pointer || 'the document'), onclick: () => copy(n.command, copied) }));
    }
    li.append(row);
    return li;
  }

  async function toggle(base, li, n, copied, level, btn) {
    if (li.getAttribute('aria-expanded') === 'true') {
      li.setAttribute('aria-expanded', 'false'); btn.textContent = '▸';
      const g = li.querySelector(':scope > ul'); if (g) g.hidden = true;
      return;
    }
    const g = li.querySelector(':scope > ul');
    if (g) { g.hidden = false; li.setAttribute('aria-expanded', 'true'); btn.textContent = '▾'; return; }
    const page = await api(base + '/outline?pointer=' + enc(n.pointer));
    expand(base, li, n, page, copied, level);
  }

  function expand(base, li, n, page, copied, level) {
    const group = el('ul', { role: 'group' });
    for (const c of page.head) group.append(treeItem(base, c, copied, level + 1, undefined, n.kind));
    const next = page.head.length ? page.head[page.head.length - 1].pos + 1 : 0;
    const to = page.tail.length ? page.tail[0].pos : page.count;
    const tail = page.tail.map((c) => treeItem(base, c, copied, level + 1, undefined, n.kind));
    if (to > next) group.append(moreItem(base, n, next, to, copied, level));
    group.append(...tail);
    li.append(group);
    li.setAttribute('aria-expanded', 'true');
    const btn = li.querySelector(':scope > .node > .toggle');
    if (btn) btn.textContent = '▾';
  }

  // moreItem is a button that lists the children from position from up
  // to (not including) to, a page at a time.
  function moreItem(base, n, from, to, copied, level) {
    const li = el('li', { role: 'none' });
    li.append(el('button', { type: 'button', text: 'Show ' + fmtInt(to - from) + ' more', onclick: async () => {
      const more = await api(base + '/outline?pointer=' + enc(n.pointer) + (from > 0 ? '&after=' + (from - 1) : ''));
      const items = more.head.filter((c) => c.pos < to);
      const next = items.length ? items[items.length - 1].pos + 1 : to;
      const nodes = items.map((c) => treeItem(base, c, copied, level + 1, undefined, n.kind));
      if (next < to) nodes.push(moreItem(base, n, next, to, copied, level));
      li.replaceWith(...nodes);
    } }));
    return li;
  }

  async function copy(text, out) {
    out.hidden = false;
    out.textContent = text;
    try {
      await navigator.clipboard.writeText(text);
      out.dataset.copied = '1';
      announce('Copied: ' + text);
    } catch (_) {
      out.dataset.copied = '0';
      announce('The clipboard is not available here: select the command shown and copy it.');
    }
  }

  // ---- Savings -------------------------------------------------------

  async function savingsView(gen, params) {
    setNav('savings');
    const since = params.get('since') || '';
    const s = await api('/api/stats' + (since ? '?since=' + enc(since) : ''));
    if (gen !== generation) return;
    const pick = el('select', { id: 'since', onchange: (e) => go('/savings', params_({ since: e.target.value })) },
      [['', 'all the logs'], ['1d', 'the last day'], ['7d', 'the last 7 days'], ['30d', 'the last 30 days']].map(([v, t]) => el('option', { value: v, text: t, selected: v === since })));
    const t = s.total;
    const costSeries = [
      { label: 'Kept out of context', color: '#0b57d0', value: (p) => p.up_to.kept_out_bytes },
      { label: 'Cost: stubs, lookups and call overhead', color: '#b3261e', value: (p) => p.up_to.stub_bytes + p.up_to.lookup_bytes + p.up_to.overhead_bytes },
    ];
    show('Savings', el('h1', { text: 'Savings' }),
      el('div', { class: 'toolbar' }, el('label', { for: 'since' }, 'Records of', pick)),
      el('p', { class: 'note', text: `${fmtInt(t.runs)} runs, ${fmtInt(t.records)} records; each call counted at ${fmtInt(t.call_overhead)} bytes of overhead. The same figures as retval stats --all --json. Token figures are estimates (bytes/4).` }),
      ledgerFigures(t.total, t.tokens),
      lineChart('Bytes kept out of context and what it cost, over time', s.series, costSeries),
      el('h2', { text: 'By tool' }), ledgerTable('by-tool', 'Tool', s.by_tool.rows, null),
      el('h2', { text: 'By run' }), s.run_rows > s.by_run.rows.length ? el('p', { class: 'note', text: `The ${s.by_run.rows.length} runs that kept most out, of ${fmtInt(s.run_rows)}.` }) : null,
      ledgerTable('by-run', 'Run', s.by_run.rows, (k) => '#/run/' + enc(k)));
  }

  function ledgerTable(id, what, rows, link) {
    const most = Math.max(1, ...rows.map((r) => Math.abs(r.kept_out_bytes)));
    return el('div', { class: 'table-wrap' }, el('table', { id },
      el('thead', {}, el('tr', {}, ['', 'Values', 'Retained', 'Stubs', 'Read back', 'Overhead', 'Kept out', ''].map((h, i) =>
        el('th', { scope: 'col', class: i > 0 && i < 7 ? 'num' : '', text: i === 0 ? what : i === 7 ? 'Share of the most kept out' : h })))),
      el('tbody', {}, rows.map((r) => el('tr', { dataset: { key: r.key } },
        el('td', { class: 'run' }, link ? el('a', { href: link(r.key), text: r.key }) : r.key),
        el('td', { class: 'num', text: fmtInt(r.values) }),
        el('td', { class: 'num', text: fmtBytes(r.retained_bytes) }),
        el('td', { class: 'num', text: fmtBytes(r.stub_bytes) }),
        el('td', { class: 'num', text: fmtBytes(r.lookup_bytes) }),
        el('td', { class: 'num', text: fmtBytes(r.overhead_bytes) }),
        el('td', { class: 'num', text: fmtBytes(r.kept_out_bytes) }),
        el('td', { 'aria-hidden': 'true' }, barOf(r.kept_out_bytes / most)))))));
  }

  function barOf(frac) {
    const b = el('div', { class: 'bar' + (frac < 0 ? ' neg' : '') });
    b.style.width = Math.round(Math.abs(frac) * 100) + '%';
    return b;
  }

  document.getElementById('skip').addEventListener('click', () => main.focus());
  window.addEventListener('hashchange', route);
  route();
})();
