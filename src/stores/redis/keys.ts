/**
 * One key-naming scheme for every Redis store: `<prefix><kind>:<id>`, where
 * `prefix` is the store's `prefix` option (it keeps stores and other data
 * apart) and `kind` names the record (`user`, `client`, `rt`, `family`, ...).
 *
 * Redis Cluster places a key in one of 16384 hash slots by the CRC16 of the
 * key, or, when the key holds `{...}`, of the first non-empty text between
 * the braces (its hash tag). A script may only touch keys of one slot, so
 * the keys one script touches together carry the same hash tag:
 * `<prefix>family:{<family id>}`. A `{` in the prefix puts every key of the
 * store in one slot: still correct, but it gives up spreading the load.
 */
export function redisKey(prefix: string, kind: string, id: string): string {
  return `${prefix}${kind}:${id}`;
}

/** A key whose slot is decided by `tag` alone: every key built with the same tag shares a slot. */
export function taggedKey(prefix: string, kind: string, tag: string): string {
  return `${prefix}${kind}:{${tag}}`;
}

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/**
 * The Redis Cluster hash slot of `key` (CRC16/XMODEM of its hash tag, or of
 * the whole key, modulo 16384), as the cluster computes it: for tests and
 * checks that several keys share a slot.
 */
export function hashSlot(key: string): number {
  let bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (CRC16_TABLE[((crc >> 8) ^ byte) & 0xff] as number);
  return crc % 16384;
}

/** The hash tag of `key` (the text between its first `{` and the `}` after it, when not empty), else the whole key. */
const slotText = (key: string): string => {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
};

/**
 * Whether every key lies in one hash slot, so that one script may touch
 * them on a Redis Cluster: at once when they carry the same hash tag (the
 * counter keys of one identity do, counter-keys.ts), else by their slots.
 */
export function sharesSlot(keys: readonly string[]): boolean {
  const first = keys[0];
  if (first === undefined) return true;
  const text = slotText(first);
  let slot: number | undefined;
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    if (slotText(key) === text) continue;
    slot ??= hashSlot(first);
    if (hashSlot(key) !== slot) return false;
  }
  return true;
}
