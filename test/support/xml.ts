/**
 * A strict little XML reader for the tests: elements, attributes, text and
 * the five predefined entities (plus numeric references). It throws on
 * anything not well-formed (a tag closed out of order, a bare `&` or `<`,
 * an unquoted attribute, content after the root), so a test that reads the
 * checker's JUnit output proves the output is XML, not just XML-looking.
 */
export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(text: string): string {
  if (/[<]/.test(text)) throw new Error(`a raw < in ${JSON.stringify(text)}`);
  return text.replace(/&([^;\s]*);?/g, (whole, name: string) => {
    if (!whole.endsWith(';')) throw new Error(`a bare & in ${JSON.stringify(text)}`);
    if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    const value = ENTITIES[name];
    if (value === undefined) throw new Error(`an unknown entity &${name};`);
    return value;
  });
}

const NAME = '[A-Za-z_][\\w.-]*';

export function parseXml(source: string): XmlElement {
  let rest = source.replace(/^<\?xml[^?]*\?>\s*/, '');
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (rest.length > 0) {
    const open = rest.indexOf('<');
    const text = open === -1 ? rest : rest.slice(0, open);
    if (text.length > 0) {
      const top = stack[stack.length - 1];
      if (!top) {
        if (text.trim() !== '') throw new Error(`text outside the root: ${JSON.stringify(text)}`);
      } else top.text += decode(text);
    }
    if (open === -1) break;
    rest = rest.slice(open);
    const close = new RegExp(`^</(${NAME})\\s*>`).exec(rest);
    if (close) {
      const top = stack.pop();
      if (!top || top.name !== close[1]) throw new Error(`</${close[1]}> closes <${top?.name ?? '(nothing)'}>`);
      rest = rest.slice(close[0].length);
      continue;
    }
    const tag = new RegExp(`^<(${NAME})((?:\\s+${NAME}\\s*=\\s*"[^"]*")*)\\s*(/?)>`).exec(rest);
    if (!tag) throw new Error(`not a tag: ${JSON.stringify(rest.slice(0, 40))}`);
    if (root && stack.length === 0) throw new Error('a second root element');
    const attributes: Record<string, string> = {};
    for (const match of (tag[2] ?? '').matchAll(new RegExp(`(${NAME})\\s*=\\s*"([^"]*)"`, 'g'))) {
      if ((match[1] as string) in attributes) throw new Error(`attribute ${match[1]} twice`);
      attributes[match[1] as string] = decode(match[2] as string);
    }
    const element: XmlElement = { name: tag[1] as string, attributes, children: [], text: '' };
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(element);
    else root = element;
    if (tag[3] !== '/') stack.push(element);
    rest = rest.slice(tag[0].length);
  }
  if (!root || stack.length > 0) throw new Error(`unclosed <${stack[stack.length - 1]?.name ?? 'root'}>`);
  return root;
}
