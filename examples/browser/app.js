// The reference server's browser page: a live demonstration of the
// conventions. It signs in with a browser session (a cookie and a CSRF
// token), then pages through users, selects fields, repeats a GET with
// If-None-Match (304), edits with If-Match (200, then 412 with a stale tag),
// shows the RateLimit state, lets an origin the API refuses try a call, and
// signs out (Clear-Site-Data). Every call is cross-origin, with credentials:
// the API's CORS policy allows this page's origin and exposes the headers
// read here.

const $ = (id) => document.getElementById(id);
const config = await (await fetch('/config.json')).json();
const api = config.apiUrl;

$('demo-username').textContent = config.demo.username;
$('demo-password').textContent = config.demo.password;
$('api-url').textContent = api;
document.querySelector('#sign-in [name=username]').value = config.demo.username;
document.querySelector('#sign-in [name=password]').value = config.demo.password;

// What a script may read of a cross-origin answer: the CORS-safelisted
// headers and the ones the API exposes (Access-Control-Expose-Headers).
const SHOWN = [
  'content-type',
  'cache-control',
  'etag',
  'last-modified',
  'location',
  'link',
  'ratelimit-policy',
  'ratelimit',
  'retry-after',
  'clear-site-data',
];

const state = { csrfToken: undefined, offset: 0, limit: 5, user: undefined, etag: undefined, staleEtag: undefined };

/** Writes the status line and the readable headers of an answer into `id`. */
function showAnswer(id, request, response, body) {
  const lines = [`${request}`, `→ ${response.status} ${response.statusText}`];
  for (const name of SHOWN) {
    const value = response.headers.get(name);
    if (value !== null) lines.push(`${name}: ${value}`);
  }
  if (body !== undefined) lines.push('', JSON.stringify(body, null, 2));
  $(id).textContent = lines.join('\n');
  const limitState = ['ratelimit-policy', 'ratelimit']
    .map((name) => [name, response.headers.get(name)])
    .filter(([, value]) => value !== null);
  if (limitState.length > 0) {
    $('answer-rate-limit').textContent = [`after ${request}`, ...limitState.map(([name, value]) => `${name}: ${value}`)].join(
      '\n',
    );
  }
}

/** One call to the API, with the session cookie; JSON in and out. */
async function call(method, path, { headers = {}, body } = {}) {
  const response = await fetch(`${api}${path}`, {
    method,
    credentials: 'include',
    cache: 'no-store',
    headers: { Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { response, body: text ? JSON.parse(text) : undefined };
}

const status = (text, isError = false) => {
  $('status').textContent = text;
  $('status').className = isError ? 'error' : '';
};

// 1. Sign in.
$('sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  try {
    status('Signing in…');
    const request = 'POST /v1/sessions';
    const { response, body } = await call('POST', '/v1/sessions', {
      body: { username: form.get('username'), password: form.get('password') },
    });
    showAnswer('answer-sign-in', request, response, body && { csrfToken: body.csrfToken && `${body.csrfToken.slice(0, 12)}…` });
    if (!response.ok) throw new Error(body?.errors?.[0]?.message ?? `the API answered ${response.status}`);
    state.csrfToken = body.csrfToken;
    for (const section of document.querySelectorAll('section[hidden]')) section.hidden = false;
    await listUsers();
    status(`Signed in as ${form.get('username')}.`);
  } catch (error) {
    status(`Failed: ${error.message}`, true);
  }
});

// 2. Paging and field selection.
const selectedFields = () => [...document.querySelectorAll('#fields input:checked')].map((input) => input.value);

async function listUsers() {
  // `id` always: the steps below address the first user by it (its id_str comes with it).
  const fields = ['id', ...selectedFields()];
  const query = new URLSearchParams({ offset: String(state.offset), limit: String(state.limit), fields: fields.join(',') });
  const path = `/v1/users?${query}`;
  const { response, body } = await call('GET', path);
  showAnswer('answer-users', `GET ${path}`, response, { hasNext: body?.hasNext, users: `${body?.users?.length} items` });
  if (!response.ok) return;
  // id_str, not id: a JavaScript number cannot hold a 64-bit id exactly (rule 2.9).
  const columns = ['id_str', ...fields.filter((field) => field !== 'id')];
  const head = $('users').tHead.rows[0];
  head.replaceChildren(...columns.map((column) => Object.assign(document.createElement('th'), { textContent: column })));
  $('users').tBodies[0].replaceChildren(
    ...body.users.map((user) => {
      const row = document.createElement('tr');
      for (const column of columns) row.append(Object.assign(document.createElement('td'), { textContent: user[column] ?? '' }));
      return row;
    }),
  );
  state.user = body.users[0];
  $('previous').disabled = state.offset === 0;
  $('next').disabled = !body.hasNext;
  $('page-info').textContent = `offset ${state.offset}, limit ${state.limit}, hasNext ${body.hasNext}`;
}

$('next').addEventListener('click', () => {
  state.offset += state.limit;
  listUsers();
});
$('previous').addEventListener('click', () => {
  state.offset = Math.max(0, state.offset - state.limit);
  listUsers();
});
$('fields').addEventListener('change', () => listUsers());

// 3. A conditional GET.
$('get-user').addEventListener('click', async () => {
  const path = `/v1/users/${state.user.id_str}`;
  const { response, body } = await call('GET', path);
  showAnswer('answer-conditional', `GET ${path}`, response, body);
  state.etag = response.headers.get('etag');
  $('get-user-again').disabled = state.etag === null;
});
$('get-user-again').addEventListener('click', async () => {
  const path = `/v1/users/${state.user.id_str}`;
  // A script's own conditional request: with `cache: 'no-store'` the browser
  // would add `Cache-Control: no-cache`, which asks for a full answer; this
  // header (allowed by the API's CORS policy) keeps the request conditional.
  const { response, body } = await call('GET', path, {
    headers: { 'If-None-Match': state.etag, 'Cache-Control': 'max-age=0' },
  });
  showAnswer('answer-conditional', `GET ${path}\nIf-None-Match: ${state.etag}`, response, body);
});

// 4. An edit with the CSRF token and If-Match.
async function patchName(etag) {
  const path = `/v1/users/${state.user.id_str}`;
  const name = new FormData($('edit')).get('name');
  const { response, body } = await call('PATCH', path, {
    headers: { 'CSRF-Token': state.csrfToken, 'If-Match': etag },
    body: { name },
  });
  showAnswer('answer-edit', `PATCH ${path}\nCSRF-Token: ${state.csrfToken.slice(0, 12)}…\nIf-Match: ${etag}`, response, body);
  return response;
}
$('edit').addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!state.etag) {
    const { response } = await call('GET', `/v1/users/${state.user.id_str}`);
    state.etag = response.headers.get('etag');
  }
  const response = await patchName(state.etag);
  if (response.ok) {
    state.staleEtag = state.etag;
    state.etag = response.headers.get('etag');
    $('save-stale').disabled = false;
  }
});
$('save-stale').addEventListener('click', () => patchName(state.staleEtag));

// 6. A refused cross-origin call, made by this page from another origin.
const refusedOrigin = `${location.protocol}//${location.hostname === 'localhost' ? '127.0.0.1' : 'localhost'}:${location.port}`;
$('refused-origin').textContent = refusedOrigin;
window.addEventListener('message', (event) => {
  if (event.origin !== refusedOrigin) return;
  $('answer-cross-origin').textContent = [
    `GET /v1/users?limit=1 from ${refusedOrigin}`,
    `→ ${event.data.result}`,
    '',
    'The browser refused it: no Access-Control-Allow-Origin for this origin.',
  ].join('\n');
});
$('cross-origin').addEventListener('click', () => {
  $('refused-frame').src = `${refusedOrigin}/refused.html?parent=${encodeURIComponent(location.origin)}`;
});

// 7. Sign out. The browser acts on Clear-Site-Data itself and does not hand
// it to scripts; what it did shows in the next call: the cookie is gone.
$('sign-out').addEventListener('click', async () => {
  const { response } = await call('DELETE', '/v1/sessions/current', { headers: { 'CSRF-Token': state.csrfToken } });
  if (!response.ok) {
    showAnswer('answer-sign-out', 'DELETE /v1/sessions/current', response);
    return;
  }
  state.csrfToken = undefined;
  const after = await call('GET', '/v1/sessions/current', { headers: { 'X-Requested-With': 'XMLHttpRequest' } });
  showAnswer('answer-sign-out', 'DELETE /v1/sessions/current', response);
  $('answer-sign-out').textContent += [
    '',
    'clear-site-data: "cache", "cookies", "storage"  (sent, then applied by the browser: not readable by scripts)',
    '',
    `GET /v1/sessions/current afterwards → ${after.response.status} ${after.body?.errors?.[0]?.message ?? ''}`,
  ].join('\n');
  status('Signed out.');
});

document.body.dataset.ready = 'true';
