// Micro-benchmark: stringifyJson() (docs/conventions.md rules
// 9.2 and 2.9: `<`/`>` escaped, bigints exact) against plain JSON.stringify on the same data.
import { idPair, stringifyJson } from '../../dist/esm/json/index.js';
import { compare } from '../lib/micro.mjs';
import { USER } from '../lib/payload.mjs';

const list = (one) => ({ users: Array.from({ length: 100 }, (_, i) => one(i)), hasNext: true });

const plainUser = (i = 0) => ({ ...USER, id: USER.id + i, id_str: String(USER.id + i) });
const angledUser = (i = 0) => ({ ...plainUser(i), bio: '<b>Mathematician</b> & writer, <i>notes</i> on the Analytical Engine.' });
// Identifiers above 2^53, as the reference server's are: the case that needs
// the exact-integer path (ids within 2^53 are written as plain numbers).
const BIG_ID = 9223372036854775000n;
const pairedUser = (i = 0) => ({ ...USER, ...idPair(BIG_ID + BigInt(i)) });
const rawBigintUser = (i = 0) => ({ ...USER, id: BIG_ID + BigInt(i), id_str: String(BIG_ID + BigInt(i)) });
// What JSON.stringify is given for the bigint cases: the same ids as doubles,
// which JSON.stringify writes with as many digits, so both texts are as long.
const numberUser = (i = 0) => ({ ...USER, id: Number(BIG_ID + BigInt(i)), id_str: String(BIG_ID + BigInt(i)) });

/** The cases and their targets: time of stringifyJson / time of JSON.stringify. */
export const SERIALIZER_CASES = [
  { name: '400 B user, no < >', data: plainUser(), baseline: plainUser(), target: 1.15 },
  { name: '100-item list, no < >', data: list(plainUser), baseline: list(plainUser), target: 1.15 },
  { name: '400 B user, with < >', data: angledUser(), baseline: angledUser(), target: 1.5 },
  { name: '100-item list, with < >', data: list(angledUser), baseline: list(angledUser), target: 1.5 },
  { name: '400 B user, idPair() id > 2^53', data: pairedUser(), baseline: numberUser(), target: 1.5 },
  { name: '100-item list, idPair() ids > 2^53', data: list(pairedUser), baseline: list(numberUser), target: 1.5 },
  { name: '400 B user, raw bigint id > 2^53', data: rawBigintUser(), baseline: numberUser(), target: 1.5 },
  { name: '100-item list, raw bigint ids > 2^53', data: list(rawBigintUser), baseline: list(numberUser), target: 1.5 },
];

export function runSerializer(options) {
  return SERIALIZER_CASES.map(({ name, data, baseline, target }) => {
    const [ours, plain] = compare(
      { stringifyJson: () => stringifyJson(data), 'JSON.stringify': () => JSON.stringify(baseline) },
      'JSON.stringify',
      options,
    );
    return { name, bytes: stringifyJson(data).length, oursNs: ours.ns, plainNs: plain.ns, ratio: ours.ratio, target };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of runSerializer()) {
    console.log(
      `${row.name.padEnd(38)} ${String(row.bytes).padStart(6)} B  ours ${row.oursNs.toFixed(0).padStart(7)} ns  plain ${row.plainNs.toFixed(0).padStart(7)} ns  ${row.ratio.toFixed(2)}x (target <= ${row.target})`,
    );
  }
}
