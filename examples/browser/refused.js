// Loaded from an origin the API does not allow: tries one credentialed
// call and tells the page that framed it what the browser answered.
const parent = new URLSearchParams(location.search).get('parent');
const { apiUrl } = await (await fetch('/config.json')).json();
let result;
try {
  const response = await fetch(`${apiUrl}/v1/users?limit=1`, { credentials: 'include' });
  result = `read by the script: ${response.status}`;
} catch (error) {
  result = `${error.name}: ${error.message}`;
}
if (parent) window.parent.postMessage({ result }, parent);
