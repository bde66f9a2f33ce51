/**
 * What client input may add to an error body. Messages and `detail` echo
 * what the client sent (a parameter's value, unknown field names, an
 * origin); bounded here, once, where every error body is built, so that no
 * request can make its error answer as large as itself.
 */
export const REFLECTED_INPUT_LIMITS = {
  /** Longest `message` (and `field`) of one error item, in characters; longer ones end with `…`. */
  message: 300,
  /** Most items in `errors`; the rest are summed up in one last item. */
  items: 20,
  /** Longest string inside `detail`, in characters. */
  detailString: 200,
  /** Most elements of an array (or keys of an object) inside `detail`. */
  detailEntries: 20,
  /** Deepest nesting inside `detail`. */
  detailDepth: 4,
  /** Characters of strings and keys `detail` may hold in all. */
  detailTotal: 2048,
} as const;

const ELLIPSIS = '…';

/** `text` cut to `max` characters, ending with `…` when cut (never inside a surrogate pair). */
export function shortened(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const unit = text.charCodeAt(end - 1);
  if (unit >= 0xd800 && unit <= 0xdbff) end -= 1;
  return text.slice(0, end) + ELLIPSIS;
}

interface Budget {
  left: number;
}

function boundValue(value: unknown, budget: Budget, depth: number): unknown {
  if (typeof value === 'string') {
    const text = shortened(value, Math.max(1, Math.min(REFLECTED_INPUT_LIMITS.detailString, budget.left)));
    budget.left -= text.length;
    return text;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= REFLECTED_INPUT_LIMITS.detailDepth) return ELLIPSIS;
  const max = REFLECTED_INPUT_LIMITS.detailEntries;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      if (i >= max || budget.left <= 0) {
        out.push(`${ELLIPSIS} ${value.length - i} more`);
        break;
      }
      out.push(boundValue(value[i], budget, depth + 1));
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  const entries = Object.entries(value);
  for (let i = 0; i < entries.length; i++) {
    const [key, inner] = entries[i] as [string, unknown];
    if (i >= max || budget.left <= 0) {
      out[ELLIPSIS] = `${entries.length - i} more`;
      break;
    }
    const name = shortened(key, REFLECTED_INPUT_LIMITS.detailString);
    budget.left -= name.length;
    out[name] = boundValue(inner, budget, depth + 1);
  }
  return out;
}

/** `detail` within REFLECTED_INPUT_LIMITS: strings cut, long lists and deep nesting summed up. */
export function boundedDetail(detail: unknown): unknown {
  return boundValue(detail, { left: REFLECTED_INPUT_LIMITS.detailTotal }, 0);
}

/** One error item with its `message` and `field` cut to REFLECTED_INPUT_LIMITS.message. */
export function boundedItem<T extends { message: string; field?: string }>(item: T): T {
  const max = REFLECTED_INPUT_LIMITS.message;
  if (item.message.length <= max && (item.field === undefined || item.field.length <= max)) return { ...item };
  const bounded = { ...item, message: shortened(item.message, max) };
  if (item.field !== undefined) bounded.field = shortened(item.field, max);
  return bounded;
}
