import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The grant vocabulary is the authorization server's (docs/extend.md): the
 * library's sources name no grant type and no token path, so adding a grant
 * or moving an endpoint is a change of that package alone.
 *
 * What counts, precisely:
 * - a grant type: a string in the code (a string literal, or a piece of a
 *   template) that is exactly one of RFC 6749's grant type values
 *   (`password`, `refresh_token`, `authorization_code`,
 *   `client_credentials`), an extension grant's URI
 *   (`urn:ietf:params:oauth:grant-type:…`), or that holds the parameter name
 *   `grant_type`. Words in comments and longer strings that merely contain
 *   "password" (a metric's description) are not grant types;
 * - a token path: `/v1/oauth2/` anywhere in the text, comments included.
 *
 * One use is not a grant and is allowed by name: `PROTOCOL_KEYS` of the
 * response linter (src/lint/body-rules.ts) lists `refresh_token` as a key of
 * the token response (RFC 6749 §5.1) that the conventions write in
 * snake_case.
 */

const ROOT = resolve(__dirname, '..', '..');
const GRANT_TYPES = new Set(['password', 'refresh_token', 'authorization_code', 'client_credentials']);
const EXTENSION_GRANT = 'urn:ietf:params:oauth:grant-type:';
const TOKEN_PATH_PREFIX = '/v1/oauth2/';

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });

const namesGrant = (text: string): boolean =>
  GRANT_TYPES.has(text) || text.includes(EXTENSION_GRANT) || text.includes('grant_type');

/** Whether a string node is an element of the response linter's `PROTOCOL_KEYS` array. */
function isProtocolKey(node: ts.Node): boolean {
  const array = node.parent;
  const declaration = ts.isArrayLiteralExpression(array) ? array.parent?.parent : undefined;
  return declaration !== undefined && ts.isVariableDeclaration(declaration) && declaration.name.getText() === 'PROTOCOL_KEYS';
}

/** Each grant type and token path one source names, as `file:line: text`. */
function findings(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const where = (position: number) => `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(position).line + 1}`;
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const isString =
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node);
    if (isString && namesGrant(node.text) && !isProtocolKey(node)) found.push(`${where(node.getStart())}: '${node.text}'`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (let at = text.indexOf(TOKEN_PATH_PREFIX); at !== -1; at = text.indexOf(TOKEN_PATH_PREFIX, at + 1)) {
    found.push(`${where(at)}: ${TOKEN_PATH_PREFIX}`);
  }
  return found;
}

describe("the grant vocabulary is the authorization server's", () => {
  it('the library (src/) names no grant type and no token path', () => {
    expect(sourceFiles(join(ROOT, 'src')).flatMap(findings)).toEqual([]);
  });

  it("finds each grant type and the token path in the authorization server's sources (the check can fail)", () => {
    const found = sourceFiles(join(ROOT, 'authorization-server/src')).flatMap(findings).join('\n');
    for (const grant of GRANT_TYPES) expect(found).toContain(`'${grant}'`);
    expect(found).toContain(TOKEN_PATH_PREFIX);
  });

  it('tells a grant type from a word: a comment, a longer string and the token response key pass', () => {
    const probe = join(ROOT, 'test/fixtures/grant-vocabulary-probe.ts');
    expect(findings(probe).map((line) => line.replace(/^[^:]+:\d+: /, ''))).toEqual([
      "'client_credentials'",
      "'grant_type'",
      "'urn:ietf:params:oauth:grant-type:token-exchange'",
      '/v1/oauth2/',
      '/v1/oauth2/',
    ]);
  });
});
