// Micro-benchmark: the entity tag of a JSON body. Express's default path
// (the `etag` package's weak tag: Buffer.from, then createHash('sha1')),
// against ours (`bodyEntityTag()`, when the build has it) and a bare
// one-shot crypto.hash('sha1'), on 400 B, 10 KB and 1 MB bodies.
import { hash } from 'node:crypto';
import etag from 'etag';
import { loadLibrary } from '../lib/library.mjs';
import { compare } from '../lib/micro.mjs';
import { USER } from '../lib/payload.mjs';

const bodyOf = (bytes) => {
  const users = [];
  let text = JSON.stringify({ users });
  while (text.length < bytes) {
    users.push({ ...USER, id: USER.id + users.length });
    text = JSON.stringify({ users });
  }
  return bytes <= 400 ? JSON.stringify(USER) : text;
};

export const ETAG_SIZES = [
  { name: '400 B', body: bodyOf(400) },
  { name: '10 KB', body: bodyOf(10_000) },
  { name: '1 MB', body: bodyOf(1_000_000) },
];

// What Express 5 runs for its default `etag` setting ('weak'): the body,
// a string, becomes a Buffer first, then the etag package hashes it.
const expressDefault = (body) => etag(Buffer.from(body, 'utf8'), { weak: true });

export async function runEtag() {
  const library = await loadLibrary();
  const ours = typeof library.bodyEntityTag === 'function' ? library.bodyEntityTag : undefined;
  return ETAG_SIZES.map(({ name, body }) => {
    const candidates = { express: () => expressDefault(body), 'crypto.hash': () => hash('sha1', body, 'base64url') };
    if (ours) candidates.ours = () => ours(body);
    const rows = compare(candidates, 'express', body.length > 100_000 ? { batches: 15, batchMs: 20 } : undefined);
    const by = Object.fromEntries(rows.map((r) => [r.name, r]));
    return { name, bytes: Buffer.byteLength(body), express: by.express, hash: by['crypto.hash'], ours: by.ours };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await runEtag()) {
    const cell = (r) => (r ? `${r.ns.toFixed(0)} ns (${r.ratio.toFixed(2)}x)` : 'n/a');
    console.log(`${row.name.padEnd(6)} express ${cell(row.express)}  crypto.hash ${cell(row.hash)}  ours ${cell(row.ours)}`);
  }
}
