export async function stormSection() {
  return { markdown: '## Login storm\n\nNot measured yet: needs the token endpoint (oauth2).', targets: [] };
}
