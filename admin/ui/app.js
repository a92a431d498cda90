// Herald admin UI: plain JavaScript, no framework, no build step. Every
// request goes to the admin JSON API next to this page (relative URLs, so
// the UI works under any path); state-changing ones carry the login's
// CSRF token in X-Herald-CSRF.
'use strict';

const POLL_MS = 2000;
const KEEP_SAMPLES = 150; // 5 minutes at POLL_MS
const HISTORY_PAGE = 20;

const state = { csrf: '', page: '', samples: [], prevTotals: null, poll: null, tail: null, channel: '', historyOffset: null, historyEpoch: '', connCursor: '' };

const $ = (sel) => document.querySelector(sel);
const el = (tag, props = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
};

// --- admin API --------------------------------------------------------

class Unauthorized extends Error {}

async function request(method, path, body) {
  const opts = { method, headers: {}, credentials: 'same-origin' };
  if (method !== 'GET') {
    opts.headers['X-Herald-CSRF'] = state.csrf;
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body ?? {});
  }
  const res = await fetch(path, opts);
  // A refused login answers 401 itself; any other 401 (the startup check
  // included) means the page must log in first.
  if (res.status === 401 && !(method === 'POST' && path === 'api/login')) {
    showLogin();
    throw new Unauthorized('log in first');
  }
  const text = await res.text();
  let data;
  try { data = JSON.parse(text); } catch { data = { error: text || res.statusText }; }
  if (!res.ok && data && !data.error) data = { error: `${res.status} ${res.statusText}` };
  return { status: res.status, data, text };
}

// call runs a server API method and returns its result, or throws its error.
async function call(method, params) {
  const { data } = await request('POST', `api/call/${method}`, params);
  if (data.error) throw new Error(typeof data.error === 'string' ? data.error : `${data.error.code}: ${data.error.message}`);
  return data.result;
}

// --- navigation -------------------------------------------------------

const PAGES = ['overview', 'channels', 'connections', 'trace', 'actions', 'charts'];

function show(page) {
  state.page = page;
  for (const s of document.querySelectorAll('.page')) s.hidden = s.id !== `page-${page}`;
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.page === page);
  if (page === 'channels') searchChannels();
  if (page === 'charts') drawCharts();
  if (page === 'trace') $('#trace-node').textContent = printable(state.node || '');
}

function route() {
  const page = location.hash.slice(1) || 'overview';
  show(PAGES.includes(page) ? page : 'overview');
}

function showLogin() {
  stopPolling();
  stopTail();
  stopTrace();
  $('#nav').hidden = true;
  for (const s of document.querySelectorAll('.page')) s.hidden = s.id !== 'page-login';
  $('#password').focus();
}

function startApp(login) {
  state.csrf = login.csrf;
  state.node = login.node;
  $('#insecure').hidden = !login.insecure;
  $('#logout').hidden = !!login.insecure;
  $('#nav').hidden = false;
  route();
  startPolling();
}

// --- login ------------------------------------------------------------

$('#login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const password = $('#password').value;
  const token = $('#admin-token').value.trim();
  const { status, data } = await request('POST', 'api/login', token && !password ? { token } : { password });
  if (status !== 200) {
    $('#login-error').textContent = data.error || `login failed (${status})`;
    return;
  }
  $('#login-error').textContent = '';
  $('#password').value = '';
  $('#admin-token').value = '';
  startApp(data);
});

$('#logout').addEventListener('click', async () => {
  await request('POST', 'api/logout');
  state.csrf = '';
  showLogin();
});

// --- overview and sampling --------------------------------------------

function fmtUptime(s) {
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${s % 60}s`;
}
const fmtMiB = (b) => `${(b / 1048576).toFixed(1)} MiB`;
const fmtRate = (r) => (r == null ? '–' : r.toFixed(1));

function startPolling() {
  stopPolling();
  const tick = async () => {
    try {
      const { data } = await request('GET', 'api/overview');
      sample(data);
      renderOverview(data);
      if (state.page === 'charts') drawCharts();
    } catch (err) {
      if (err instanceof Unauthorized) return;
    }
    state.poll = setTimeout(tick, POLL_MS);
  };
  tick();
}

function stopPolling() {
  clearTimeout(state.poll);
  state.poll = null;
}

// sample keeps the cluster totals, with publications/s from the
// difference of each node's publication counter between two samples.
// Another node's counter only moves with its heartbeat (every 3 s): while
// it has not moved for less than 4 s, its last rate stands.
function sample(o) {
  const prev = state.prevNodes || {};
  const next = {};
  const rates = {};
  for (const n of o.nodes) {
    const p = prev[n.id];
    if (!p) {
      next[n.id] = { publications: n.publications, time: o.time, rate: null };
    } else if (!n.self && n.publications === p.publications && o.time - p.time < 4000) {
      next[n.id] = p;
    } else {
      const dt = o.time - p.time;
      const rate = dt > 0 && n.publications >= p.publications ? ((n.publications - p.publications) * 1000) / dt : p.rate;
      next[n.id] = { publications: n.publications, time: o.time, rate };
    }
    rates[n.id] = next[n.id].rate;
  }
  state.prevNodes = next;
  state.rates = rates;
  const t = o.totals;
  const pubs = Object.values(rates).reduce((a, b) => a + (b || 0), 0);
  state.samples.push({ time: o.time, clients: t.clients, subscriptions: t.subscriptions, channels: t.channels, cpu: t.cpu, memory: t.memory / 1048576, pubs });
  if (state.samples.length > KEEP_SAMPLES) state.samples.shift();
}

function renderOverview(o) {
  // Node names for the connections table.
  state.lastNodes = Object.fromEntries(o.nodes.map((n) => [n.id, n.name]));
  const t = o.totals;
  const rate = Object.values(state.rates || {}).reduce((a, b) => a + (b || 0), 0);
  const cards = [
    ['nodes', o.nodes.length], ['clients', t.clients], ['users', t.users], ['channels', t.channels],
    ['subscriptions', t.subscriptions], ['publications/s', rate.toFixed(1)], ['CPU', `${t.cpu.toFixed(1)}%`], ['memory', fmtMiB(t.memory)],
  ];
  $('#totals').replaceChildren(...cards.map(([k, v]) => el('div', { class: 'card', 'data-total': k }, el('b', {}, v), el('span', {}, k))));
  $('#nodes tbody').replaceChildren(...o.nodes.map((n) => el('tr', { 'data-node': n.id },
    el('td', { class: 'name' }, n.name, ...(n.self ? [el('span', { class: 'self', title: 'serves this page' }, 'this')] : [])),
    el('td', {}, n.version), el('td', {}, fmtUptime(n.uptime)),
    el('td', { class: 'num clients' }, n.clients), el('td', { class: 'num' }, n.users), el('td', { class: 'num' }, n.channels),
    el('td', { class: 'num' }, n.subscriptions), el('td', { class: 'num' }, fmtRate(state.rates?.[n.id])),
    el('td', { class: 'num' }, `${n.cpu.toFixed(1)}%`), el('td', { class: 'num' }, fmtMiB(n.memory)),
  )));
}

// --- charts -----------------------------------------------------------

const CHARTS = [['clients', 'clients'], ['subscriptions', 'subscriptions'], ['pubs', 'pubs'], ['cpu', 'cpu'], ['memory', 'memory'], ['channels', 'channels']];

function drawCharts() {
  for (const [id, key] of CHARTS) drawChart($(`#chart-${id}`), state.samples.map((s) => [s.time, s[key]]));
}

// drawChart draws a line of [time, value] points over the last 5 minutes,
// with a zero-based y axis and its maximum labelled.
function drawChart(canvas, points) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || canvas.width, h = canvas.clientHeight || canvas.height;
  canvas.width = w * dpr;
  canvas.height = h * dpr;
  const g = canvas.getContext('2d');
  g.scale(dpr, dpr);
  g.clearRect(0, 0, w, h);
  const left = 44, bottom = h - 18, top = 8, right = w - 8;
  const now = points.length ? points[points.length - 1][0] : Date.now();
  // The last 5 minutes, or less while fewer samples are in.
  const from = Math.max(now - KEEP_SAMPLES * POLL_MS, points.length ? Math.min(points[0][0], now - 60_000) : now - 60_000);
  const max = Math.max(1, ...points.map((p) => p[1])) * 1.1;
  g.strokeStyle = '#d9dee7';
  g.fillStyle = '#667085';
  g.font = '11px system-ui, sans-serif';
  g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = bottom - ((bottom - top) * i) / 4;
    g.beginPath(); g.moveTo(left, y); g.lineTo(right, y); g.stroke();
    const v = (max * i) / 4;
    g.fillText(v >= 100 ? v.toFixed(0) : v.toFixed(1), 4, y + 4);
  }
  g.fillText(`-${Math.round((now - from) / 60_000)} min`, left, h - 4);
  g.fillText('now', right - 22, h - 4);
  if (!points.length) return;
  const x = (t) => left + ((t - from) / (now - from || 1)) * (right - left);
  const y = (v) => bottom - (v / max) * (bottom - top);
  g.strokeStyle = '#2f6fde';
  g.lineWidth = 2;
  g.beginPath();
  points.forEach(([t, v], i) => (i ? g.lineTo(x(t), y(v)) : g.moveTo(x(t), y(v))));
  g.stroke();
  const [, last] = points[points.length - 1];
  g.fillStyle = '#1d2330';
  g.fillText(last >= 100 ? last.toFixed(0) : last.toFixed(1), right - 40, top + 10);
}

// --- channels ---------------------------------------------------------

function partialNote(sel, res) {
  $(sel).hidden = !res.partial;
  $(sel).textContent = res.partial ? `Partial answer: no reply in time from ${res.missing_nodes.join(', ')}` : '';
}

async function searchChannels() {
  try {
    const res = await call('channels', { pattern: $('#channel-search').value.trim() });
    partialNote('#channels-partial', res);
    const rows = Object.entries(res.channels || {}).sort(([a], [b]) => a.localeCompare(b));
    $('#channels tbody').replaceChildren(...rows.map(([name, info]) => el('tr', { 'data-channel': name },
      el('td', {}, el('code', {}, name)), el('td', { class: 'num' }, info.num_clients),
      el('td', {}, el('button', { class: 'small open', type: 'button', onclick: () => openChannel(name) }, 'Open')),
    )));
  } catch (err) {
    if (!(err instanceof Unauthorized)) $('#channels-partial').hidden = false, $('#channels-partial').textContent = err.message;
  }
}

$('#channels-form').addEventListener('submit', (ev) => { ev.preventDefault(); searchChannels(); });

async function openChannel(name) {
  stopTail();
  state.channel = name;
  $('#channel').hidden = false;
  $('#channel-name').textContent = name;
  $('#tail').replaceChildren();
  $('#tail-status').textContent = '';
  await loadPresence();
  state.historyOffset = null;
  $('#history tbody').replaceChildren();
  await loadHistory();
}

async function loadPresence() {
  try {
    const res = await call('presence', { channel: state.channel });
    const entries = Object.values(res.presence || {});
    $('#presence').replaceChildren(...(entries.length
      ? entries.map((c) => el('li', {}, el('b', {}, c.user || (c.conn_info?.admin ? '(admin tail)' : '(anonymous)')), ' ', el('code', {}, c.client)))
      : [el('li', { class: 'hint' }, 'nobody (or presence is off for this channel)')]));
  } catch (err) {
    $('#presence').replaceChildren(el('li', { class: 'hint' }, err.message));
  }
}

$('#presence-refresh').addEventListener('click', loadPresence);

// loadHistory shows a page of the channel's history, newest first, then
// older pages from the last offset shown.
async function loadHistory() {
  const params = { channel: state.channel, limit: HISTORY_PAGE, reverse: true };
  if (state.historyOffset != null) params.since = { offset: state.historyOffset, epoch: state.historyEpoch };
  try {
    const res = await call('history', params);
    const pubs = res.publications || [];
    state.historyEpoch = res.epoch;
    $('#history tbody').append(...pubs.map((p) => el('tr', {},
      el('td', { class: 'num' }, p.offset ?? ''), el('td', {}, el('code', {}, JSON.stringify(p.data))), el('td', {}, p.info ? `${p.info.user} ${p.info.client}` : ''),
    )));
    const last = pubs[pubs.length - 1];
    state.historyOffset = last ? last.offset : null;
    $('#history-more').hidden = !(last && pubs.length === HISTORY_PAGE && last.offset > 1);
    $('#history-note').textContent = `${$('#history tbody').children.length} shown; stream top offset ${res.offset ?? 0}, epoch ${res.epoch || '–'}`;
  } catch (err) {
    $('#history-more').hidden = true;
    $('#history-note').textContent = err.message;
  }
}

$('#history-more').addEventListener('click', loadHistory);

function startTail() {
  stopTail();
  const src = new EventSource(`api/tail?channel=${encodeURIComponent(state.channel)}`);
  state.tail = src;
  $('#tail-start').disabled = true;
  $('#tail-stop').disabled = false;
  $('#tail-status').textContent = 'connecting…';
  const line = (kind, text) => {
    const li = el('li', { class: kind }, `${new Date().toLocaleTimeString()} ${kind} ${text}`);
    $('#tail').prepend(li);
    while ($('#tail').children.length > 200) $('#tail').lastChild.remove();
  };
  src.addEventListener('ready', () => { $('#tail-status').textContent = 'live'; });
  src.addEventListener('pub', (ev) => {
    const p = JSON.parse(ev.data);
    line('pub', `${p.offset ? `#${p.offset} ` : ''}${JSON.stringify(p.data)}`);
  });
  src.addEventListener('join', (ev) => line('join', JSON.parse(ev.data).info?.user ?? ''));
  src.addEventListener('leave', (ev) => line('leave', JSON.parse(ev.data).info?.user ?? ''));
  src.addEventListener('dropped', (ev) => { $('#tail-status').textContent = `live (${ev.data} dropped: too fast to show)`; });
  src.addEventListener('error', (ev) => {
    if (ev.data) line('error', ev.data);
    if (src.readyState === EventSource.CLOSED) stopTail();
    else $('#tail-status').textContent = 'reconnecting…';
  });
  src.addEventListener('end', (ev) => { line('end', ev.data); stopTail(); });
}

function stopTail() {
  if (state.tail) state.tail.close();
  state.tail = null;
  $('#tail-start').disabled = false;
  $('#tail-stop').disabled = true;
  if ($('#tail-status').textContent === 'live') $('#tail-status').textContent = 'stopped';
}

$('#tail-start').addEventListener('click', startTail);
$('#tail-stop').addEventListener('click', stopTail);

// --- trace and inspector ------------------------------------------------

// printable shows control characters of a user's or a channel's name as
// escapes: the name is text (never HTML), and a NUL or a line break in it
// must be seen, not swallowed.
const printable = (s) => String(s).replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

function startTrace(ev) {
  ev?.preventDefault();
  stopTrace();
  const type = $('#trace-type').value;
  const entity = $('#trace-entity').value;
  if (!entity) return;
  $('#trace-log').replaceChildren();
  const src = new EventSource(`api/trace?type=${encodeURIComponent(type)}&entity=${encodeURIComponent(entity)}`);
  state.trace = src;
  $('#trace-start').disabled = true;
  $('#trace-stop').disabled = false;
  $('#trace-status').textContent = 'connecting…';
  const line = (kind, ...parts) => {
    const li = el('li', { class: kind }, `${new Date().toLocaleTimeString()} `, el('b', {}, kind), ...parts);
    $('#trace-log').prepend(li);
    while ($('#trace-log').children.length > 500) $('#trace-log').lastChild.remove();
  };
  src.addEventListener('ready', (e) => { $('#trace-status').textContent = `live: ${type} ${printable(entity)} on ${printable(JSON.parse(e.data).node)}`; });
  src.addEventListener('trace', (e) => {
    const t = JSON.parse(e.data);
    const parts = [];
    if (t.user) parts.push(' user ', el('code', { class: 'user' }, printable(t.user)));
    if (t.channel) parts.push(' channel ', el('code', { class: 'channel' }, printable(t.channel)));
    if (t.client) parts.push(' client ', el('code', {}, t.client));
    if (t.node) parts.push(' on ', nodeName(t.node));
    if (t.transport) parts.push(` ${t.transport}`);
    if (t.offset) parts.push(` #${t.offset}`);
    if (t.data !== undefined) parts.push(' ', el('code', { class: 'data' }, JSON.stringify(t.data)));
    if (t.data_b64) parts.push(' ', el('code', { class: 'data' }, `base64 ${t.data_b64}`));
    if (t.code) parts.push(` code ${t.code} ${t.reason || ''}`);
    line(t.type, ...parts);
  });
  src.addEventListener('dropped', (e) => { $('#trace-status').textContent = `live (${e.data} events dropped: too fast to show)`; });
  src.addEventListener('end', (e) => { line('end', ` ${JSON.parse(e.data).reason}`); stopTrace(); });
  src.addEventListener('error', () => {
    // EventSource reconnects by itself; a refused trace (429: too many
    // open) closes it.
    if (src.readyState === EventSource.CLOSED) { $('#trace-status').textContent = 'refused or ended (too many traces open?)'; stopTrace(); }
    else $('#trace-status').textContent = 'reconnecting…';
  });
}

function stopTrace() {
  if (state.trace) state.trace.close();
  state.trace = null;
  $('#trace-start').disabled = false;
  $('#trace-stop').disabled = true;
  if ($('#trace-status').textContent.startsWith('live')) $('#trace-status').textContent = 'stopped';
}

$('#trace-form').addEventListener('submit', startTrace);
$('#trace-stop').addEventListener('click', stopTrace);

// fact is a card of the inspector: a value, or the error that stood for
// it (presence off, no map, ...).
const fact = (name, value) => el('div', { class: 'card', 'data-fact': name }, el('b', {}, value), el('span', {}, name));

async function settle(p) {
  try { return { ok: await p }; } catch (err) { return { err: err.message }; }
}

async function inspect() {
  const type = $('#trace-type').value;
  const entity = $('#trace-entity').value;
  if (!entity) return;
  state.inspect = { type, entity };
  $('#inspect').hidden = false;
  $('#inspect-kind').textContent = type;
  $('#inspect-name').textContent = printable(entity);
  const facts = [];
  let conns;
  if (type === 'channel') {
    const [c, presence, history, map] = await Promise.all([
      settle(call('connections', { channel: entity, limit: 100 })),
      settle(call('presence_stats', { channel: entity })),
      settle(call('history', { channel: entity, limit: 0 })),
      settle(call('map_stats', { channel: entity })),
    ]);
    conns = c;
    facts.push(fact('subscribers', c.ok ? (c.ok.connections || []).length : '–'));
    facts.push(fact('presence clients / users', presence.ok ? `${presence.ok.num_clients} / ${presence.ok.num_users}` : `– (${presence.err})`));
    facts.push(fact('history position', history.ok ? `${history.ok.offset ?? 0} · ${history.ok.epoch || '–'}` : `– (${history.err})`));
    facts.push(fact('map keys', map.ok ? map.ok.num_keys : `– (${map.err})`));
    $('#inspect-conns-title').textContent = 'Subscribers';
  } else {
    const [c, status, access] = await Promise.all([
      settle(call('connections', { user: entity, limit: 100 })),
      settle(call('get_user_status', { users: [entity] })),
      settle(request('GET', `api/inspect/user?user=${encodeURIComponent(entity)}`).then(({ data }) => {
        if (data.error) throw new Error(data.error);
        return data.access;
      })),
    ]);
    conns = c;
    const subs = new Set((c.ok?.connections || []).flatMap((x) => x.channels || []));
    facts.push(fact('connections', c.ok ? (c.ok.connections || []).length : '–'));
    facts.push(fact('subscriptions', subs.size));
    const st = status.ok?.statuses?.[0];
    facts.push(fact('status', status.ok ? (st?.active ? `${st.state || 'active'} · ${new Date(st.active * 1000).toLocaleString()}` : 'none') : `– (${status.err})`));
    const a = access.ok;
    facts.push(fact('blocked', a ? (a.blocked ? (a.blocked_until ? `until ${new Date(a.blocked_until * 1000).toLocaleString()}` : 'for ever') : 'no') : `– (${access.err})`));
    facts.push(fact('tokens invalid before', a?.tokens_issued_before ? new Date(a.tokens_issued_before * 1000).toLocaleString() : 'none'));
    $('#inspect-conns-title').textContent = 'Connections';
  }
  $('#inspect-facts').replaceChildren(...facts);
  $('#inspect-note').textContent = conns.err || (conns.ok.partial ? `Partial answer: no reply in time from ${conns.ok.missing_nodes.join(', ')}` : '');
  $('#inspect-conns tbody').replaceChildren(...(conns.ok?.connections || []).map((c) => el('tr', { 'data-client': c.client },
    el('td', {}, el('code', {}, c.client)), el('td', { class: 'user' }, printable(c.user || '(anonymous)')),
    el('td', {}, nodeName(c.node)), el('td', {}, `${c.transport} ${c.protocol}`),
    el('td', {}, ...(c.channels || []).map((ch) => el('span', { class: 'chip' }, printable(ch)))),
  )));
}

$('#trace-inspect').addEventListener('click', inspect);
$('#inspect-refresh').addEventListener('click', inspect);

// --- connections ------------------------------------------------------

async function searchConnections(more) {
  const params = { user: $('#conn-user').value.trim(), channel: $('#conn-channel').value.trim(), limit: 100 };
  if (more) params.cursor = state.connCursor;
  try {
    const res = await call('connections', params);
    partialNote('#connections-partial', res);
    state.connCursor = res.next_cursor || '';
    $('#connections-more').hidden = !state.connCursor;
    const rows = (res.connections || []).map((c) => el('tr', { 'data-client': c.client, 'data-user': c.user },
      el('td', {}, el('code', {}, c.client)), el('td', { class: 'user' }, c.user || '(anonymous)'),
      el('td', {}, nodeName(c.node)), el('td', {}, `${c.transport} ${c.protocol}`),
      el('td', {}, new Date(c.connected_at).toLocaleTimeString()),
      el('td', {}, ...(c.channels || []).map((ch) => el('span', { class: 'chip', 'data-channel': ch }, ch,
        el('button', { type: 'button', class: 'unsubscribe', title: `unsubscribe from ${ch}`, onclick: () => act('unsubscribe', { user: c.user, channel: ch, client: c.client }) }, '×')))),
      el('td', {}, el('button', { type: 'button', class: 'small danger disconnect', onclick: () => act('disconnect', { user: c.user, client: c.client }) }, 'Disconnect')),
    ));
    if (more) $('#connections tbody').append(...rows);
    else $('#connections tbody').replaceChildren(...rows);
  } catch (err) {
    if (!(err instanceof Unauthorized)) $('#connections-partial').hidden = false, $('#connections-partial').textContent = err.message;
  }
}

function nodeName(id) {
  const n = state.lastNodes?.[id];
  return n ? n : id.slice(0, 8);
}

async function act(method, params) {
  try {
    await call(method, params);
  } catch (err) {
    $('#connections-partial').hidden = false;
    $('#connections-partial').textContent = `${method}: ${err.message}`;
    return;
  }
  // The other nodes act on control messages: give them a moment.
  setTimeout(() => searchConnections(false), 300);
}

$('#connections-form').addEventListener('submit', (ev) => { ev.preventDefault(); searchConnections(false); });
$('#connections-more').addEventListener('click', () => searchConnections(true));

// --- actions ----------------------------------------------------------

const TEMPLATES = {
  publish: { channel: 'news', data: { text: 'hello' } },
  broadcast: { channels: ['news', 'alerts'], data: { text: 'hello' } },
  subscribe: { user: 'alice', channel: 'news' },
  unsubscribe: { user: 'alice', channel: 'news' },
  disconnect: { user: 'alice' },
  refresh: { user: 'alice', expired: false },
  presence: { channel: 'news' },
  presence_stats: { channel: 'news' },
  history: { channel: 'news', limit: 10, reverse: true },
  history_remove: { channel: 'news' },
  channels: { pattern: '' },
  connections: { user: '', channel: '', limit: 100 },
  info: {},
  rpc: { method: 'ping', params: {} },
  batch: { commands: [{ publish: { channel: 'news', data: { text: 'one' } } }, { info: {} }] },
};

function showAnswer(text) {
  let shown = text;
  try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch { /* not JSON: as is */ }
  $('#answer').textContent = shown;
}

async function rawCall(method, params) {
  const { text } = await request('POST', `api/call/${method}`, params);
  showAnswer(text);
}

function parseJSON(sel) {
  try {
    return JSON.parse($(sel).value);
  } catch (err) {
    showAnswer(`${sel}: not JSON: ${err.message}`);
    return undefined;
  }
}

$('#method').replaceChildren(...Object.keys(TEMPLATES).map((m) => el('option', { value: m }, m)));
$('#method').addEventListener('change', () => { $('#params').value = JSON.stringify(TEMPLATES[$('#method').value], null, 2); });
$('#params').value = JSON.stringify(TEMPLATES.publish, null, 2);

$('#publish-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const data = parseJSON('#pub-data');
  if (data !== undefined) rawCall('publish', { channel: $('#pub-channel').value.trim(), data });
});
$('#broadcast-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const data = parseJSON('#bc-data');
  const channels = $('#bc-channels').value.split(',').map((s) => s.trim()).filter(Boolean);
  if (data !== undefined) rawCall('broadcast', { channels, data });
});
$('#method-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const params = parseJSON('#params');
  if (params !== undefined) rawCall($('#method').value, params);
});

// --- start ------------------------------------------------------------

window.addEventListener('hashchange', () => { if (state.csrf) route(); });

(async () => {
  try {
    const { status, data } = await request('GET', 'api/login');
    if (status === 200) startApp(data);
  } catch {
    // showLogin already ran
  }
})();
