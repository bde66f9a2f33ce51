// Express 4, installed under the alias `express4` so tests can prove that
// the middlewares work on both major versions. Its API is typed like 5's for
// what the tests use.
declare module 'express4' {
  import express = require('express');
  export = express;
}
