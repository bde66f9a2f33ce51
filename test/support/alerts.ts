import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The alerts of docs/observability.md ("Alerts"), as written there: each a
 * `promql` or `jq` code block whose first line is `# <name>: <what it means>`.
 * The tests run them as they are, so that the docs suggest only queries that
 * fire during the attack they name.
 */

const DOC = join(__dirname, '..', '..', 'docs', 'observability.md');

export interface DocumentedAlert {
  readonly name: string;
  readonly language: 'promql' | 'jq';
  /** The query, its naming comment left out. */
  readonly query: string;
}

export function documentedAlerts(): DocumentedAlert[] {
  const text = readFileSync(DOC, 'utf8');
  return [...text.matchAll(/```(promql|jq)\n# ([a-z-]+): [^\n]*\n([\s\S]*?)```/g)].map(([, language, name, query]) => ({
    name: name as string,
    language: language as 'promql' | 'jq',
    query: (query as string).trim(),
  }));
}

/** One documented alert's query, by its name; throws when the docs lost it. */
export function documentedAlert(name: string): string {
  const found = documentedAlerts().find((alert) => alert.name === name);
  if (found === undefined) throw new Error(`docs/observability.md has no alert "${name}"`);
  return found.query;
}
