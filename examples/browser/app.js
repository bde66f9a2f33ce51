// The reference server's browser page: signs in through the token endpoint
// (OAuth 2.0 password grant), then lists users with the bearer token, from
// another origin, with `credentials: 'include'`: the API's CORS policy must
// answer the preflight and allow credentials for this origin.

const status = document.getElementById('status');
const table = document.getElementById('users');
const more = document.getElementById('more');

const show = (text, isError = false) => {
  status.textContent = text;
  status.className = isError ? 'error' : '';
};

const config = await (await fetch('/config.json')).json();

async function signIn(username, password) {
  const response = await fetch(`${config.apiUrl}/v1/oauth2/token`, {
    method: 'POST',
    credentials: 'include',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username, password, client_id: config.clientId }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error_description ?? body.error ?? `token endpoint answered ${response.status}`);
  return body.access_token;
}

async function listUsers(accessToken) {
  const response = await fetch(`${config.apiUrl}/v1/users?limit=10`, {
    credentials: 'include',
    headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' },
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body.errors?.[0]?.message ?? `users answered ${response.status}`);
  return body;
}

function render({ users, hasNext }) {
  const rows = users.map((user) => {
    const row = document.createElement('tr');
    // id_str, not id: a JavaScript number cannot hold a 64-bit id exactly.
    for (const value of [user.id_str, user.name, user.email, user.gender, user.createdAt]) {
      const cell = document.createElement('td');
      cell.textContent = value;
      row.append(cell);
    }
    return row;
  });
  table.tBodies[0].replaceChildren(...rows);
  table.hidden = false;
  more.hidden = !hasNext;
}

document.getElementById('sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  try {
    show('Signing in…');
    const token = await signIn(form.get('username'), form.get('password'));
    const page = await listUsers(token);
    render(page);
    show(`Signed in. ${page.users.length} users shown.`);
  } catch (error) {
    table.hidden = true;
    show(`Failed: ${error.message}`, true);
  }
});

document.body.dataset.ready = 'true';
