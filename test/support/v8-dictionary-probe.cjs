// Run by test/dictionary-mode.test.ts as
//   node --allow-natives-syntax test/support/v8-dictionary-probe.cjs <library dir>
// (a fresh transpile of src/). It asks V8 itself what the preset's
// dictionary mode rests on and what it does, on Express 5 and 4 and on plain
// node:http, and prints the facts as one JSON object.
const http = require('node:http');
const path = require('node:path');

const libraryDir = path.resolve(process.argv[2]);
const { conventions } = require(path.join(libraryDir, 'index.js'));
const { ownMethod } = require(path.join(libraryDir, 'http', 'response-state.js'));
const { toDictionary } = require(path.join(libraryDir, 'http', 'dictionary-mode.js'));

// The natives are parsed here, under the flag; the rest of the script is plain JavaScript.
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');

/** Serves `handlerFor(seen)` and sends it two GETs, one after the other; resolves with what each request's route saw. */
async function twoRequests(handlerFor) {
  const seen = [];
  const server = http.createServer(handlerFor(seen));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/v1/items`;
  try {
    for (let i = 0; i < 2; i++) {
      const answer = await fetch(url);
      if (answer.status !== 200) throw new Error(`${url}: ${answer.status} ${await answer.text()}`);
    }
  } finally {
    server.closeAllConnections();
    server.close();
  }
  return seen;
}

/** An Express app (`express`, 4 or 5) with `middleware` in front of one JSON route, as objects the route saw. */
const expressApp = (express, middleware) => (seen) => {
  const app = express();
  if (middleware.length > 0) app.use(...middleware);
  app.get('/v1/items', (req, res) => {
    seen.push({
      req,
      res,
      requestPrototype: Object.getPrototypeOf(req) === app.request,
      responsePrototype: Object.getPrototypeOf(res) === app.response,
    });
    res.json({ items: [] });
  });
  return app;
};

const facts = (seen) => ({
  requestPrototype: seen.every((s) => s.requestPrototype),
  responsePrototype: seen.every((s) => s.responsePrototype),
  requestFast: seen.map((s) => hasFastProperties(s.req)),
  responseFast: seen.map((s) => hasFastProperties(s.res)),
  responsesShareMap: haveSameMap(seen[0].res, seen[1].res),
  requestsShareMap: haveSameMap(seen[0].req, seen[1].req),
});

async function main() {
  const report = {};
  for (const [version, name] of [
    ['Express 5', 'express'],
    ['Express 4', 'express4'],
  ]) {
    const express = require(name);
    report[version] = {
      bare: facts(await twoRequests(expressApp(express, []))),
      preset: facts(await twoRequests(expressApp(express, conventions({ responseLinter: false })))),
      switchedOff: facts(await twoRequests(expressApp(express, conventions({ responseLinter: false, dictionaryMode: false })))),
    };
  }
  const plain = await twoRequests((seen) => (req, res) => {
    toDictionary(req, 'request');
    ownMethod(res, 'json', () => undefined);
    seen.push({ req, res });
    res.end('{}');
  });
  report['node:http'] = {
    requestFast: plain.map((s) => hasFastProperties(s.req)),
    responseFast: plain.map((s) => hasFastProperties(s.res)),
    responsesShareMap: haveSameMap(plain[0].res, plain[1].res),
  };
  process.stdout.write(JSON.stringify(report));
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exitCode = 1;
});
