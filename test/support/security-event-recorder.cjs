'use strict';
// Preloaded into a server process (NODE_OPTIONS=--require): the diagnostics
// channel is per process, so a test that drives the reference server over
// HTTP reads its security events from here, one JSON line each, in
// SECURITY_EVENTS_FILE. Synchronous, so an event is written before the
// answer of its request leaves.
const { subscribe } = require('node:diagnostics_channel');
const { appendFileSync } = require('node:fs');

const file = process.env.SECURITY_EVENTS_FILE;
if (file) {
  subscribe('express-api-conventions:security', (event) => {
    appendFileSync(file, `${JSON.stringify(event)}\n`);
  });
}
